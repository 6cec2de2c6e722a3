package apps_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

func TestLinkRefuses(t *testing.T) {
	tool := &core.Tool{Name: "show"}
	for _, tc := range []struct {
		name, want string
		f          func()
	}{
		{"nil tool", "apps: Link needs a tool", func() { apps.Link(nil, "ui://x/v") }},
		{"https uri", `apps: resource URI of tool show "https://x/v" must be a ui:// URI`, func() { apps.Link(tool, "https://x/v") }},
		{"empty uri", `apps: resource URI of tool show "" must be a ui:// URI`, func() { apps.Link(tool, "") }},
		{"unknown visibility", `apps: visibility[1] "user" of tool show must be "model" or "app"`, func() { apps.Link(tool, "ui://x/v", apps.VisibleToApp, "user") }},
		{"twice", `apps: visibility "app" of tool show is given twice`, func() { apps.Link(tool, "ui://x/v", apps.VisibleToApp, apps.VisibleToApp) }},
		{"already linked", `apps: Tool.Meta of tool show already holds "ui/resourceUri"`, func() {
			apps.Link(&core.Tool{Name: "show", Meta: core.Meta{"ui/resourceUri": "ui://y"}}, "ui://x/v")
		}},
		{"nil app", "apps: App.Tool called on a nil app", func() { (*apps.App)(nil).Tool(tool) }},
	} {
		t.Run(tc.name, func(t *testing.T) { testutil.WantPanic(t, tc.want, tc.f) })
	}
}

// A linked tool carries _meta.ui and the flat key, keeps its other _meta, and leaves the
// original alone; tools/list sends the shapes the official and the extension's schemas accept.
func TestLinkedToolsOnTheWire(t *testing.T) {
	s := newServer()
	app := &apps.App{URI: "ui://t/view", Name: "view", HTML: page}
	apps.Add(s, app)
	orig := &core.Tool{Name: "show", Description: "Shows it.", Meta: core.Meta{"example.com/k": "v"}}
	linked := app.Tool(orig)
	if len(orig.Meta) != 1 || linked == orig {
		t.Fatalf("Tool modified its argument: %v", orig.Meta)
	}
	s.AddTool(linked, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("shown"), nil
	})
	s.AddTool(app.Tool(&core.Tool{Name: "refresh"}, apps.VisibleToApp), func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("refreshed"), nil
	})
	s.AddTool(apps.Link(&core.Tool{Name: "both"}, "ui://t/view", apps.VisibleToModel, apps.VisibleToApp), func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("both"), nil
	})
	url := serve(t, s)
	for _, lc := range lifecycles {
		c := connect(t, url, lc.lc, true)
		var raw json.RawMessage
		if err := c.Call(context.Background(), "tools/list", map[string]any{}, &raw); err != nil {
			t.Fatal(err)
		}
		testutil.ValidateDef(t, map[string]string{"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}[lc.name], "ListToolsResult", raw)
		var list struct {
			Tools []struct {
				Name string                     `json:"name"`
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"show":    `{"resourceUri":"ui://t/view"}`,
			"refresh": `{"resourceUri":"ui://t/view","visibility":["app"]}`,
			"both":    `{"resourceUri":"ui://t/view","visibility":["model","app"]}`,
		}
		for _, tool := range list.Tools {
			if got := string(tool.Meta["ui"]); got != want[tool.Name] {
				t.Errorf("%s: %s _meta.ui = %s, want %s", lc.name, tool.Name, got, want[tool.Name])
			}
			if got := string(tool.Meta["ui/resourceUri"]); got != `"ui://t/view"` {
				t.Errorf("%s: %s flat key = %s", lc.name, tool.Name, got)
			}
			validateExt(t, "McpUiToolMeta", tool.Meta["ui"])
		}

		// The client reads the link back and tells who may call each tool.
		seen := map[string]apps.ToolMeta{}
		for tool, err := range c.ListTools(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			m, ok := client.ToolUI(tool)
			if !ok || m.ResourceURI != "ui://t/view" {
				t.Fatalf("%s: ToolUI(%s) = %+v, %v", lc.name, tool.Name, m, ok)
			}
			seen[tool.Name] = m
		}
		if !seen["show"].VisibleTo(apps.VisibleToModel) || !seen["show"].VisibleTo(apps.VisibleToApp) ||
			seen["refresh"].VisibleTo(apps.VisibleToModel) || !seen["refresh"].VisibleTo(apps.VisibleToApp) ||
			!slices.Equal(seen["both"].Visibility, []apps.Visibility{"model", "app"}) {
			t.Fatalf("%s: visibility %+v", lc.name, seen)
		}
		// The server cannot tell the model from the app: an app-only tool answers any caller,
		// and keeping it from the model is the host's part (VisibleTo).
		if res, err := c.CallTool(context.Background(), "refresh", nil); err != nil || res.Content[0].Text != "refreshed" {
			t.Fatalf("%s: refresh: %+v, %v", lc.name, res, err)
		}
	}
}

func TestToolUIReadsEveryForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta core.Meta
		want apps.ToolMeta
		ok   bool
	}{
		{"none", nil, apps.ToolMeta{}, false},
		{"flat key only", core.Meta{"ui/resourceUri": "ui://a/v"}, apps.ToolMeta{ResourceURI: "ui://a/v"}, true},
		{"nested", core.Meta{"ui": map[string]any{"resourceUri": "ui://a/v", "visibility": []any{"app"}}}, apps.ToolMeta{ResourceURI: "ui://a/v", Visibility: []apps.Visibility{"app"}}, true},
		{"nested wins", core.Meta{"ui": map[string]any{"resourceUri": "ui://a/new"}, "ui/resourceUri": "ui://a/old"}, apps.ToolMeta{ResourceURI: "ui://a/new"}, true},
		{"visibility with flat key", core.Meta{"ui": map[string]any{"visibility": []any{"model"}}, "ui/resourceUri": "ui://a/v"}, apps.ToolMeta{ResourceURI: "ui://a/v", Visibility: []apps.Visibility{"model"}}, true},
		{"not ui scheme", core.Meta{"ui": map[string]any{"resourceUri": "https://a/v"}}, apps.ToolMeta{}, false},
		{"wrong types", core.Meta{"ui": map[string]any{"resourceUri": 3}, "ui/resourceUri": true}, apps.ToolMeta{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := apps.ToolUI(&core.Tool{Name: "x", Meta: tc.meta})
			if ok != tc.ok || got.ResourceURI != tc.want.ResourceURI || !slices.Equal(got.Visibility, tc.want.Visibility) {
				t.Fatalf("ToolUI = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := apps.ToolUI(nil); ok {
		t.Fatal("ToolUI(nil)")
	}
}
