package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
)

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":        "us-west1",
		"us west 1":       "us west 1",
		"":                "",
		" padded ":        "=?base64?IHBhZGRlZCA=?=",
		"\tindented":      "=?base64?CWluZGVudGVk?=",
		"line1\nline2":    "=?base64?bGluZTEKbGluZTI=?=",
		"Hello, 世界":       "=?base64?SGVsbG8sIOS4lueVjA==?=",
		"file:///a%20b":   "file:///a%20b",
		"trailing space ": "=?base64?dHJhaWxpbmcgc3BhY2Ug?=",
	} {
		if got := headerValue(in); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{`"a"`: "a", `42`: "42", `-1`: "-1", `true`: "true", `false`: "false"} {
		if got, ok := paramValue(json.RawMessage(in)); !ok || got != want {
			t.Errorf("paramValue(%s) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{`null`, `{}`, `[1]`} {
		if _, ok := paramValue(json.RawMessage(in)); ok {
			t.Errorf("paramValue(%s) sends a header", in)
		}
	}
}

func TestToolHeaders(t *testing.T) {
	ok := `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"},"p":{"type":"integer","x-mcp-header":"Priority"},"v":{"type":["boolean","null"],"x-mcp-header":"V"},"q":{"type":"string"}}}`
	hs, err := toolHeaders(json.RawMessage(ok))
	if err != nil || len(hs) != 3 {
		t.Fatalf("valid schema: %v, %v", hs, err)
	}
	for name, schema := range map[string]string{
		"empty":      `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"object":     `{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		"array":      `{"properties":{"a":{"type":"array","x-mcp-header":"A"}}}`,
		"null":       `{"properties":{"a":{"type":"null","x-mcp-header":"A"}}}`,
		"number":     `{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"duplicate":  `{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`,
		"space":      `{"properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`,
		"colon":      `{"properties":{"a":{"type":"string","x-mcp-header":"Region:Primary"}}}`,
		"non-ascii":  `{"properties":{"a":{"type":"string","x-mcp-header":"Région"}}}`,
		"control":    `{"properties":{"a":{"type":"string","x-mcp-header":"Region\t1"}}}`,
		"not string": `{"properties":{"a":{"type":"string","x-mcp-header":7}}}`,
	} {
		if _, err := toolHeaders(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: accepted %s", name, schema)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","default":"John"},"age":{"type":"integer","default":30},"ok":{"type":"boolean","default":true},"none":{"type":"string"}}}`)
	got := applyDefaults(schema, map[string]any{"name": "Jane"})
	if got["name"] != "Jane" || got["age"] != float64(30) || got["ok"] != true {
		t.Errorf("applyDefaults = %v", got)
	}
	if _, ok := got["none"]; ok {
		t.Error("a property without default was filled")
	}
	if got := applyDefaults(schema, nil); len(got) != 3 {
		t.Errorf("from nil content: %v", got)
	}
}

func TestSSEReader(t *testing.T) {
	in := ": keepalive\n\nid: 1\nretry: 250\ndata: {\"a\":\ndata: 1}\n\r\nevent: other\ndata: x\n\nid: 2\ndata: \n\ndata: last"
	r := newSSEReader(strings.NewReader(in), 1024)
	ev, err := r.next()
	if err != nil || ev.id != "1" || ev.retry != 250*time.Millisecond || string(ev.data) != "{\"a\":\n1}" {
		t.Fatalf("first event: %+v, %v", ev, err)
	}
	if ev, err = r.next(); err != nil || ev.event != "other" {
		t.Fatalf("second: %+v, %v", ev, err)
	}
	if ev, err = r.next(); err != nil || ev.id != "2" || len(ev.data) != 0 || !ev.hasID {
		t.Fatalf("priming event: %+v, %v", ev, err)
	}
	if _, err = r.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut event: %v", err)
	}
	big := newSSEReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50)
	if _, err := big.next(); err == nil {
		t.Error("an event past the bound was read")
	}
}

// TestRepeatable: after a session expired, a refused request is repeated on the new session
// unless it continues a list from an old cursor; one that may have run only when it changes
// nothing.
func TestRepeatable(t *testing.T) {
	for _, tc := range []struct {
		method string
		params map[string]any
		ran    bool
		want   bool
	}{
		{"tools/call", map[string]any{"name": "x"}, false, true},
		{"tools/call", map[string]any{"name": "x"}, true, false},
		{"custom/thing", nil, true, false},
		{"resources/read", map[string]any{"uri": "a"}, true, true},
		{"tools/list", map[string]any{}, true, true},
		{"tools/list", map[string]any{"cursor": "c"}, false, false},
	} {
		if got := repeatable(tc.method, tc.params, tc.ran); got != tc.want {
			t.Errorf("repeatable(%s, %v, ran=%v) = %v", tc.method, tc.params, tc.ran, got)
		}
	}
}

// TestInputRequestsBound: an input_required result asking for more inputs than
// Options.MaxServerRequests fails the call before any handler runs.
func TestInputRequestsBound(t *testing.T) {
	ran := 0
	c := newClient(Options{MaxServerRequests: 1, Roots: func(context.Context) ([]core.Root, error) {
		ran++
		return nil, nil
	}})
	raw := json.RawMessage(`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":{"method":"roots/list"}}}`)
	err := c.answerInputs(context.Background(), raw, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "Options.MaxServerRequests") || ran != 0 {
		t.Errorf("two inputs past a bound of one: %v (%d handlers ran)", err, ran)
	}
	if err := c.answerInputs(context.Background(), json.RawMessage(`{"inputRequests":{"a":{"method":"roots/list"}}}`), map[string]any{}); err != nil || ran != 1 {
		t.Errorf("one input within the bound: %v (%d handlers ran)", err, ran)
	}
}
