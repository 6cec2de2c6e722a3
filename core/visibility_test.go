package core_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// sendIn serves one request on an ephemeral session with ctx and returns the decoded answer.
func sendIn(t *testing.T, srv *core.Server, ctx context.Context, body string) (testutil.Wire, map[string]json.RawMessage) {
	t.Helper()
	msg, derr := transport.Core.DecodeMessage([]byte(body))
	if derr != nil {
		t.Fatalf("decoding %s: %v", body, derr)
	}
	ss := transport.NewSession(srv, transport.SessionOptions{Ephemeral: true})
	defer ss.Close()
	resp := transport.Core.Handle(ss, ctx, msg, nil)
	if resp == nil {
		t.Fatalf("no answer to %s", body)
	}
	w := testutil.DecodeWire(t, transport.Core.EncodeResponseMessage(resp))
	var res map[string]json.RawMessage
	if w.Result != nil {
		if err := json.Unmarshal(w.Result, &res); err != nil {
			t.Fatal(err)
		}
	}
	return w, res
}

func listedTools(t *testing.T, res map[string]json.RawMessage) []string {
	t.Helper()
	var tools []core.Tool
	if err := json.Unmarshal(res["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// A filtered list is private to its caller on 2026-07-28, whatever Options.CacheScope says; a
// list nothing filters keeps the server's hints, and a legacy list gets none.
func TestVisibilityCacheScope(t *testing.T) {
	plain := newServer(&core.Options{CacheScope: "public", CacheTTLMs: 5})
	plain.AddTool(&core.Tool{Name: "a"}, okTool)
	guarded := newServer(&core.Options{CacheScope: "public", CacheTTLMs: 5})
	guarded.AddTool(&core.Tool{Name: "a", Visible: func(context.Context, *core.View) bool { return true }}, okTool)
	ctx := context.Background()
	modern := testutil.ModernRequest(1, "tools/list", nil)
	for _, tc := range []struct {
		name  string
		srv   *core.Server
		ctx   context.Context
		scope string
	}{
		{"nothing filters", plain, ctx, `"public"`},
		{"an entry's predicate", guarded, ctx, `"private"`},
		{"a request's filter", plain, core.WithVisibility(ctx, func(context.Context, *core.View) bool { return true }), `"private"`},
	} {
		_, res := sendIn(t, tc.srv, tc.ctx, modern)
		if string(res["cacheScope"]) != tc.scope || string(res["ttlMs"]) != "5" {
			t.Errorf("%s: cacheScope %s ttlMs %s, want %s and 5", tc.name, res["cacheScope"], res["ttlMs"], tc.scope)
		}
	}
	c := newClient(t, guarded)
	c.initialize("2025-11-25")
	var legacy map[string]json.RawMessage
	c.result("tools/list", nil, "ListToolsResult", &legacy)
	if _, ok := legacy["cacheScope"]; ok {
		t.Errorf("a legacy list carries cache hints: %v", legacy)
	}
}

// Request filters stack: an entry is visible when the entry's predicate, the server's filter
// and every filter of the context say so; a nil filter adds nothing. Each sees the request's
// context and lifecycle.
func TestWithVisibilityStacks(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := newServer(&core.Options{Visibility: func(_ context.Context, v *core.View) bool {
		mu.Lock()
		seen = append(seen, v.Name()+"@"+v.ProtocolVersion)
		mu.Unlock()
		return v.Name() != "c"
	}})
	for _, n := range []string{"a", "b", "c", "d"} {
		srv.AddTool(&core.Tool{Name: n}, okTool)
	}
	noA := func(_ context.Context, v *core.View) bool { return v.Name() != "a" }
	modernOnly := func(_ context.Context, v *core.View) bool { return v.Modern || v.Name() != "d" }
	ctx := core.WithVisibility(core.WithVisibility(context.Background(), noA), modernOnly)
	if core.WithVisibility(ctx, nil) != ctx {
		t.Error("WithVisibility(ctx, nil) made a new context")
	}
	_, res := sendIn(t, srv, ctx, testutil.ModernRequest(1, "tools/list", nil))
	if got := listedTools(t, res); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("2026-07-28: %v, want [b d]", got)
	}
	_, res = sendIn(t, srv, ctx, testutil.Request(1, "tools/list", nil))
	if got := listedTools(t, res); !slices.Equal(got, []string{"b"}) {
		t.Errorf("legacy (no version negotiated on an ephemeral session): %v, want [b]", got)
	}
	mu.Lock()
	if !slices.Contains(seen, "b@2026-07-28") {
		t.Errorf("the server's filter saw %v: want the envelope's version", seen)
	}
	mu.Unlock()
	// Every filter hides on its own, also from a direct call.
	for _, name := range []string{"a", "c", "d"} {
		w, _ := sendIn(t, srv, ctx, testutil.Request(2, "tools/call", map[string]any{"name": name}))
		if w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(w.Error.Data), "Tool not found: "+name) {
			t.Errorf("call of hidden %s: %+v", name, w.Error)
		}
	}
}

// sourceExt serves the resources of the src: scheme: open and secret.
type sourceExt struct{}

func (sourceExt) Bind(*core.Server) core.ExtensionSpec {
	return core.ExtensionSpec{ID: "test/source", Resources: sourceExt{}}
}
func (sourceExt) Scheme() string { return "src" }
func (sourceExt) Resources() []core.Resource {
	return []core.Resource{{URI: "src://open", Name: "open"}, {URI: "src://secret", Name: "secret"}}
}
func (sourceExt) Read(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
	if req.URI != "src://open" && req.URI != "src://secret" {
		return nil, core.ResourceNotFound(req.URI)
	}
	return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
}

// The resources an extension serves through the seam are filtered like the server's own: left
// out of resources/list and, read, answered as the source answers an unknown URI.
func TestVisibilityCoversExtensionSources(t *testing.T) {
	srv := newServer(&core.Options{Extensions: []core.Extension{sourceExt{}},
		Visibility: func(_ context.Context, v *core.View) bool { return v.Name() != "src://secret" }})
	srv.AddResource(&core.Resource{URI: "test://own", Name: "own"}, okResource)
	ctx := context.Background()
	_, res := sendIn(t, srv, ctx, testutil.ModernRequest(1, "resources/list", nil))
	testutil.ValidateDef(t, testutil.ModernVersion, "ListResourcesResult", mustMarshal(t, res))
	var items []core.Resource
	if err := json.Unmarshal(res["resources"], &items); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range items {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, []string{"test://own", "src://open"}) || string(res["cacheScope"]) != `"private"` {
		t.Errorf("resources/list: %v %s", uris, res["cacheScope"])
	}
	hidden, _ := sendIn(t, srv, ctx, testutil.Request(2, "resources/read", map[string]any{"uri": "src://secret"}))
	unknown, _ := sendIn(t, srv, ctx, testutil.Request(2, "resources/read", map[string]any{"uri": "src://nope"}))
	if hidden.Error == nil || unknown.Error == nil || hidden.Error.Code != unknown.Error.Code ||
		strings.ReplaceAll(string(unknown.Error.Data), "nope", "secret") != string(hidden.Error.Data) ||
		strings.ReplaceAll(unknown.Error.Message, "nope", "secret") != hidden.Error.Message {
		t.Errorf("hidden read %+v, unknown read %+v", hidden.Error, unknown.Error)
	}
	if w, _ := sendIn(t, srv, ctx, testutil.Request(3, "resources/read", map[string]any{"uri": "src://open"})); w.Error != nil {
		t.Errorf("visible read: %+v", w.Error)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Resolution stops at the first match, as MatchResource tells it (and so as a layer in front
// checks it): a hidden exact resource, or a hidden first matching template, is answered as an
// unknown URI, never served by a later match; a listen stream is not told of its updates.
func TestVisibilityReadStopsAtFirstMatch(t *testing.T) {
	hide := func(context.Context, *core.View) bool { return false }
	text := func(s string) core.ResourceHandler {
		return func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: s}}}, nil
		}
	}
	srv := newServer(&core.Options{SubscribeHandler: core.AcceptSubscription})
	srv.AddResource(&core.Resource{URI: "test://x/1", Name: "exact", Visible: hide}, text("exact"))
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://x/{id}", Name: "first", Visible: hide}, text("first"))
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://{+rest}", Name: "second"}, text("second"))
	unknown, _ := sendIn(t, srv, context.Background(), testutil.Request(1, "resources/read", map[string]any{"uri": "other://1"}))
	if unknown.Error == nil {
		t.Fatalf("unknown read: %s", unknown.Result)
	}
	f, err := transport.Core.HonorListen(srv, context.Background(), nil, core.SubscriptionFilter{ResourceSubscriptions: []string{"test://x/1", "test://x/2", "test://y"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"test://x/1", "test://x/2"} { // the exact resource; the first template
		if tpl, _, ok := transport.Core.MatchResource(srv, uri); !ok || tpl == "test://{+rest}" {
			t.Errorf("MatchResource(%s) = %q %v", uri, tpl, ok)
		}
		w, _ := sendIn(t, srv, context.Background(), testutil.Request(1, "resources/read", map[string]any{"uri": uri}))
		if w.Error == nil || w.Error.Code != unknown.Error.Code || w.Error.Message != "Resource not found: "+uri {
			t.Errorf("read %s: %s %+v, want %+v", uri, w.Result, w.Error, unknown.Error)
		}
		if transport.Core.Wants(f, core.Change{Method: core.ResourceUpdated, URI: uri}) {
			t.Errorf("a listen stream is told of updates of hidden %s", uri)
		}
	}
	w, _ := sendIn(t, srv, context.Background(), testutil.Request(1, "resources/read", map[string]any{"uri": "test://y"}))
	if w.Error != nil || !strings.Contains(string(w.Result), `"text":"second"`) {
		t.Errorf("read test://y: %s %+v", w.Result, w.Error)
	}
	if !transport.Core.Wants(f, core.Change{Method: core.ResourceUpdated, URI: "test://y"}) {
		t.Error("a listen stream is not told of updates of a visible resource")
	}
}

// A legacy session's resources/subscribe to a URI its caller may not see (resolved as
// resources/read resolves it) is answered as one to an unknown URI, but not kept: the
// resource's updates do not reach the session.
func TestVisibilitySubscribeHidden(t *testing.T) {
	hidden := map[string]bool{"test://secret": true, "test://t/{id}": true}
	srv := newServer(&core.Options{SubscribeHandler: core.AcceptSubscription,
		Visibility: func(_ context.Context, v *core.View) bool { return !hidden[v.Name()] }})
	srv.AddResource(&core.Resource{URI: "test://secret", Name: "secret"}, okResource)
	srv.AddResource(&core.Resource{URI: "test://open", Name: "open"}, okResource)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, okResource)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	unknown := c.result("resources/subscribe", map[string]any{"uri": "test://nothing"}, "EmptyResult", nil)
	for _, uri := range []string{"test://secret", "test://t/1", "test://open"} {
		if w := c.result("resources/subscribe", map[string]any{"uri": uri}, "EmptyResult", nil); string(w.Result) != string(unknown.Result) {
			t.Errorf("subscribe %s = %s, unknown URI = %s", uri, w.Result, unknown.Result)
		}
	}
	for _, uri := range []string{"test://secret", "test://t/1"} {
		if c.ss.Subscribed(uri) {
			t.Errorf("a subscription to hidden %s was kept", uri)
		}
		_ = srv.NotifyResourceUpdated(context.Background(), uri)
		if m := c.out.all(t); len(m) != 0 {
			t.Errorf("the session was told of hidden %s: %v", uri, m)
		}
	}
	_ = srv.NotifyResourceUpdated(context.Background(), "test://open")
	if m := c.out.all(t); len(m) != 1 || !c.ss.Subscribed("test://open") {
		t.Errorf("visible resource: subscribed %v, told %v", c.ss.Subscribed("test://open"), m)
	}
}

// A list change naming a new entry reaches only the legacy sessions whose principal may see it
// (by the entry's predicate and Options.Visibility); a removal, which names nothing, reaches
// every session.
func TestVisibilityLegacyListChanged(t *testing.T) {
	aliceOnly := func(ctx context.Context, _ *core.View) bool {
		who, _ := core.PrincipalFrom(ctx)
		return who == "alice"
	}
	srv := newServer(&core.Options{Visibility: func(ctx context.Context, v *core.View) bool {
		return v.Tool == nil || v.Tool.Name != "admin" || aliceOnly(ctx, v)
	}})
	open := func(who string) *sink {
		out := newSink()
		ss := transport.NewSession(srv, transport.SessionOptions{Out: out})
		t.Cleanup(ss.Close)
		msg, err := transport.Core.DecodeMessage([]byte(testutil.Request(1, "initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "c", "version": "1"}})))
		if err != nil {
			t.Fatal(err)
		}
		if resp := transport.Core.Handle(ss, core.WithPrincipal(context.Background(), who), msg, nil); resp == nil || resp.Error != nil {
			t.Fatalf("initialize %s: %+v", who, resp)
		}
		return out
	}
	alice, bob := open("alice"), open("bob")
	srv.AddTool(&core.Tool{Name: "admin"}, okTool)                       // Options.Visibility hides it from bob
	srv.AddPrompt(&core.Prompt{Name: "p", Visible: aliceOnly}, okPrompt) // its own predicate does
	srv.AddTool(&core.Tool{Name: "public"}, okTool)                      // nothing hides it
	srv.RemoveTools("admin")                                             // a removal names nothing
	for _, w := range []struct {
		who  string
		out  *sink
		want []string
	}{
		{"alice", alice, []string{core.ToolsListChanged, core.PromptsListChanged, core.ToolsListChanged, core.ToolsListChanged}},
		{"bob", bob, []string{core.ToolsListChanged, core.ToolsListChanged}},
	} {
		if got := w.out.methods(t); !slices.Equal(got, w.want) {
			t.Errorf("%s told %v, want %v", w.who, got, w.want)
		}
	}
}
