package client_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// BenchmarkCallTool measures one typed tools/call through the client, server included, per
// transport and lifecycle.
func BenchmarkCallTool(b *testing.B) {
	for _, tc := range []struct {
		name string
		lc   client.Lifecycle
		http bool
	}{
		{"memory/legacy", client.Legacy, false},
		{"memory/modern", client.Modern, false},
		{"http/legacy", client.Legacy, true},
		{"http/modern", client.Modern, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := newFixture(b)
			var tr client.Transport = &client.InMemoryTransport{Server: f.server}
			if tc.http {
				srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{}))
				defer srv.Close()
				tr = &client.HTTPTransport{URL: srv.URL, DisableStandaloneStream: true}
			}
			c, err := client.Connect(context.Background(), tr, client.Options{Lifecycle: tc.lc})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			args := addIn{A: 1, B: 2}
			if _, err := c.CallTool(ctx, "add", args); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.CallTool(ctx, "add", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
