package main

import (
	"context"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
)

// The fixed opaque tokens of the conformance suite's sep-2350-server-scope-challenge scenario:
// the low one holds only a baseline scope, the full one every scope the scenario's operations
// need. Accepted only with -conformance, for local runs of that scenario.
const (
	conformanceLowToken  = "mcp-conformance-scope-low"
	conformanceFullToken = "mcp-conformance-scope-full"
)

// conformanceScopeSet is every scope the scenario's four operations need.
var conformanceScopeSet = []string{
	"mcp:conformance:tools:call", "mcp:conformance:tools:test_simple_text",
	"mcp:conformance:resources:read", "mcp:conformance:resources:static",
	"mcp:conformance:resources:template:123",
	"mcp:conformance:prompts:get", "mcp:conformance:prompts:test_simple_prompt",
}

// conformanceVerifier accepts the scenario's two opaque tokens and hands every other token to
// next.
func conformanceVerifier(next auth.Verifier) auth.Verifier {
	return auth.VerifierFunc(func(ctx context.Context, token string) (*auth.TokenInfo, error) {
		switch token {
		case conformanceLowToken:
			return &auth.TokenInfo{Subject: "conformance-user", Scopes: []string{"mcp:conformance:baseline"}}, nil
		case conformanceFullToken:
			return &auth.TokenInfo{Subject: "conformance-user", Scopes: conformanceScopeSet}, nil
		}
		return next.Verify(ctx, token)
	})
}

// addConformanceFixture registers the entries the scenario calls and their scopes: each
// operation needs its method's scope plus one of its own (the template's depends on its id).
func addConformanceFixture(s *core.Server, o *auth.ScopeOptions) {
	s.AddTool(&core.Tool{Name: "test_simple_text", Description: "Answers a fixed text."},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("This is a simple text response for testing."), nil
		})
	s.AddResource(&core.Resource{URI: "test://static-text", Name: "static-text", MimeType: "text/plain"},
		func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", MimeType: "text/plain"},
		func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: "Data for ID: " + req.Vars["id"]}}}, nil
		})
	s.AddPrompt(&core.Prompt{Name: "test_simple_prompt", Description: "A fixed prompt."},
		func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("This is a simple prompt for testing.")}}}, nil
		})
	o.Methods = map[string][]string{
		"tools/call":     {"mcp:conformance:tools:call"},
		"resources/read": {"mcp:conformance:resources:read"},
		"prompts/get":    {"mcp:conformance:prompts:get"},
	}
	o.Tools["test_simple_text"] = []string{"mcp:conformance:tools:test_simple_text"}
	o.Prompts["test_simple_prompt"] = []string{"mcp:conformance:prompts:test_simple_prompt"}
	o.Resources = map[string][]string{"test://static-text": {"mcp:conformance:resources:static"}}
	o.Require = func(op *auth.Operation) []string {
		if op.Template == "test://template/{id}/data" {
			return []string{"mcp:conformance:resources:template:" + op.Vars["id"]}
		}
		return nil
	}
}
