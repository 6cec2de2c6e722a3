package core

import (
	"encoding/base64"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// listParams reads the cursor of a list request. Params that are not an object are -32602.
func listParams(c *Call) (string, error) {
	var p struct {
		Cursor jsontext.Value `json:"cursor"`
	}
	if err := objectParams(c, &p); err != nil {
		return "", err
	}
	if p.Cursor == nil || p.Cursor.Kind() == 'n' {
		return "", nil
	}
	var cursor string
	if p.Cursor.Kind() != '"' || unmarshal(p.Cursor, &cursor) != nil || cursor == "" {
		return "", jsonrpc.InvalidParams("Invalid cursor")
	}
	return cursor, nil
}

// Cursors are opaque to clients: the offset of the next page, encoded. A cursor the server did
// not make, or one past the end of the list, is -32602 "Invalid cursor".
const cursorPrefix = "mcpkit:"

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

func decodeCursor(cursor string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) <= len(cursorPrefix) || string(b[:len(cursorPrefix)]) != cursorPrefix {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[len(cursorPrefix):]))
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// paginate returns one page of items starting at cursor and the cursor of the next page.
func paginate[T any](items []T, cursor string, size int) ([]T, string, error) {
	start := 0
	if cursor != "" {
		n, ok := decodeCursor(cursor)
		if !ok || n >= len(items) {
			return nil, "", jsonrpc.InvalidParams("Invalid cursor")
		}
		start = n
	}
	end := start + size
	if end >= len(items) {
		return items[start:], "", nil
	}
	return items[start:end], encodeCursor(end), nil
}

// listPage serves one page of a list method: the cursor from the params, a snapshot of the
// registry taken under the server's read lock, the entries the caller may see (own is an
// entry's own predicate, view describes one for the filters), and the page's entries turned
// into wire items. filtered reports whether the caller's view was filtered. Cursors count the
// entries the caller sees, so they reveal nothing of hidden ones and no page is empty.
func listPage[E, T any](c *Call, reg *registry[E], item func(E) T, own func(E) Visibility, view func(*View, E)) (_ []T, next string, filtered bool, _ error) {
	cursor, err := listParams(c)
	if err != nil {
		return nil, "", false, err
	}
	s := c.session.server
	s.mu.RLock()
	entries := reg.values()
	s.mu.RUnlock()
	if vw := viewerOf(c); guarded(vw, entries, own) {
		entries, filtered = filterVisible(c, vw, entries, own, view), true
	}
	page, next, err := paginate(entries, cursor, s.opts.PageSize)
	if err != nil {
		return nil, "", false, err
	}
	items := make([]T, len(page))
	for i, e := range page {
		items[i] = item(e)
	}
	return items, next, filtered, nil
}

// Page returns the page of items a list request asks for (the cursor of its params) at the
// server's page size (Options.PageSize), and the cursor of the next page ("" on the last one):
// the pagination of core's list methods, for an extension's. Params that are not an object and a
// cursor the server did not make are -32602.
func Page[T any](c *Call, items []T) (page []T, next string, err error) {
	cursor, err := listParams(c)
	if err != nil {
		return nil, "", err
	}
	return paginate(items, cursor, c.session.server.opts.PageSize)
}
