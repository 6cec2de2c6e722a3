package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// A server's error reads the same whatever the transport and lifecycle that carried it: code,
// message and the detail the server sent in data, and Data is the raw JSON received.
func TestServerErrorReadsTheSameEverywhere(t *testing.T) {
	h := mcphttp.New(childServer(), mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	httpT := func() client.Transport { return &client.HTTPTransport{URL: srv.URL, HTTPClient: srv.Client()} }
	stdioT := func() client.Transport {
		cmd, stderr := child(t, "serve") // the test binary serving childServer on real pipes
		return &client.CommandTransport{Command: cmd, Stderr: stderr}
	}
	const want = "jsonrpc error -32602: Invalid params: Tool not found: nope"
	for _, tt := range []struct {
		name      string
		transport func() client.Transport
		lifecycle client.Lifecycle
	}{
		{"HTTP 2025-11-25", httpT, client.Legacy},
		{"HTTP 2026-07-28", httpT, client.Modern},
		{"stdio 2025-11-25", stdioT, client.Legacy},
		{"stdio 2026-07-28", stdioT, client.Modern},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c, err := client.Connect(ctx, tt.transport(), client.Options{Lifecycle: tt.lifecycle})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			_, err = c.CallTool(ctx, "nope", nil)
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) {
				t.Fatalf("CallTool of an unknown tool: %v (%T), want a *jsonrpc.Error", err, err)
			}
			if werr.Error() != want {
				t.Errorf("the error reads %q, want %q", werr.Error(), want)
			}
			if raw, ok := werr.Data.(json.RawMessage); !ok || string(raw) != `"Tool not found: nope"` {
				t.Errorf("Data = %#v, want the JSON received, json.RawMessage(%q)", werr.Data, `"Tool not found: nope"`)
			}
		})
	}
}
