package main

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// The example answers both lifecycles on one endpoint: a legacy session and a 2026-07-28 request.
func TestHelloOverHTTP(t *testing.T) {
	h := mcphttp.New(newServer(), mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })

	c := testutil.NewClient(srv.URL, srv.Client())
	c.Initialize(t)
	w := c.Call(t, 1, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	var res struct {
		StructuredContent struct {
			Greeting string `json:"greeting"`
		} `json:"structuredContent"`
	}
	if w.Error != nil || json.Unmarshal(w.Result, &res) != nil || res.StructuredContent.Greeting != "Hello, Ada!" {
		t.Fatalf("greet: %+v %s", w.Error, w.Result)
	}
	testutil.ValidateDef(t, "2025-11-25", "CallToolResult", w.Result)

	w = c.Call(t, 2, "prompts/get", map[string]any{"name": "review", "arguments": map[string]any{}})
	if w.Error == nil || w.Error.Code != -32602 {
		t.Fatalf("review without its required argument: %s", w.Result)
	}

	m := testutil.NewClient(srv.URL, srv.Client())
	w = m.CallModern(t, 3, "resources/read", map[string]any{"uri": "hello://readme"})
	if w.Error != nil {
		t.Fatalf("modern resources/read: %+v", w.Error)
	}
	testutil.ValidateDef(t, "2026-07-28", "ReadResourceResult", w.Result)
}
