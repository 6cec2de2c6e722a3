package apps_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/internal/coretest"
)

// An app's resource and its tools are ordinary entries for the view per caller: App.Visible
// and Tool.Visible hide them from the callers they refuse, who get the answer for an unknown
// URI or name.
func TestAppsKeepToTheCallersView(t *testing.T) {
	s := newServer()
	alice := func(ctx context.Context, _ *core.View) bool { p, _ := core.PrincipalFrom(ctx); return p == "alice" }
	view := &apps.App{URI: "ui://v/view.html", Name: "v", HTML: page, Visible: alice}
	apps.Add(s, view)
	s.AddTool(view.Tool(&core.Tool{Name: "show", Visible: alice}), func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("shown"), nil
	})
	for who, want := range map[string]int{"alice": 1, "bob": 0} {
		if n := len(coretest.OK(t, s, who, nil, "resources/list", nil)["resources"].([]any)); n != want {
			t.Errorf("%s lists %d resources, want %d", who, n, want)
		}
		if n := len(coretest.OK(t, s, who, nil, "tools/list", nil)["tools"].([]any)); n != want {
			t.Errorf("%s lists %d tools, want %d", who, n, want)
		}
	}
	w := coretest.Send(t, s, "bob", nil, "resources/read", map[string]any{"uri": "ui://v/view.html"})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Resource not found: ui://v/view.html", map[string]any{"uri": "ui://v/view.html"})
	w = coretest.Send(t, s, "bob", nil, "tools/call", map[string]any{"name": "show"})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Invalid params", "Tool not found: show")
}
