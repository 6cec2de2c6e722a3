package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
)

// toolInfo is what the client keeps of a listed tool: the arguments it mirrors into headers, or
// why it must not be called.
type toolInfo struct {
	headers [][2]string // header name, argument name
	invalid error
}

// noteTool records a listed tool and reports whether it may be used: a tool whose x-mcp-header
// annotations break the rules is left out of the list.
func (c *Client) noteTool(t *core.Tool) bool {
	hs, err := toolHeaders(json.RawMessage(t.InputSchema))
	c.mu.Lock()
	c.tools[t.Name] = &toolInfo{headers: hs, invalid: err}
	c.mu.Unlock()
	return err == nil
}

// knowTool makes sure the tool's header annotations are known before a 2026-07-28 call: the tool
// list is read once when the tool is missing. A tool with invalid annotations is refused.
func (c *Client) knowTool(ctx context.Context, name string) error {
	c.mu.Lock()
	ti, ok := c.tools[name]
	c.mu.Unlock()
	if !ok {
		for _, err := range c.ListTools(ctx) {
			if err != nil {
				return err
			}
		}
		c.mu.Lock()
		ti, ok = c.tools[name]
		c.mu.Unlock()
	}
	if ok && ti.invalid != nil {
		return fmt.Errorf("mcpkit/client: tool %s is unusable: %w", name, ti.invalid)
	}
	return nil
}

// paramHeadersFor returns the Mcp-Param-* headers of a call: each annotated argument present and
// not null, encoded as the transport rules say.
func (c *Client) paramHeadersFor(tool string, args any) [][2]string {
	c.mu.Lock()
	ti := c.tools[tool]
	c.mu.Unlock()
	if ti == nil || len(ti.headers) == 0 {
		return nil
	}
	raw, _ := args.(json.RawMessage)
	var vals map[string]json.RawMessage
	if len(raw) == 0 || jsonv2.Unmarshal(raw, &vals) != nil {
		return nil
	}
	var out [][2]string
	for _, h := range ti.headers {
		v, ok := vals[h[1]]
		if !ok {
			continue
		}
		if enc, ok := paramValue(v); ok {
			out = append(out, [2]string{h[0], enc})
		}
	}
	return out
}

// paramValue encodes one argument for its header: strings (base64 when not plain visible
// ASCII), integers and booleans as their JSON text. Null and other kinds send no header.
func paramValue(v json.RawMessage) (string, bool) {
	switch jsontext.Value(v).Kind() {
	case '"':
		var s string
		if jsonv2.Unmarshal(v, &s) != nil {
			return "", false
		}
		return headerValue(s), true
	case '0', 't', 'f':
		return string(v), true
	}
	return "", false
}

// toolHeaders reads and checks the x-mcp-header annotations of an input schema's top-level
// properties: a non-empty HTTP token, unique ignoring case, on a string, integer or boolean
// property.
func toolHeaders(schema json.RawMessage) ([][2]string, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var s struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if jsonv2.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	var out [][2]string
	seen := map[string]string{}
	for arg, prop := range s.Properties {
		rawName, ok := prop["x-mcp-header"]
		if !ok {
			continue
		}
		var name string
		if jsonv2.Unmarshal(rawName, &name) != nil {
			return nil, fmt.Errorf("x-mcp-header of %q is not a string", arg)
		}
		if name == "" {
			return nil, fmt.Errorf("x-mcp-header of %q is empty", arg)
		}
		if !headerToken(name) {
			return nil, fmt.Errorf("x-mcp-header %q of %q is not a valid header name", name, arg)
		}
		key := strings.ToLower(name)
		if other, dup := seen[key]; dup {
			return nil, fmt.Errorf("x-mcp-header %q is used by both %q and %q", name, other, arg)
		}
		seen[key] = arg
		if !primitiveType(prop["type"]) {
			return nil, fmt.Errorf("x-mcp-header %q is on %q, which is not a string, integer or boolean", name, arg)
		}
		out = append(out, [2]string{name, arg})
	}
	return out, nil
}

// primitiveType reports whether a property's type allows a header: string, integer or boolean
// (with null besides, when the type is a list). An absent type is accepted.
func primitiveType(t json.RawMessage) bool {
	if len(t) == 0 {
		return true
	}
	ok := func(s string) bool { return s == "string" || s == "integer" || s == "boolean" }
	var one string
	if jsonv2.Unmarshal(t, &one) == nil {
		return ok(one)
	}
	var many []string
	if jsonv2.Unmarshal(t, &many) != nil {
		return false
	}
	some := false
	for _, s := range many {
		switch {
		case ok(s):
			some = true
		case s == "null":
		default:
			return false
		}
	}
	return some
}

// headerToken reports whether s is made of HTTP token characters (RFC 9110 tchar).
func headerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// isTokenChar reports whether c is an HTTP token character (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
