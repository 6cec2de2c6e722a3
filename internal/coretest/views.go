package coretest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// The callers of ViewServer: Admin sees everything, Guest only the public entries.
const (
	Admin = "alice"
	Guest = "bob"
)

// adminOnly is the entries' own predicate of ViewServer.
func adminOnly(ctx context.Context, _ *core.View) bool {
	p, _ := core.PrincipalFrom(ctx)
	return p == Admin
}

// noBeta is ViewServer's server-wide filter: entries named beta_* are for Admin only.
func noBeta(ctx context.Context, v *core.View) bool {
	p, _ := core.PrincipalFrom(ctx)
	return p == Admin || !strings.HasPrefix(v.Name(), "beta_")
}

// ViewServer returns a server whose entries are seen per caller, two to a page: the adm_*
// tools, adm_p, test://adm and test://adm/{id} have their own predicate (Admin only), and the
// server-wide filter (Options.Visibility) hides beta_c from everybody but Admin. It accepts
// resource subscriptions and completes every reference with "x". opts may set more.
func ViewServer(opts core.Options) *core.Server {
	opts.PageSize = 2
	opts.Visibility = noBeta
	opts.SubscribeHandler = core.AcceptSubscription
	opts.CompletionHandler = func(context.Context, *core.CompleteRequest) (*core.CompleteResult, error) {
		return &core.CompleteResult{Completion: core.Completion{Values: []string{"x"}}}, nil
	}
	s := core.NewServer(core.Implementation{Name: "views", Version: "1"}, opts)
	tool := func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("ok"), nil
	}
	for _, n := range []string{"pub_a", "adm_a", "pub_b", "beta_c", "adm_b", "pub_c"} {
		t := &core.Tool{Name: n}
		if strings.HasPrefix(n, "adm_") {
			t.Visible = adminOnly
		}
		s.AddTool(t, tool)
	}
	prompt := func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("hi")}}}, nil
	}
	s.AddPrompt(&core.Prompt{Name: "pub_p"}, prompt)
	s.AddPrompt(&core.Prompt{Name: "adm_p", Visible: adminOnly}, prompt)
	read := func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
	}
	s.AddResource(&core.Resource{URI: "test://pub", Name: "pub"}, read)
	s.AddResource(&core.Resource{URI: "test://adm", Name: "adm", Visible: adminOnly}, read)
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://pub/{id}", Name: "pub"}, read)
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://adm/{id}", Name: "adm", Visible: adminOnly}, read)
	return s
}

// Caller sends one request of method with params as one caller of a ViewServer, on its
// transport and lifecycle (a 2026-07-28 caller adds the envelope), and returns the raw response.
type Caller func(t testing.TB, id int, method string, params map[string]any) []byte

// CheckViews checks what the two callers of a ViewServer see on one transport and lifecycle
// (version): every list method pages through exactly the caller's entries (no empty page, the
// result valid against the schema and, on 2026-07-28, private to the caller), Admin reaches its
// own entries, and everything hidden from Guest (calling, getting, reading, completing it) is
// answered byte for byte as an unknown name is.
func CheckViews(t *testing.T, version string, admin, guest Caller) {
	t.Helper()
	lists := []struct {
		method, def, member, key string
		admin, guest             []string
	}{
		{"tools/list", "ListToolsResult", "tools", "name",
			[]string{"pub_a", "adm_a", "pub_b", "beta_c", "adm_b", "pub_c"}, []string{"pub_a", "pub_b", "pub_c"}},
		{"prompts/list", "ListPromptsResult", "prompts", "name", []string{"pub_p", "adm_p"}, []string{"pub_p"}},
		{"resources/list", "ListResourcesResult", "resources", "uri", []string{"test://pub", "test://adm"}, []string{"test://pub"}},
		{"resources/templates/list", "ListResourceTemplatesResult", "resourceTemplates", "uriTemplate",
			[]string{"test://pub/{id}", "test://adm/{id}"}, []string{"test://pub/{id}"}},
	}
	for _, l := range lists {
		if got := listAll(t, version, admin, l.method, l.def, l.member, l.key); !slices.Equal(got, l.admin) {
			t.Errorf("%s as %s: %v, want %v", l.method, Admin, got, l.admin)
		}
		if got := listAll(t, version, guest, l.method, l.def, l.member, l.key); !slices.Equal(got, l.guest) {
			t.Errorf("%s as %s: %v, want %v", l.method, Guest, got, l.guest)
		}
	}
	hidden := []struct {
		method          string
		params          func(name string) map[string]any
		hidden, unknown string
	}{
		{"tools/call", func(n string) map[string]any { return map[string]any{"name": n} }, "adm_a", "zzz_a"},
		{"tools/call", func(n string) map[string]any { return map[string]any{"name": n} }, "beta_c", "zzzz_c"},
		{"prompts/get", func(n string) map[string]any { return map[string]any{"name": n} }, "adm_p", "zzz_p"},
		{"resources/read", func(n string) map[string]any { return map[string]any{"uri": n} }, "test://adm", "test://zzz"},
		{"resources/read", func(n string) map[string]any { return map[string]any{"uri": n} }, "test://adm/1", "test://zzz/1"},
		{"completion/complete", func(n string) map[string]any {
			return map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": n}, "argument": map[string]any{"name": "a", "value": ""}}
		}, "adm_p", "zzz_p"},
		{"completion/complete", func(n string) map[string]any {
			return map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": n}, "argument": map[string]any{"name": "id", "value": ""}}
		}, "test://adm/{id}", "test://zzz/{id}"},
	}
	for i, h := range hidden {
		id := 100 + i
		got := guest(t, id, h.method, h.params(h.hidden))
		unknown := guest(t, id, h.method, h.params(h.unknown))
		if want := strings.ReplaceAll(string(unknown), h.unknown, h.hidden); string(got) != want {
			t.Errorf("%s of hidden %s as %s:\n%s\nwant it answered as an unknown name:\n%s", h.method, h.hidden, Guest, got, want)
		}
		w := testutil.DecodeWire(t, got)
		if w.Error == nil {
			t.Errorf("%s of hidden %s as %s succeeded: %s", h.method, h.hidden, Guest, got)
		}
		testutil.ValidateDef(t, version, "JSONRPCErrorResponse", got)
		if ok := admin(t, id, h.method, h.params(h.hidden)); testutil.DecodeWire(t, ok).Error != nil {
			t.Errorf("%s of %s as %s: %s", h.method, h.hidden, Admin, ok)
		}
	}
}

// listAll pages through a list method as one caller and returns the key of every item.
func listAll(t *testing.T, version string, call Caller, method, def, member, key string) []string {
	t.Helper()
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatalf("%s: more pages than entries", method)
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw := call(t, page, method, params)
		w := testutil.DecodeWire(t, raw)
		if w.Error != nil {
			t.Fatalf("%s: %s", method, raw)
		}
		testutil.ValidateDef(t, version, def, w.Result)
		var res map[string]json.RawMessage
		if err := json.Unmarshal(w.Result, &res); err != nil {
			t.Fatal(err)
		}
		var items []map[string]any
		if err := json.Unmarshal(res[member], &items); err != nil {
			t.Fatalf("%s: %v: %s", method, err, raw)
		}
		if len(items) == 0 && (page > 0 || cursor != "") {
			t.Errorf("%s: an empty page: %s", method, raw)
		}
		if version == testutil.ModernVersion && string(res["cacheScope"]) != `"private"` {
			t.Errorf("%s: a filtered list must be private to its caller: %s", method, raw)
		}
		for _, it := range items {
			names = append(names, it[key].(string))
		}
		cursor = ""
		if err := json.Unmarshal(res["nextCursor"], &cursor); err != nil || cursor == "" {
			return names
		}
	}
}
