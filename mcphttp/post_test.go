package mcphttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

const (
	msgNotAcceptableBoth = "Not Acceptable: Accept header must include application/json and text/event-stream"
	msgNotAcceptableJSON = "Not Acceptable: Accept header must include application/json"
	msgNotAcceptableSSE  = "Not Acceptable: Accept header must include text/event-stream"
	msgUnsupportedMedia  = "Unsupported Media Type: Content-Type must be application/json"
	msgParse             = "Parse error"
	msgNotObject         = "Invalid Request: JSON-RPC body must be a single request object"
	msgMissingSession    = "Missing session ID"
	msgNotFound          = "Session not found"
	msgForbidden         = "Forbidden: session request validation failed"
	msgInitialized       = "Invalid Request: Server already initialized"
	msgInFlight          = "Conflict: Request id is already in flight for this session"
	msgOneStream         = "Conflict: Only one SSE stream is allowed per session"
	msgMethodNotAllowed  = "Method not allowed"
	msgShuttingDown      = "Service unavailable: the server is shutting down"
	msgBadVersionPrefix  = "Bad Request: Unsupported protocol version: "
	msgSupportedSuffix   = ". Supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
)

var ping = testutil.Request("p-1", "ping", nil)

// Row 1: the Accept header, checked before anything else about the request.
func TestPostNotAcceptable(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	cases := []struct {
		name, accept string
		ok           bool
	}{
		{"json only", "application/json", false},
		{"event stream only", "text/event-stream", false},
		{"none", "", false},
		{"unrelated", "text/html", false},
		{"both", "application/json, text/event-stream", true},
		{"both, odd case and parameters", "Application/JSON;q=0.9 ,  TEXT/Event-Stream; charset=utf-8", true},
		{"wildcard", "*/*", true},
		{"wildcard among others", "text/html, */*;q=0.1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := c.NewPost(context.Background(), ping)
			if tc.accept == "" {
				req.Header.Del("Accept")
			} else {
				req.Header.Set("Accept", tc.accept)
			}
			rep := c.Do(t, req)
			if tc.ok {
				if rep.Status != http.StatusOK {
					t.Fatalf("status %d, want 200: %s", rep.Status, rep.Body)
				}
				wantResult(t, rep.Message(t), `"p-1"`)
				return
			}
			rep.WantError(t, http.StatusNotAcceptable, -32600, msgNotAcceptableBoth, "null")
		})
	}
	// 406 comes first: before 415, and before the session checks.
	f.raw(t, http.MethodPost, ping, "Content-Type", "text/plain", "Accept", "application/json").
		WantError(t, http.StatusNotAcceptable, -32600, msgNotAcceptableBoth, "null")
	f.raw(t, http.MethodPost, ping, "Accept", "application/json").
		WantError(t, http.StatusNotAcceptable, -32600, msgNotAcceptableBoth, "null")
}

func TestPostNotAcceptableJSONMode(t *testing.T) {
	f := newFixture(t, mcphttp.Options{JSONResponse: true})
	c := f.client()
	c.Accept = "application/json"
	c.Initialize(t) // application/json alone suffices
	rep := c.Post(t, ping)
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("JSON mode with Accept application/json: %d %s", rep.Status, rep.Header.Get("Content-Type"))
	}
	c.Accept = "*/*"
	if rep := c.Post(t, ping); rep.Status != http.StatusOK {
		t.Fatalf("*/* in JSON mode: %d %s", rep.Status, rep.Body)
	}
	c.Accept = "text/event-stream"
	c.Post(t, ping).WantError(t, http.StatusNotAcceptable, -32600, msgNotAcceptableJSON, "null")
}

// Rows 2-5: what the decode layer answers, through the whole stack.
func TestPostBodyErrors(t *testing.T) {
	f := newFixture(t, mcphttp.Options{MaxRequestBytes: 1024})
	c := f.initialized(t)
	accept := testutil.AcceptBoth
	sid := c.SessionID

	f.raw(t, http.MethodPost, ping, "Accept", accept, "Content-Type", "text/plain", "Mcp-Session-Id", sid).
		WantError(t, http.StatusUnsupportedMediaType, -32600, msgUnsupportedMedia, "null")
	f.raw(t, http.MethodPost, ping, "Accept", accept, "Content-Type", "", "Mcp-Session-Id", sid).
		WantError(t, http.StatusUnsupportedMediaType, -32600, msgUnsupportedMedia, "null")
	if rep := f.raw(t, http.MethodPost, ping, "Accept", accept, "Content-Type", "Application/JSON; charset=utf-8", "Mcp-Session-Id", sid); rep.Status != http.StatusOK {
		t.Fatalf("Content-Type with parameters refused: %d %s", rep.Status, rep.Body)
	}

	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	f.raw(t, http.MethodPost, big, "Accept", accept, "Mcp-Session-Id", sid).
		WantError(t, http.StatusRequestEntityTooLarge, -32600, "Payload too large: request body exceeds 1024 bytes", "null")

	for _, body := range []string{`{"jsonrpc":"2.0","id":1,`, `nope`, strings.Repeat("[", 65) + strings.Repeat("]", 65)} {
		f.raw(t, http.MethodPost, body, "Accept", accept, "Mcp-Session-Id", sid).
			WantError(t, http.StatusBadRequest, -32700, msgParse, "null")
	}
	deep := `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat("}", 70) + `}`
	f.raw(t, http.MethodPost, deep, "Accept", accept, "Mcp-Session-Id", sid).
		WantError(t, http.StatusBadRequest, -32700, msgParse, "null")

	for _, body := range []string{`[` + ping + `]`, `42`, `"ping"`, `null`} {
		f.raw(t, http.MethodPost, body, "Accept", accept, "Mcp-Session-Id", sid).
			WantError(t, http.StatusBadRequest, -32600, msgNotObject, "null")
	}
}

// Row 8: a non-initialize POST without a session.
func TestPostMissingSessionID(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.client()
	c.Post(t, ping).WantError(t, http.StatusBadRequest, -32600, msgMissingSession, `"p-1"`)
	c.Post(t, testutil.Request(12, "tools/list", nil)).WantError(t, http.StatusBadRequest, -32600, msgMissingSession, "12")
	c.Post(t, testutil.Notification("notifications/initialized", nil)).WantError(t, http.StatusBadRequest, -32600, msgMissingSession, "null")
	// Row 8 comes before row 9.
	f.raw(t, http.MethodPost, ping, "Accept", testutil.AcceptBoth, "MCP-Protocol-Version", "").
		WantError(t, http.StatusBadRequest, -32600, msgMissingSession, `"p-1"`)
}

// Row 9: MCP-Protocol-Version after initialize.
func TestPostUnsupportedProtocolVersion(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	f.raw(t, http.MethodPost, ping, "Accept", testutil.AcceptBoth, "Mcp-Session-Id", c.SessionID, "MCP-Protocol-Version", "").
		WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+msgSupportedSuffix, `"p-1"`)
	// A version the kit does not know, on a legacy session, is refused by the legacy lifecycle,
	// listing the versions that session can use (not 2026-07-28's -32022).
	for _, v := range []string{"1900-01-01", "2025-11-25,2025-06-18", "latest"} {
		f.raw(t, http.MethodPost, ping, "Accept", testutil.AcceptBoth, "Mcp-Session-Id", c.SessionID, "MCP-Protocol-Version", v).
			WantError(t, http.StatusBadRequest, -32600, "Bad Request: Unsupported protocol version: "+v+msgSupportedSuffix, `"p-1"`)
	}
	// Row 9 comes before the session lookup (rows 16-21).
	f.raw(t, http.MethodPost, ping, "Accept", testutil.AcceptBoth, "Mcp-Session-Id", "no-such-session", "MCP-Protocol-Version", "").
		WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+msgSupportedSuffix, `"p-1"`)
	// A missing header means 2025-03-26; every supported version passes.
	for _, v := range []string{"<none>", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		hdr := []string{"Accept", testutil.AcceptBoth, "Mcp-Session-Id", c.SessionID}
		if v != "<none>" {
			hdr = append(hdr, "MCP-Protocol-Version", v)
		}
		rep := f.raw(t, http.MethodPost, ping, hdr...)
		if rep.Status != http.StatusOK {
			t.Fatalf("version %s refused: %d %s", v, rep.Status, rep.Body)
		}
	}
	// initialize is exempt: it negotiates the version.
	rep := f.raw(t, http.MethodPost, testutil.Initialize(1, "2025-06-18"), "Accept", testutil.AcceptBoth, "MCP-Protocol-Version", "")
	if rep.Status != http.StatusOK || rep.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize with an empty version header: %d %s", rep.Status, rep.Body)
	}
}

// Rows 10, 11, 13, 14, 15: initialize.
func TestPostInitialize(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	store := f.h.Store()

	// Row 13: no id, no answer, no session.
	rep := f.client().Post(t, testutil.Request(nil, "initialize", testutil.InitializeParams("2025-11-25")))
	wantEmpty(t, rep, http.StatusAccepted)
	if rep.Header.Get("Mcp-Session-Id") != "" || store.Len() != 0 {
		t.Fatalf("id-less initialize created a session (header %q, Len %d)", rep.Header.Get("Mcp-Session-Id"), store.Len())
	}

	// Row 14: bad params, a JSON-RPC error with 200, no session.
	for _, params := range []any{
		map[string]any{"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}},
		json.RawMessage(`[]`),
	} {
		rep = f.client().Post(t, testutil.Request(4, "initialize", params))
		if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
			t.Fatalf("failed initialize: %d %q", rep.Status, rep.Header.Get("Content-Type"))
		}
		w := testutil.DecodeWire(t, rep.Body)
		if w.Error == nil || w.Error.Code != -32602 || string(w.ID) != "4" {
			t.Fatalf("failed initialize body: %s", rep.Body)
		}
		checkSchema(t, "JSONRPCErrorResponse", rep.Body)
		if rep.Header.Get("Mcp-Session-Id") != "" || store.Len() != 0 {
			t.Fatalf("failed initialize left a session (header %q, Len %d)", rep.Header.Get("Mcp-Session-Id"), store.Len())
		}
	}

	// Row 15: success: JSON (never SSE) and a visible-ASCII UUID session id.
	c := f.client()
	rep = c.Post(t, testutil.Initialize("init-1", "2025-11-25"))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("initialize: %d %q %s", rep.Status, rep.Header.Get("Content-Type"), rep.Body)
	}
	sid := rep.Header.Get("Mcp-Session-Id")
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(sid) {
		t.Fatalf("session id %q is not a UUID", sid)
	}
	w := testutil.DecodeWire(t, rep.Body)
	res := wantResult(t, w, `"init-1"`)
	checkSchema(t, "JSONRPCResultResponse", rep.Body)
	checkSchema(t, "InitializeResult", res)
	if store.Len() != 1 {
		t.Fatalf("Len = %d after initialize, want 1", store.Len())
	}
	c.SessionID = sid

	// Row 10: initialize on a live session.
	c.Post(t, testutil.Initialize(5, "2025-11-25")).WantError(t, http.StatusBadRequest, -32600, msgInitialized, "5")
	// Row 11: initialize naming an unknown session.
	c.SessionID = "no-such-session"
	c.Post(t, testutil.Initialize(6, "2025-11-25")).WantError(t, http.StatusNotFound, -32600, msgNotFound, "6")
	if store.Len() != 1 {
		t.Fatalf("Len = %d, want 1", store.Len())
	}
}

// Row 12: the cap, with in-line reclaim of an expired session before refusing.
func TestPostInitializeAtCap(t *testing.T) {
	clk := testutil.NewClock()
	f := newFixture(t, mcphttp.Options{Sessions: session.MemoryOptions{MaxSessions: 1, IdleTimeout: time.Minute, Now: clk.Now}})
	a := f.initialized(t)
	f.client().Post(t, testutil.Initialize(2, "2025-11-25")).
		WantError(t, http.StatusServiceUnavailable, -32603, "Service unavailable: maximum concurrent sessions (1) reached", "2")
	if n := f.h.Store().Len(); n != 1 {
		t.Fatalf("Len = %d after a refused initialize, want 1", n)
	}
	clk.Advance(2 * time.Minute) // a is now expired, but still held: only the cap check reclaims it
	if n := f.h.Store().Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	b := f.initialized(t)
	if b.SessionID == a.SessionID {
		t.Fatal("same session id twice")
	}
	a.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
	wantResult(t, b.Call(t, 1, "ping", nil), "1")
}

// Row 12 again, with a store built by hand and reaped explicitly.
func TestPostInitializeAfterReap(t *testing.T) {
	clk := testutil.NewClock()
	store := session.NewMemory(session.MemoryOptions{MaxSessions: 1, IdleTimeout: time.Minute, Now: clk.Now})
	f := newFixture(t, mcphttp.Options{Store: store})
	a := f.initialized(t)
	f.client().Post(t, testutil.Initialize(2, "2025-11-25")).
		WantError(t, http.StatusServiceUnavailable, -32603, "Service unavailable: maximum concurrent sessions (1) reached", "2")
	clk.Advance(61 * time.Second)
	if n := store.Reap(); n != 1 {
		t.Fatalf("Reap = %d, want 1", n)
	}
	if store.Len() != 0 {
		t.Fatalf("Len = %d after Reap", store.Len())
	}
	f.initialized(t)
	a.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
}

// Row 16: a session used by another principal than the one that opened it (or by nobody), on
// requests, notifications and client responses.
func TestPostForbidden(t *testing.T) {
	var user atomic.Value
	user.Store("alice")
	f := newFixture(t, mcphttp.Options{Principal: func(*http.Request) string { return user.Load().(string) }})
	c := f.initialized(t)
	user.Store("")
	c.Post(t, ping).WantError(t, http.StatusForbidden, -32600, msgForbidden, `"p-1"`)
	user.Store("bob")
	c.Post(t, ping).WantError(t, http.StatusForbidden, -32600, msgForbidden, `"p-1"`)
	c.Post(t, testutil.Notification("notifications/initialized", nil)).WantError(t, http.StatusForbidden, -32600, msgForbidden, "null")
	c.Post(t, testutil.Result("srv-1", map[string]any{})).WantError(t, http.StatusForbidden, -32600, msgForbidden, `"srv-1"`)
	// An unknown session is 404 whoever asks.
	u := f.client()
	u.SessionID = "no-such-session"
	u.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
	user.Store("alice")
	wantResult(t, c.Call(t, "p-2", "ping", nil), `"p-2"`)
}

// Row 16: the Origin recorded at initialize.
func TestPostOriginMismatch(t *testing.T) {
	f := newFixture(t, mcphttp.Options{Origin: middleware.OriginGuardOptions{AllowedOrigins: []string{"https://a.example", "https://b.example"}}})
	c := f.client()
	c.Header.Set("Origin", "https://a.example")
	c.Initialize(t)
	wantResult(t, c.Call(t, 1, "ping", nil), "1")

	c.Header.Set("Origin", "https://b.example")
	c.Post(t, ping).WantError(t, http.StatusForbidden, -32600, msgForbidden, `"p-1"`)
	c.Post(t, testutil.Notification("notifications/initialized", nil)).WantError(t, http.StatusForbidden, -32600, msgForbidden, "null")
	c.Do(t, c.NewRequest(context.Background(), http.MethodGet)).WantError(t, http.StatusForbidden, -32600, msgForbidden, "null")
	c.Do(t, c.NewRequest(context.Background(), http.MethodDelete)).WantError(t, http.StatusForbidden, -32600, msgForbidden, "null")

	c.Header.Del("Origin") // not a browser: no check
	wantResult(t, c.Call(t, 2, "ping", nil), "2")
	// An Origin the guard does not allow is refused before the session is looked at.
	c.Header.Set("Origin", "https://evil.example")
	c.Post(t, ping).WantError(t, http.StatusForbidden, -32600, "Forbidden: Invalid Origin header", "null")
}

// Rows 17-20: notifications and client responses.
func TestPostNotificationsAndResponses(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	note := testutil.Notification("notifications/initialized", nil)
	resp := testutil.Result("srv-1", map[string]any{})
	wantEmpty(t, c.Post(t, note), http.StatusAccepted)
	wantEmpty(t, c.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": 99})), http.StatusAccepted)
	wantEmpty(t, c.Post(t, resp), http.StatusAccepted)
	wantEmpty(t, c.Post(t, `{"jsonrpc":"2.0","id":"srv-2","error":{"code":-1,"message":"no"}}`), http.StatusAccepted)

	u := f.client()
	u.SessionID = "no-such-session"
	u.Post(t, note).WantError(t, http.StatusNotFound, -32600, msgNotFound, "null")
	u.Post(t, resp).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"srv-1"`)
}

// Row 21: an unknown, deleted or expired session.
func TestPostStaleSession(t *testing.T) {
	clk := testutil.NewClock()
	f := newFixture(t, mcphttp.Options{Sessions: session.MemoryOptions{IdleTimeout: time.Minute, Now: clk.Now}})
	u := f.client()
	u.SessionID = "2f1e7c9a-0000-4000-8000-000000000000"
	u.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)

	deleted := f.initialized(t)
	rep := deleted.Do(t, deleted.NewRequest(context.Background(), http.MethodDelete))
	if rep.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", rep.Status, rep.Body)
	}
	deleted.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)

	expired := f.initialized(t)
	clk.Advance(61 * time.Second)
	expired.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
}

// Idle expiry: requests renew a session, notifications and client responses do not.
func TestPostIdleRenewal(t *testing.T) {
	clk := testutil.NewClock()
	f := newFixture(t, mcphttp.Options{Sessions: session.MemoryOptions{IdleTimeout: time.Minute, Now: clk.Now}})
	c := f.initialized(t)
	for i := range 5 { // five minutes of use, a request every 50 s
		clk.Advance(50 * time.Second)
		wantResult(t, c.Call(t, i, "ping", nil), strconv.Itoa(i))
	}
	// A notification 40 s after the last request is accepted but does not renew: 40 s later the
	// session is 80 s idle and gone, even for notifications.
	note := testutil.Notification("notifications/initialized", nil)
	clk.Advance(40 * time.Second)
	wantEmpty(t, c.Post(t, note), http.StatusAccepted)
	clk.Advance(40 * time.Second)
	c.Post(t, note).WantError(t, http.StatusNotFound, -32600, msgNotFound, "null")
	c.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)

	d := f.initialized(t)
	clk.Advance(40 * time.Second)
	wantEmpty(t, d.Post(t, testutil.Result("srv-1", map[string]any{})), http.StatusAccepted)
	clk.Advance(40 * time.Second)
	d.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)

	// GET renews too.
	g := f.initialized(t)
	clk.Advance(40 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	resp := openStream(t, g, g.NewRequest(ctx, http.MethodGet))
	wantSSEHeaders(t, resp)
	cancel()
	clk.Advance(40 * time.Second)
	wantResult(t, g.Call(t, 1, "ping", nil), "1")
}

// Idle expiry on the real clock: a tiny IdleTimeout and the store's own reaper.
func TestPostIdleExpiryRealClock(t *testing.T) {
	f := newFixture(t, mcphttp.Options{Sessions: session.MemoryOptions{IdleTimeout: 20 * time.Millisecond, ReapInterval: 5 * time.Millisecond}})
	c := f.initialized(t)
	rec, err := f.h.Store().Get(context.Background(), c.SessionID, false)
	if err != nil {
		// Already expired on a slow machine: that is the outcome under test as well.
		c.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
		return
	}
	ended := make(chan struct{})
	rec.OnClose(func() { close(ended) })
	recv(t, ended, "the reaper to end the idle session")
	if n := f.h.Store().Len(); n != 0 {
		t.Fatalf("Len = %d after expiry", n)
	}
	c.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
}

// Other HTTP methods.
func TestOtherMethods(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	for _, m := range []string{http.MethodPut, http.MethodPatch, http.MethodOptions} {
		rep := f.raw(t, m, "")
		rep.WantError(t, http.StatusMethodNotAllowed, -32600, msgMethodNotAllowed, "null")
		if a := rep.Header.Get("Allow"); a != "GET, POST, DELETE" {
			t.Fatalf("Allow = %q", a)
		}
	}
}
