package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

// The tokens and scope pairs of the upstream conformance scenario
// sep-2350-server-scope-challenge, mirrored here: the low token holds only a baseline scope, the
// full one every scope the four operations need.
const (
	lowToken  = "mcp-conformance-scope-low"
	fullToken = "mcp-conformance-scope-full"
)

var scopeFixtures = []struct {
	key, method string
	params      map[string]any
	required    []string
	want        string // a fragment of the successful result
}{
	{"tool", "tools/call", map[string]any{"name": "test_simple_text"},
		[]string{"mcp:conformance:tools:call", "mcp:conformance:tools:test_simple_text"}, `"text":"simple"`},
	{"static-resource", "resources/read", map[string]any{"uri": "test://static-text"},
		[]string{"mcp:conformance:resources:read", "mcp:conformance:resources:static"}, `"uri":"test://static-text"`},
	{"template-resource", "resources/read", map[string]any{"uri": "test://template/123/data"},
		[]string{"mcp:conformance:resources:read", "mcp:conformance:resources:template:123"}, `"text":"data 123"`},
	{"prompt", "prompts/get", map[string]any{"name": "test_simple_prompt"},
		[]string{"mcp:conformance:prompts:get", "mcp:conformance:prompts:test_simple_prompt"}, `"role":"user"`},
}

// scopeServer returns the core server the scope tests call.
func scopeServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "scopes", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "test_simple_text"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("simple"), nil
	})
	s.AddTool(&core.Tool{Name: "transfer"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("sent"), nil
	})
	s.AddResource(&core.Resource{URI: "test://static-text", Name: "static"}, func(_ context.Context, r *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: r.URI, Text: "static"}}}, nil
	})
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template"}, func(_ context.Context, r *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: r.URI, Text: "data " + r.Vars["id"]}}}, nil
	})
	s.AddPrompt(&core.Prompt{Name: "test_simple_prompt"}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("hi")}}}, nil
	})
	return s
}

// scopeVerifier knows the two conformance tokens and a token of bob's.
var scopeVerifier = auth.VerifierFunc(func(_ context.Context, token string) (*auth.TokenInfo, error) {
	switch token {
	case lowToken:
		return &auth.TokenInfo{Subject: "conformance-user", Scopes: []string{"mcp:conformance:baseline"}}, nil
	case fullToken:
		var all []string
		for _, f := range scopeFixtures {
			all = append(all, f.required...)
		}
		return &auth.TokenInfo{Subject: "conformance-user", Scopes: all}, nil
	}
	return nil, auth.ErrInvalidToken
})

// conformanceScopes is the scope policy of the upstream scenario.
func conformanceScopes(s *core.Server, meta string) auth.ScopeOptions {
	return auth.ScopeOptions{
		ResourceMetadataURL: meta,
		Server:              s,
		Methods: map[string][]string{
			"tools/call":     {"mcp:conformance:tools:call"},
			"resources/read": {"mcp:conformance:resources:read"},
			"prompts/get":    {"mcp:conformance:prompts:get"},
		},
		Tools:     map[string][]string{"test_simple_text": {"mcp:conformance:tools:test_simple_text"}},
		Prompts:   map[string][]string{"test_simple_prompt": {"mcp:conformance:prompts:test_simple_prompt"}},
		Resources: map[string][]string{"test://static-text": {"mcp:conformance:resources:static"}},
		Require: func(op *auth.Operation) []string {
			if op.Template == "test://template/{id}/data" {
				return []string{"mcp:conformance:resources:template:" + op.Vars["id"]}
			}
			if op.Name == "transfer" {
				var in struct {
					Amount int `json:"amount"`
				}
				if op.Arguments(&in) == nil && in.Amount > 100 {
					return []string{"payments:large"}
				}
			}
			return nil
		},
	}
}

// newScopeStack serves the kit's endpoint at /mcp behind the bearer, decode and scope layers.
// withDecode false leaves the decode layer out, so the scope layer decodes by itself.
func newScopeStack(t *testing.T, v auth.Verifier, withDecode bool, scopes func(*core.Server, string) auth.ScopeOptions) (string, string) {
	t.Helper()
	h := http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	meta := auth.NewMetadataHandler(auth.Metadata{Resource: url, AuthorizationServers: []string{"https://as.example.com"}})
	s := scopeServer()
	mcp := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = mcp.Close() })
	inner := auth.RequireScopes(scopes(s, meta.URL()))(mcp)
	if withDecode {
		inner = middleware.Decode(middleware.DecodeOptions{})(inner)
	}
	mux := http.NewServeMux()
	meta.Mount(mux)
	mux.Handle("/mcp", auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta.URL()})(inner))
	h = mux
	return url, meta.URL()
}

// wantScopeChallenge checks the checks of the upstream scenario on a 403 answer: the status, a
// Bearer insufficient_scope challenge whose resource_metadata is an absolute URL without user
// information or fragment (https, or same-origin http), every required scope in the one
// challenge, and a JSON-RPC error body echoing the request id.
func wantScopeChallenge(t *testing.T, r testutil.Reply, serverURL string, required []string, id string) {
	t.Helper()
	rep := reply{r.Status, r.Header, string(r.Body)}
	meta := auth.MetadataURL(serverURL)
	pc := wantChallenge(t, rep, http.StatusForbidden, "insufficient_scope", meta)
	mu, err := url.Parse(pc.params["resource_metadata"])
	if err != nil || !mu.IsAbs() || mu.User != nil || mu.Fragment != "" || strings.Contains(pc.params["resource_metadata"], "#") {
		t.Errorf("resource_metadata %q is not an absolute URL without user information and fragment", pc.params["resource_metadata"])
	}
	su, _ := url.Parse(serverURL)
	if mu.Scheme != "https" && (mu.Scheme != "http" || mu.Host != su.Host) {
		t.Errorf("resource_metadata %q: https or same-origin http expected", mu)
	}
	got := strings.Fields(pc.params["scope"])
	for _, s := range required {
		if !slices.Contains(got, s) {
			t.Errorf("challenge scopes %q lack %s", got, s)
		}
	}
	w := r.Message(t)
	if w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidRequest || string(w.ID) != id {
		t.Errorf("body %s: want a -32600 error with id %s", r.Body, id)
	}
}

func TestScopeChallengeModern(t *testing.T) {
	for _, withDecode := range []bool{true, false} {
		name := "after decode"
		if !withDecode {
			name = "decoding itself"
		}
		t.Run(name, func(t *testing.T) {
			u, _ := newScopeStack(t, scopeVerifier, withDecode, conformanceScopes)
			c := testutil.NewClient(u, nil)
			for _, f := range scopeFixtures {
				t.Run(f.key, func(t *testing.T) {
					c.Header.Set("Authorization", "Bearer "+lowToken)
					r := c.PostModern(t, testutil.ModernRequest("scope-challenge-"+f.key, f.method, f.params))
					wantScopeChallenge(t, r, u, f.required, `"scope-challenge-`+f.key+`"`)
					// The step-up: the same operation with the full token succeeds.
					c.Header.Set("Authorization", "Bearer "+fullToken)
					w := c.CallModern(t, 2, f.method, f.params)
					if w.Error != nil || !strings.Contains(string(w.Result), f.want) {
						t.Errorf("retry with the full token: %s %v", w.Result, w.Error)
					}
				})
			}
		})
	}
}

func TestScopeChallengeLegacySession(t *testing.T) {
	u, _ := newScopeStack(t, scopeVerifier, true, conformanceScopes)
	c := testutil.NewClient(u, nil)
	c.Header.Set("Authorization", "Bearer "+lowToken)
	c.Initialize(t) // initialize never needs scopes
	if r := c.Post(t, testutil.Notification("notifications/initialized", nil)); r.Status != http.StatusAccepted {
		t.Fatalf("notification with the low token: %d %s", r.Status, r.Body)
	}
	if w := c.Call(t, 9, "ping", nil); w.Error != nil {
		t.Fatalf("ping: %v", w.Error)
	}
	for i, f := range scopeFixtures {
		t.Run(f.key, func(t *testing.T) {
			c.Header.Set("Authorization", "Bearer "+lowToken)
			r := c.Post(t, testutil.Request(10+i, f.method, f.params))
			wantScopeChallenge(t, r, u, f.required, strconv.Itoa(10+i))
			c.Header.Set("Authorization", "Bearer "+fullToken)
			w := c.Call(t, 20+i, f.method, f.params)
			if w.Error != nil || !strings.Contains(string(w.Result), f.want) {
				t.Errorf("retry in the session with the full token: %s %v", w.Result, w.Error)
			}
		})
	}
}

func TestScopesTemplatesMap(t *testing.T) {
	u, _ := newScopeStack(t, scopeVerifier, true, func(s *core.Server, meta string) auth.ScopeOptions {
		return auth.ScopeOptions{ResourceMetadataURL: meta, Server: s,
			Templates: map[string][]string{"test://template/{id}/data": {"mcp:conformance:baseline", "templates:read"}}}
	})
	c := testutil.NewClient(u, nil)
	c.Header.Set("Authorization", "Bearer "+lowToken)
	// The template's scopes, for a URI dispatch resolves to it; an exact resource is not affected.
	r := c.PostModern(t, testutil.ModernRequest(1, "resources/read", map[string]any{"uri": "test://template/7/data"}))
	wantScopeChallenge(t, r, u, []string{"mcp:conformance:baseline", "templates:read"}, "1")
	if w := c.CallModern(t, 2, "resources/read", map[string]any{"uri": "test://static-text"}); w.Error != nil {
		t.Fatalf("exact resource: %v", w.Error)
	}
	// A legacy subscription to such a URI needs the same scopes as reading it.
	c.Initialize(t)
	r = c.Post(t, testutil.Request(3, "resources/subscribe", map[string]any{"uri": "test://template/7/data"}))
	wantScopeChallenge(t, r, u, []string{"mcp:conformance:baseline", "templates:read"}, "3")
}

func TestScopesNeverForHandshake(t *testing.T) {
	everything := func(s *core.Server, meta string) auth.ScopeOptions {
		return auth.ScopeOptions{ResourceMetadataURL: meta, Require: func(*auth.Operation) []string { return []string{"everything"} }}
	}
	u, _ := newScopeStack(t, scopeVerifier, true, everything)
	c := testutil.NewClient(u, nil)
	c.Header.Set("Authorization", "Bearer "+lowToken)
	if w := c.CallModern(t, 1, "server/discover", nil); w.Error != nil {
		t.Fatalf("server/discover: %v", w.Error)
	}
	c.Initialize(t)
	if w := c.Call(t, 2, "ping", nil); w.Error != nil {
		t.Fatalf("ping: %v", w.Error)
	}
	r := c.Post(t, testutil.Request(3, "tools/list", nil))
	wantScopeChallenge(t, r, u, []string{"everything"}, "3")
}

func TestScopesFromArguments(t *testing.T) {
	u, _ := newScopeStack(t, scopeVerifier, true, func(s *core.Server, meta string) auth.ScopeOptions {
		o := conformanceScopes(s, meta)
		o.Methods = nil
		return o
	})
	c := testutil.NewClient(u, nil)
	c.Header.Set("Authorization", "Bearer "+fullToken)
	small := map[string]any{"name": "transfer", "arguments": map[string]any{"amount": 5}}
	if w := c.CallModern(t, 1, "tools/call", small); w.Error != nil || !strings.Contains(string(w.Result), "sent") {
		t.Fatalf("small transfer: %s %v", w.Result, w.Error)
	}
	large := map[string]any{"name": "transfer", "arguments": map[string]any{"amount": 500}}
	r := c.PostModern(t, testutil.ModernRequest(2, "tools/call", large))
	wantScopeChallenge(t, r, u, []string{"payments:large"}, "2")
}

func TestScopesWithoutBearerLayer(t *testing.T) {
	s := scopeServer()
	mcp := mcphttp.New(s, mcphttp.Options{})
	defer mcp.Close()
	meta := "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"
	ts := httptest.NewServer(auth.RequireScopes(conformanceScopes(s, meta))(mcp))
	defer ts.Close()
	c := testutil.NewClient(ts.URL, nil)
	r := c.PostModern(t, testutil.ModernRequest(1, "tools/call", map[string]any{"name": "test_simple_text"}))
	pc := wantChallenge(t, reply{r.Status, r.Header, string(r.Body)}, http.StatusUnauthorized, "", meta)
	if !strings.Contains(pc.params["scope"], "mcp:conformance:tools:call") {
		t.Errorf("scope %q", pc.params["scope"])
	}
	// Requests needing no scope pass.
	if w := c.CallModern(t, 2, "tools/list", nil); w.Error != nil {
		t.Errorf("tools/list: %v", w.Error)
	}
}

func TestScopesInvalidRequireOutput(t *testing.T) {
	u, _ := newScopeStack(t, scopeVerifier, true, func(s *core.Server, meta string) auth.ScopeOptions {
		return auth.ScopeOptions{ResourceMetadataURL: meta, Require: func(*auth.Operation) []string { return []string{"two words"} }}
	})
	c := testutil.NewClient(u, nil)
	c.Header.Set("Authorization", "Bearer "+fullToken)
	r := c.PostModern(t, testutil.ModernRequest(1, "tools/list", nil))
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("invalid scope from Require: %d %s, want 500", r.Status, r.Body)
	}
}

func TestScopeOptionsPanics(t *testing.T) {
	meta := "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	cases := map[string]auth.ScopeOptions{
		"no metadata":         {},
		"initialize":          {ResourceMetadataURL: meta, Methods: map[string][]string{"initialize": {"a"}}},
		"ping":                {ResourceMetadataURL: meta, Methods: map[string][]string{"ping": {"a"}}},
		"bad tool scope":      {ResourceMetadataURL: meta, Tools: map[string][]string{"t": {""}}},
		"templates no server": {ResourceMetadataURL: meta, Templates: map[string][]string{"x://{a}": {"a"}}},
		"negative max":        {ResourceMetadataURL: meta, MaxRequestBytes: -1},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) { wantPanic(t, "ScopeOptions", func() { auth.RequireScopes(o) }) })
	}
}
