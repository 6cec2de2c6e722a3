package apps_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
)

func TestClientSupport(t *testing.T) {
	ext := func(v any) core.ClientCapabilities {
		return core.ClientCapabilities{"extensions": map[string]any{apps.ExtensionID: v}}
	}
	for _, tc := range []struct {
		name     string
		caps     core.ClientCapabilities
		declared bool
		renders  bool
	}{
		{"none", nil, false, false},
		{"other extension", core.ClientCapabilities{"extensions": map[string]any{"x/y": map[string]any{}}}, false, false},
		{"null entry", ext(nil), false, false},
		{"empty entry", ext(map[string]any{}), true, false},
		{"other type only", ext(map[string]any{"mimeTypes": []any{"text/html"}}), true, false},
		{"app type", ext(map[string]any{"mimeTypes": []any{"text/html", apps.MIMEType}}), true, true},
		{"strings", ext(map[string]any{"mimeTypes": []string{apps.MIMEType}}), true, true},
		{"not a list", ext(map[string]any{"mimeTypes": apps.MIMEType}), true, false},
		{"not strings", ext(map[string]any{"mimeTypes": []any{1, true}}), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := apps.ClientSupport(tc.caps)
			if ok != tc.declared || s.Renders() != tc.renders {
				t.Fatalf("ClientSupport = %+v, %v; want declared %v, renders %v", s, ok, tc.declared, tc.renders)
			}
		})
	}
}

func TestClientCapabilitiesKeepsTheRest(t *testing.T) {
	in := core.ClientCapabilities{"sampling": map[string]any{}, "extensions": map[string]any{"x/y": map[string]any{}}}
	out := apps.ClientCapabilities(in)
	if !out.Has("sampling") || !out.Has("extensions", "x/y") {
		t.Fatalf("lost a capability: %v", out)
	}
	if s, ok := apps.ClientSupport(out); !ok || !s.Renders() {
		t.Fatalf("extension not declared: %v", out)
	}
	if in.Has("extensions", apps.ExtensionID) {
		t.Fatal("ClientCapabilities modified its argument")
	}
	validateExt(t, "McpUiClientCapabilities", out["extensions"].(map[string]any)[apps.ExtensionID])
}

// A tool handler tells from its request whether the client renders apps, in both lifecycles.
func TestSupportedInBothLifecycles(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{Extensions: []core.Extension{apps.New()}})
	s.AddTool(&core.Tool{Name: "which"}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		if apps.Supported(ctx) {
			return core.TextResult("ui"), nil
		}
		return core.TextResult("text"), nil
	})
	url := serve(t, s)
	for _, lc := range lifecycles {
		for _, withApps := range []bool{false, true} {
			c := connect(t, url, lc.lc, withApps)
			res, err := c.CallTool(context.Background(), "which", nil)
			if err != nil {
				t.Fatalf("%s: %v", lc.name, err)
			}
			want := map[bool]string{false: "text", true: "ui"}[withApps]
			if got := res.Content[0].Text; got != want {
				t.Errorf("%s, client declares apps %v: the tool saw %q, want %q", lc.name, withApps, got, want)
			}
		}
	}
	if apps.Supported(context.Background()) {
		t.Fatal("Supported outside a request")
	}
}

// The server announces the extension in initialize and in server/discover.
func TestExtensionIsAnnounced(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{Extensions: []core.Extension{apps.New()}})
	apps.Add(s, &apps.App{URI: "ui://t/v", Name: "v", HTML: "<p>hi</p>"})
	url := serve(t, s)
	for _, lc := range lifecycles {
		c := connect(t, url, lc.lc, false)
		caps := c.ServerCapabilities()
		if !c.ServerOffersApps() || caps.Resources == nil || caps.Logging == nil {
			t.Fatalf("%s: capabilities %+v", lc.name, caps)
		}
		entry, _ := caps.Extensions[apps.ExtensionID].(map[string]any)
		if types, _ := entry["mimeTypes"].([]any); len(types) != 1 || types[0] != apps.MIMEType {
			t.Fatalf("%s: extension settings %v", lc.name, entry)
		}
	}
}

// TestExtensionBesideOthers checks that the extension's entry joins what core derives and the
// entries of other extensions, and that one Extension serves several servers.
func TestExtensionBesideOthers(t *testing.T) {
	x := apps.New()
	other := otherExtension{}
	opts := core.Options{Extensions: []core.Extension{x, other}, SubscribeHandler: core.AcceptSubscription,
		CompletionHandler: func(context.Context, *core.CompleteRequest) (*core.CompleteResult, error) { return nil, nil }}
	for range 2 {
		s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, opts)
		apps.Add(s, &apps.App{URI: "ui://t/v", Name: "v", HTML: "<p>hi</p>"})
		c := connect(t, serve(t, s), client.Legacy, false)
		caps := c.ServerCapabilities()
		if !c.ServerOffersApps() || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
			t.Fatalf("capabilities %+v", caps)
		}
		if _, ok := caps.Extensions["x/other"]; !ok {
			t.Fatalf("the other extension's entry is lost: %v", caps.Extensions)
		}
	}
}

type otherExtension struct{}

func (otherExtension) Bind(*core.Server) core.ExtensionSpec { return core.ExtensionSpec{ID: "x/other"} }
