package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// The example answers both lifecycles on one endpoint: a legacy session and a 2026-07-28 client.
func TestHelloOverHTTP(t *testing.T) {
	h := mcphttp.New(newServer(), mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	ctx := context.Background()
	connect := func(lc client.Lifecycle) *client.Client {
		c, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL, HTTPClient: srv.Client()}, client.Options{Lifecycle: lc})
		if err != nil {
			t.Fatalf("%s: %v", lc, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	c := connect(client.Legacy)
	out, _, err := client.CallToolAs[struct {
		Greeting string `json:"greeting"`
	}](ctx, c, "greet", map[string]any{"name": "Ada"})
	if err != nil || out.Greeting != "Hello, Ada!" {
		t.Fatalf("greet: %+v, %v", out, err)
	}
	var raw json.RawMessage // the result as sent, for the schema
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}, &raw); err != nil {
		t.Fatal(err)
	}
	testutil.ValidateDef(t, "2025-11-25", "CallToolResult", raw)

	var werr *jsonrpc.Error
	if _, err := c.GetPrompt(ctx, "review", map[string]string{}); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("review without its required argument: %v", err)
	}

	m := connect(client.Modern)
	if err := m.Call(ctx, "resources/read", map[string]any{"uri": "hello://readme"}, &raw); err != nil {
		t.Fatalf("2026-07-28 resources/read: %v", err)
	}
	testutil.ValidateDef(t, "2026-07-28", "ReadResourceResult", raw)
}
