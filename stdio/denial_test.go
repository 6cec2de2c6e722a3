package stdio_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// A call refused on authorization grounds over stdio, where there is no HTTP status: the tool
// answers core.DeniedResult, an isError result carrying the SEP-2643 draft envelope in _meta,
// valid against the schema, naming the scope to request and the authorization server.
func TestDeniedResultOverStdio(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "denials", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "add_note"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		// The process's credential (from its environment) lacks notes:write.
		return core.DeniedResult("Adding a note needs the notes:write scope.",
			auth.ScopeDenial([]string{"notes:write"}, "", "https://as.example.com")), nil
	})
	p := servePipes(t, s)
	res, _, _ := p.exchange(testutil.ModernRequest(1, "tools/call", map[string]any{"name": "add_note"})+"\n", nil)
	testutil.ValidateDef(t, "2026-07-28", "CallToolResult", res.Result)
	var out struct {
		IsError bool `json:"isError"`
		Meta    map[string]struct {
			Reason           string           `json:"reason"`
			Remediation      string           `json:"remediation"`
			ContextID        string           `json:"authorizationContextId"`
			RemediationHints []map[string]any `json:"remediationHints"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatal(err)
	}
	env, ok := out.Meta[metakey.Authorization]
	if !out.IsError || !ok || env.Reason != core.DenialInsufficientAuthorization || env.Remediation != core.RemediationAvailable || env.ContextID == "" || len(env.RemediationHints) != 1 {
		t.Fatalf("result %s", res.Result)
	}
	h := env.RemediationHints[0]
	if as, _ := h["authorization_servers"].([]any); h["type"] != auth.HintOAuthScope || h["scope"] != "notes:write" || len(as) != 1 || as[0] != "https://as.example.com" {
		t.Fatalf("hint %v", h)
	}
}
