package client_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
)

// Options.Apps declares the MCP Apps extension, beside the other capabilities, and keeps an entry
// the caller wrote itself.
func TestAppsOptionDeclaresTheExtension(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{})
	seen := make(chan core.ClientCapabilities, 1)
	s.AddTool(&core.Tool{Name: "caps"}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		seen <- req.ClientCapabilities()
		return core.TextResult("ok"), nil
	})
	own := map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app", "application/x-future"}}
	for _, tc := range []struct {
		name  string
		opts  client.Options
		types int
	}{
		{"off", client.Options{}, -1},
		{"on", client.Options{Apps: true, Capabilities: core.ClientCapabilities{"experimental": map[string]any{}}}, 1},
		{"own entry kept", client.Options{Apps: true, Capabilities: core.ClientCapabilities{"extensions": map[string]any{apps.ExtensionID: own}}}, 2},
	} {
		for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
			c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: s}, withLifecycle(tc.opts, lc))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(context.Background(), "caps", nil); err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
			caps := <-seen
			settings, ok := apps.ClientSupport(caps)
			if tc.types < 0 {
				if ok {
					t.Fatalf("%s/%v: declared %v", tc.name, lc, caps)
				}
				continue
			}
			if !ok || !settings.Renders() || len(settings.MIMETypes) != tc.types {
				t.Fatalf("%s/%v: capabilities %v", tc.name, lc, caps)
			}
			if tc.opts.Capabilities.Has("experimental") && !caps.Has("experimental") {
				t.Fatalf("%s/%v: lost the other capabilities: %v", tc.name, lc, caps)
			}
		}
	}
}

func withLifecycle(o client.Options, lc client.Lifecycle) client.Options {
	o.Lifecycle = lc
	return o
}
