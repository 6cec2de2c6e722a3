package core_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// modernVersion is the schema every 2026-07-28 result is checked against.
const modernVersion = "2026-07-28"

const (
	metaPV    = metakey.ProtocolVersion
	metaCaps  = metakey.ClientCapabilities
	metaInfo  = metakey.ClientInfo
	metaLevel = metakey.LogLevel
)

// absent removes a key from the envelope modernMeta builds.
type absent struct{}

// modernMeta returns a complete 2026-07-28 envelope with the given keys replaced (or removed
// with absent{}).
func modernMeta(over map[string]any) map[string]any {
	m := map[string]any{
		metaPV:   modernVersion,
		metaCaps: map[string]any{},
		metaInfo: map[string]any{"name": "modern-client", "version": "2.0"},
	}
	for k, v := range over {
		if _, ok := v.(absent); ok {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	return m
}

// withMeta returns params (nil for none) with _meta set to meta (nil leaves it out).
func withMeta(params map[string]any, meta map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range params {
		out[k] = v
	}
	if meta != nil {
		out["_meta"] = meta
	}
	return out
}

// modernResult sends a 2026-07-28 request that must succeed and checks what every modern result
// carries: the result and the response valid against the 2026-07-28 definitions, resultType
// "complete" and the server's identity in _meta.
func (c *client) modernResult(method string, params map[string]any, def string) map[string]json.RawMessage {
	c.t.Helper()
	w := c.call(method, withMeta(params, modernMeta(nil)))
	return checkModernResult(c.t, w, def)
}

func checkModernResult(t testing.TB, w *wire, def string) map[string]json.RawMessage {
	t.Helper()
	if w.Error != nil || w.Result == nil {
		t.Fatalf("want a result, got %s", w)
	}
	var members map[string]json.RawMessage // duplicate names fail here
	if err := jsonv2.Unmarshal(w.Result, &members); err != nil {
		t.Fatalf("result %s: %v", w.Result, err)
	}
	if def != "" {
		testutil.ValidateDef(t, modernVersion, def, w.Result)
	}
	resp := "JSONRPCResultResponse"
	if def != "" && def != "Result" && def != "EmptyResult" {
		resp = def + "Response"
	}
	testutil.ValidateDef(t, modernVersion, resp, w.raw)
	if string(members["resultType"]) != `"complete"` {
		t.Errorf("resultType %s, want \"complete\": %s", members["resultType"], w.Result)
	}
	var meta map[string]json.RawMessage
	if err := jsonv2.Unmarshal(members["_meta"], &meta); err != nil {
		t.Fatalf("_meta %s: %v", members["_meta"], err)
	}
	if got := canon(t, meta[metakey.ServerInfo]); got != `{"name":"test-server","version":"1.0.0"}` {
		t.Errorf("serverInfo %s", got)
	}
	return members
}

// wantModernError checks an error reply against the 2026-07-28 schema and its code.
func wantModernError(t testing.TB, w *wire, code int64) {
	t.Helper()
	if w.Error == nil || w.Error.Code != code {
		t.Fatalf("want error %d, got %s", code, w)
	}
	testutil.ValidateDef(t, modernVersion, "JSONRPCErrorResponse", w.raw)
}

// modernServer offers every kind of primitive, completion and a few custom methods.
func modernServer(opts *core.Options) *core.Server {
	if opts == nil {
		opts = &core.Options{}
	}
	if opts.CompletionHandler == nil {
		opts.CompletionHandler = func(context.Context, *core.CompleteRequest) (*core.CompleteResult, error) {
			return &core.CompleteResult{Completion: core.Completion{Values: []string{"a"}}}, nil
		}
	}
	srv := newServer(opts)
	srv.AddTool(&core.Tool{Name: "echo"}, okTool)
	srv.AddPrompt(&core.Prompt{Name: "greet", Arguments: []core.PromptArgument{{Name: "who"}}}, okPrompt)
	srv.AddResource(&core.Resource{URI: "test://r", Name: "r"}, okResource)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, okResource)
	srv.HandleMethod("x/nil", func(context.Context, *core.Call) (any, error) { return nil, nil })
	srv.HandleMethod("x/obj", func(context.Context, *core.Call) (any, error) { return map[string]any{"a": 1}, nil })
	return srv
}

// TestEnvelopeErrors: a claimed envelope with bad keys is -32602 naming them in order; an
// unsupported version is -32022; none of these failures locks the session.
func TestEnvelopeErrors(t *testing.T) {
	both := "Invalid params: missing or invalid `" + metaPV + "`, `" + metaCaps + "` in `_meta`"
	for _, tt := range []struct {
		name    string
		meta    map[string]any
		code    int64
		message string
		data    any
	}{
		{"partial claim", map[string]any{metaPV: modernVersion}, -32602, "Invalid params: missing or invalid `" + metaCaps + "` in `_meta`", nil},
		{"version not a string", map[string]any{metaPV: 5, metaCaps: map[string]any{}}, -32602, "Invalid params: missing or invalid `" + metaPV + "` in `_meta`", nil},
		{"version and capabilities bad", map[string]any{metaPV: true}, -32602, both, nil},
		{"capabilities and clientInfo bad", map[string]any{metaPV: modernVersion, metaCaps: []any{}, metaInfo: "me"}, -32602, "Invalid params: missing or invalid `" + metaCaps + "`, `" + metaInfo + "` in `_meta`", nil},
		{"clientInfo with a bad member", map[string]any{metaPV: modernVersion, metaCaps: map[string]any{}, metaInfo: map[string]any{"name": 1}}, -32602, "Invalid params: missing or invalid `" + metaInfo + "` in `_meta`", nil},
		{"unknown logLevel", map[string]any{metaPV: modernVersion, metaCaps: map[string]any{}, metaLevel: "loud"}, -32602, "Invalid params: missing or invalid `" + metaLevel + "` in `_meta`", nil},
		{"logLevel not a string", map[string]any{metaPV: modernVersion, metaCaps: map[string]any{}, metaLevel: 3}, -32602, "Invalid params: missing or invalid `" + metaLevel + "` in `_meta`", nil},
		{"all four bad", map[string]any{metaPV: 5, metaCaps: 3, metaInfo: 4, metaLevel: "x"}, -32602, "Invalid params: missing or invalid `" + metaPV + "`, `" + metaCaps + "`, `" + metaInfo + "`, `" + metaLevel + "` in `_meta`", nil},
		{"keys before version", map[string]any{metaPV: "2027-01-01"}, -32602, "Invalid params: missing or invalid `" + metaCaps + "` in `_meta`", nil},
		{"future version", map[string]any{metaPV: "2027-01-01", metaCaps: map[string]any{}}, -32022, "Unsupported protocol version", map[string]any{"supported": []string{modernVersion}, "requested": "2027-01-01"}},
		{"handshake version in the envelope", map[string]any{metaPV: "2025-11-25", metaCaps: map[string]any{}}, -32022, "Unsupported protocol version", map[string]any{"supported": []string{modernVersion}, "requested": "2025-11-25"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, modernServer(nil))
			for _, method := range []string{"tools/list", "server/discover", "x/obj"} {
				w := c.call(method, map[string]any{"_meta": tt.meta})
				data := tt.data
				if data == nil {
					data = tt.message // server-layer errors repeat the message in data
				}
				wantError(t, w, tt.code, tt.message, data)
				wantModernError(t, w, tt.code)
				if tt.code == -32022 {
					testutil.ValidateDef(t, modernVersion, "UnsupportedProtocolVersionError", w.raw)
				}
			}
			// The failures did not lock the session: the legacy handshake still works.
			c.initWith("2025-11-25", map[string]any{})
		})
	}
	t.Run("every level is accepted", func(t *testing.T) {
		c := newClient(t, modernServer(nil))
		for _, l := range []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
			w := c.call("tools/list", map[string]any{"_meta": modernMeta(map[string]any{metaLevel: l})})
			checkModernResult(t, w, "ListToolsResult")
		}
	})
}

// TestClassification: only a non-null protocolVersion in _meta claims the modern lifecycle.
func TestClassification(t *testing.T) {
	for _, tt := range []struct {
		name string
		meta any
	}{
		{"progressToken only", map[string]any{"progressToken": 7}},
		{"trace keys only", map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "x=1"}},
		{"null version", map[string]any{metaPV: nil, metaCaps: map[string]any{}}},
		{"capabilities without version", map[string]any{metaCaps: map[string]any{}}},
		{"_meta not an object", "hello"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, modernServer(nil))
			w := c.call("tools/list", map[string]any{"_meta": tt.meta})
			if w.Error != nil {
				t.Fatalf("a legacy request failed: %s", w)
			}
			var r map[string]json.RawMessage
			jsonv2.Unmarshal(w.Result, &r)
			if r["resultType"] != nil || r["_meta"] != nil || r["ttlMs"] != nil {
				t.Errorf("a legacy result was stamped: %s", w.Result)
			}
			testSchema(t, "ListToolsResult", w.Result)
			// Legacy requests without initialize do not lock the session either way.
			c.modernResult("tools/list", nil, "ListToolsResult")
		})
	}
}

var removed = []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}

func removedParams(method string) map[string]any {
	switch method {
	case "initialize":
		return testutil.InitializeParams("2025-11-25")
	case "resources/subscribe", "resources/unsubscribe":
		return map[string]any{"uri": "test://r"}
	case "logging/setLevel":
		return map[string]any{"level": "debug"}
	}
	return nil
}

// TestRemovedMethods: the methods the 2026-07-28 lifecycle dropped are -32601 on a modern
// request, before the capability check, even as the first frame; notifications are accepted.
func TestRemovedMethods(t *testing.T) {
	srv := modernServer(nil) // no SubscribeHandler: resources/subscribe would otherwise be -32603
	for _, m := range removed {
		msg := "Method not found: " + m + " is not part of the modern lifecycle (SEP-2575)"
		t.Run(m+"/claim on a new session", func(t *testing.T) {
			c := newClient(t, srv)
			w := c.call(m, withMeta(removedParams(m), modernMeta(nil)))
			wantError(t, w, -32601, msg, msg)
			wantModernError(t, w, -32601)
			c.initWith("2025-11-25", map[string]any{}) // not locked by the failure
		})
		t.Run(m+"/no claim on a modern session", func(t *testing.T) {
			ss := transport.NewSession(srv, transport.SessionOptions{Modern: true, Out: newSink()})
			t.Cleanup(ss.Close)
			w := parseWire(t, replyOn(ss, body(t, 1, m, removedParams(m)), nil))
			wantError(t, w, -32601, msg, msg)
		})
	}
	t.Run("subscriptions/listen outside HTTP", func(t *testing.T) {
		c := newClient(t, srv)
		w := c.call("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{}}, modernMeta(nil)))
		wantError(t, w, -32601, "Method not found", "subscriptions/listen")
	})
	t.Run("notifications are accepted silently", func(t *testing.T) {
		out := newSink()
		ss := transport.NewSession(srv, transport.SessionOptions{Modern: true, Out: out})
		t.Cleanup(ss.Close)
		for _, n := range []string{
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"` + metaPV + `":"2027-01-01"}}}`,
		} {
			if b := replyOn(ss, n, nil); b != nil {
				t.Errorf("%s answered: %s", n, b)
			}
		}
		c := &client{t: t, srv: srv, ss: ss, out: out}
		c.modernResult("tools/list", nil, "ListToolsResult")
		quiet(t, out)
	})
}

// step is one request of an era lock scenario: modern says whether it carries the envelope;
// code 0 means it must succeed.
type step struct {
	method string
	params map[string]any
	modern bool
	code   int64
	data   string
}

func TestEraLock(t *testing.T) {
	noClaim := "Invalid params: missing or invalid `" + metaPV + "`, `" + metaCaps + "` in `_meta`"
	legacyLocked := "Invalid Request: the session already negotiated the legacy lifecycle via `initialize`"
	removedMsg := func(m string) string {
		return "Method not found: " + m + " is not part of the modern lifecycle (SEP-2575)"
	}
	init := removedParams("initialize")
	for _, tt := range []struct {
		name  string
		opts  transport.SessionOptions
		steps []step
	}{
		{"a modern request locks modern", transport.SessionOptions{}, []step{
			{method: "tools/list", modern: true},
			{method: "tools/list", code: -32602, data: noClaim},
			{method: "x/obj", code: -32602, data: noClaim},
			{method: "server/discover", code: -32602, data: noClaim},
			{method: "initialize", params: init, code: -32601, data: removedMsg("initialize")},
			{method: "ping", code: -32601, data: removedMsg("ping")},
			{method: "tools/list", modern: true},
		}},
		{"initialize locks legacy", transport.SessionOptions{}, []step{
			{method: "initialize", params: init},
			{method: "tools/list", modern: true, code: -32600, data: legacyLocked},
			{method: "server/discover", modern: true, code: -32600, data: legacyLocked},
			{method: "ping", modern: true, code: -32600, data: legacyLocked},
			{method: "tools/list"},
			{method: "ping"},
		}},
		{"an unsupported version does not lock", transport.SessionOptions{}, []step{
			{method: "tools/list", params: map[string]any{"_meta": modernMeta(map[string]any{metaPV: "2027-01-01"})}, code: -32022},
			{method: "initialize", params: init},
		}},
		{"a failing modern handler does not lock", transport.SessionOptions{}, []step{
			{method: "tools/call", params: map[string]any{"name": "nope"}, modern: true, code: -32602, data: "Tool not found: nope"},
			{method: "initialize", params: init},
		}},
		{"discover without envelope locks modern", transport.SessionOptions{}, []step{
			{method: "server/discover"},
			{method: "initialize", params: init, code: -32601, data: removedMsg("initialize")},
			{method: "tools/list", code: -32602, data: noClaim},
			{method: "tools/list", modern: true},
		}},
		{"discover with envelope locks modern", transport.SessionOptions{}, []step{
			{method: "server/discover", modern: true},
			{method: "initialize", params: init, code: -32601, data: removedMsg("initialize")},
		}},
		{"legacy requests before initialize do not lock", transport.SessionOptions{}, []step{
			{method: "tools/list"},
			{method: "ping"},
			{method: "tools/list", modern: true},
			{method: "initialize", params: init, code: -32601, data: removedMsg("initialize")},
		}},
		{"discover on a legacy session", transport.SessionOptions{}, []step{
			{method: "initialize", params: init},
			{method: "server/discover"},
			{method: "tools/list"},
		}},
		{"pre-locked modern", transport.SessionOptions{Modern: true}, []step{
			{method: "tools/list", code: -32602, data: noClaim},
			{method: "server/discover", code: -32602, data: noClaim},
			{method: "initialize", params: init, code: -32601, data: removedMsg("initialize")},
			{method: "tools/list", modern: true},
		}},
		{"an ephemeral session never locks", transport.SessionOptions{Ephemeral: true}, []step{
			{method: "tools/list", modern: true},
			{method: "server/discover"},
			{method: "tools/list"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modernServer(nil)
			out := newSink()
			opts := tt.opts
			opts.Out = out
			ss := transport.NewSession(srv, opts)
			t.Cleanup(ss.Close)
			c := &client{t: t, srv: srv, ss: ss, out: out}
			for i, st := range tt.steps {
				params := st.params
				if st.modern {
					params = withMeta(params, modernMeta(nil))
				}
				w := c.call(st.method, params)
				if st.code == 0 {
					if w.Error != nil {
						t.Fatalf("step %d %s: %s", i, st.method, w)
					}
					continue
				}
				if w.Error == nil || w.Error.Code != st.code {
					t.Fatalf("step %d %s: want %d, got %s", i, st.method, st.code, w)
				}
				if st.data != "" && canon(t, w.Error.Data) != canonOf(t, st.data) {
					t.Errorf("step %d %s: data %s, want %q", i, st.method, w.Error.Data, st.data)
				}
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	stripped := `{"completions":{},"logging":{},"prompts":{},"resources":{},"tools":{}}`
	full := `{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`
	for _, tt := range []struct {
		name     string
		envelope bool
		notify   bool
		caps     string
	}{
		{"no envelope", false, false, stripped},
		{"envelope", true, false, stripped},
		{"envelope with change notifications", true, true, full},
		{"no envelope with change notifications", false, true, full},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := modernServer(&core.Options{Instructions: "Use echo.", SubscribeHandler: core.AcceptSubscription})
			out := newSink()
			ss := transport.NewSession(srv, transport.SessionOptions{Out: out, ChangeNotifications: tt.notify})
			t.Cleanup(ss.Close)
			c := &client{t: t, srv: srv, ss: ss, out: out}
			var params map[string]any
			if tt.envelope {
				params = withMeta(nil, modernMeta(nil))
			}
			r := checkModernResult(t, c.call("server/discover", params), "DiscoverResult")
			if got := canon(t, r["capabilities"]); got != tt.caps {
				t.Errorf("capabilities %s, want %s", got, tt.caps)
			}
			if string(r["supportedVersions"]) != `["2026-07-28"]` || string(r["instructions"]) != `"Use echo."` ||
				string(r["ttlMs"]) != "0" || string(r["cacheScope"]) != `"private"` {
				t.Errorf("discover %v", r)
			}
			if len(r) != 7 {
				t.Errorf("unexpected members in %v", r)
			}
			// The server's own capabilities are not changed by the stripping.
			if caps := srv.Capabilities(); !caps.Tools.ListChanged || !caps.Resources.Subscribe {
				t.Errorf("server capabilities changed: %+v", caps)
			}
			quiet(t, out)
		})
	}
	t.Run("serverInfo is not filtered, no instructions when unset", func(t *testing.T) {
		full := core.Implementation{Name: "test-server", Version: "1.0.0", Title: "T", Description: "D", WebsiteURL: "https://example.com",
			Icons: []core.Icon{{Src: "https://example.com/i.png", MimeType: "image/png"}}}
		srv := core.NewServer(full, core.Options{})
		c := newClient(t, srv)
		w := c.call("server/discover", withMeta(nil, modernMeta(nil)))
		testutil.ValidateDef(t, modernVersion, "DiscoverResult", w.Result)
		var r struct {
			Instructions *string                    `json:"instructions"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		}
		if err := jsonv2.Unmarshal(w.Result, &r); err != nil {
			t.Fatal(err)
		}
		if r.Instructions != nil || canon(t, r.Meta[metakey.ServerInfo]) != canonOf(t, full) {
			t.Errorf("discover %s", w.Result)
		}
	})
}

// TestModernStamping: every 2026-07-28 result carries resultType and serverInfo; cache hints go
// on the cacheable methods only; legacy results are never stamped.
func TestModernStamping(t *testing.T) {
	srv := modernServer(nil)
	c := newClient(t, srv)
	for _, tt := range []struct {
		method    string
		params    map[string]any
		def       string
		cacheable bool
	}{
		{"server/discover", nil, "DiscoverResult", true},
		{"tools/list", nil, "ListToolsResult", true},
		{"tools/call", map[string]any{"name": "echo"}, "CallToolResult", false},
		{"prompts/list", nil, "ListPromptsResult", true},
		{"prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}}, "GetPromptResult", false},
		{"resources/list", nil, "ListResourcesResult", true},
		{"resources/templates/list", nil, "ListResourceTemplatesResult", true},
		{"resources/read", map[string]any{"uri": "test://r"}, "ReadResourceResult", true},
		{"resources/read", map[string]any{"uri": "test://t/9"}, "ReadResourceResult", true},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": ""}}, "CompleteResult", false},
		{"x/nil", nil, "EmptyResult", false},
		{"x/obj", nil, "Result", false},
	} {
		t.Run(tt.method, func(t *testing.T) {
			r := c.modernResult(tt.method, tt.params, tt.def)
			if tt.cacheable {
				if string(r["ttlMs"]) != "0" || string(r["cacheScope"]) != `"private"` {
					t.Errorf("cache hints %s %s, want 0 and private", r["ttlMs"], r["cacheScope"])
				}
				testutil.ValidateDef(t, modernVersion, "CacheableResult", mustJSON(t, r))
			} else if r["ttlMs"] != nil || r["cacheScope"] != nil {
				t.Errorf("cache hints on %s", tt.method)
			}
			if tt.method == "x/nil" && len(r) != 2 {
				t.Errorf("empty result %v", r)
			}
		})
	}
	t.Run("legacy results are not stamped", func(t *testing.T) {
		c := newClient(t, srv)
		c.initWith("2025-11-25", map[string]any{})
		for _, m := range []string{"tools/list", "resources/list", "x/nil", "ping"} {
			w := c.call(m, nil)
			var r map[string]json.RawMessage
			if err := jsonv2.Unmarshal(w.Result, &r); err != nil {
				t.Fatal(err)
			}
			if r["resultType"] != nil || r["_meta"] != nil || r["ttlMs"] != nil || r["cacheScope"] != nil {
				t.Errorf("%s legacy result stamped: %s", m, w.Result)
			}
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := jsonv2.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServerInfoMerge: the server's identity joins a _meta the handler set; a handler's own
// serverInfo and resultType are kept.
func TestServerInfoMerge(t *testing.T) {
	srv := newServer(nil)
	info := `{"name":"test-server","version":"1.0.0"}`
	for name, res := range map[string]any{
		"x/meta":      map[string]any{"_meta": map[string]any{"x": 1}, "a": 2},
		"x/own-info":  map[string]any{"_meta": map[string]any{metakey.ServerInfo: map[string]any{"name": "proxy", "version": "9"}}},
		"x/empty":     map[string]any{"_meta": map[string]any{}},
		"x/null-meta": map[string]any{"_meta": nil, "a": 1},
		"x/input":     map[string]any{"resultType": "input_required", "requestState": "s"},
		"x/raw":       json.RawMessage(`{ "_meta" : { "k" : [1, {"a":{}}] } , "b" : {} }`),
	} {
		srv.HandleMethod(name, func(context.Context, *core.Call) (any, error) { return res, nil })
	}
	srv.AddTool(&core.Tool{Name: "meta"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		r := core.TextResult("x")
		r.Meta = core.Meta{"k": "v"}
		return r, nil
	})
	c := newClient(t, srv)
	for _, tt := range []struct {
		method, params string
		want           string
	}{
		{"x/meta", "", `{"_meta":{"` + metakey.ServerInfo + `":` + info + `,"x":1},"a":2,"resultType":"complete"}`},
		{"x/own-info", "", `{"_meta":{"` + metakey.ServerInfo + `":{"name":"proxy","version":"9"}},"resultType":"complete"}`},
		{"x/empty", "", `{"_meta":{"` + metakey.ServerInfo + `":` + info + `},"resultType":"complete"}`},
		{"x/null-meta", "", `{"_meta":null,"a":1,"resultType":"complete"}`},
		{"x/input", "", `{"_meta":{"` + metakey.ServerInfo + `":` + info + `},"requestState":"s","resultType":"input_required"}`},
		{"x/raw", "", `{"_meta":{"` + metakey.ServerInfo + `":` + info + `,"k":[1,{"a":{}}]},"b":{},"resultType":"complete"}`},
		{"tools/call", "meta", `{"_meta":{"` + metakey.ServerInfo + `":` + info + `,"k":"v"},"content":[{"text":"x","type":"text"}],"isError":false,"resultType":"complete"}`},
	} {
		t.Run(tt.method+tt.params, func(t *testing.T) {
			params := map[string]any{}
			if tt.params != "" {
				params["name"] = tt.params
			}
			w := c.call(tt.method, withMeta(params, modernMeta(nil)))
			if w.Error != nil {
				t.Fatalf("%s", w)
			}
			var members map[string]json.RawMessage
			if err := jsonv2.Unmarshal(w.Result, &members); err != nil {
				t.Fatalf("result %s is not one JSON object with unique members: %v", w.Result, err)
			}
			if got := canon(t, w.Result); got != tt.want {
				t.Errorf("result\n got %s\nwant %s", got, tt.want)
			}
			if tt.method == "tools/call" {
				testutil.ValidateDef(t, modernVersion, "CallToolResult", w.Result)
			}
		})
	}
}

func TestCacheHints(t *testing.T) {
	read := func(ttl int64, scope string, set bool, resultType string) core.ResourceHandler {
		return func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			r := &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}
			if set {
				r.SetCache(ttl, scope)
			}
			r.ResultType = resultType
			return r, nil
		}
	}
	build := func(opts *core.Options) *core.Server {
		srv := modernServer(opts)
		srv.AddResource(&core.Resource{URI: "test://own", Name: "own"}, read(5, "private", true, ""))
		srv.AddResource(&core.Resource{URI: "test://ttl-only", Name: "ttl-only"}, read(0, "", true, ""))
		srv.AddResource(&core.Resource{URI: "test://input", Name: "input"}, read(0, "", false, "input_required"))
		return srv
	}
	for _, tt := range []struct {
		name              string
		opts              *core.Options
		method, uri       string
		wantTTL, wantScop string // empty: absent
	}{
		{"defaults", nil, "tools/list", "", "0", `"private"`},
		{"options", &core.Options{CacheTTLMs: 60000, CacheScope: "public"}, "tools/list", "", "60000", `"public"`},
		{"options on discover", &core.Options{CacheTTLMs: 60000, CacheScope: "public"}, "server/discover", "", "60000", `"public"`},
		{"options on read", &core.Options{CacheTTLMs: 1000}, "resources/read", "test://r", "1000", `"private"`},
		{"handler wins", &core.Options{CacheTTLMs: 60000, CacheScope: "public"}, "resources/read", "test://own", "5", `"private"`},
		{"handler ttl, default scope", &core.Options{CacheTTLMs: 60000, CacheScope: "public"}, "resources/read", "test://ttl-only", "0", `"public"`},
		{"never on input_required", &core.Options{CacheTTLMs: 60000}, "resources/read", "test://input", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, build(tt.opts))
			params := map[string]any{}
			if tt.uri != "" {
				params["uri"] = tt.uri
			}
			w := c.call(tt.method, withMeta(params, modernMeta(nil)))
			var r map[string]json.RawMessage
			if w.Error != nil || jsonv2.Unmarshal(w.Result, &r) != nil {
				t.Fatalf("%s", w)
			}
			if string(r["ttlMs"]) != tt.wantTTL || string(r["cacheScope"]) != tt.wantScop {
				t.Errorf("ttlMs %s cacheScope %s, want %q %q", r["ttlMs"], r["cacheScope"], tt.wantTTL, tt.wantScop)
			}
			if tt.wantTTL != "" {
				testutil.ValidateDef(t, modernVersion, "CacheableResult", w.Result)
			} else if string(r["resultType"]) != `"input_required"` {
				t.Errorf("resultType %s", r["resultType"])
			}
		})
	}
	t.Run("legacy read keeps the handler's hints only", func(t *testing.T) {
		c := newClient(t, build(&core.Options{CacheTTLMs: 60000, CacheScope: "public"}))
		c.initWith("2025-11-25", map[string]any{})
		var r map[string]json.RawMessage
		jsonv2.Unmarshal(c.call("resources/read", map[string]any{"uri": "test://own"}).Result, &r)
		if string(r["ttlMs"]) != "5" || string(r["cacheScope"]) != `"private"` || r["resultType"] != nil {
			t.Errorf("legacy read %v", r)
		}
		r = nil
		jsonv2.Unmarshal(c.call("tools/list", nil).Result, &r)
		if r["ttlMs"] != nil {
			t.Errorf("legacy list stamped: %v", r)
		}
	})
}

func TestRequireClientCapability(t *testing.T) {
	srv := newServer(nil)
	srv.HandleMethod("x/needs-url", func(_ context.Context, call *core.Call) (any, error) {
		return nil, call.RequireClientCapability("elicitation", "url")
	})
	srv.HandleMethod("x/needs-sampling", func(_ context.Context, call *core.Call) (any, error) {
		return nil, call.RequireClientCapability("sampling")
	})
	urlMissing := `json:{"requiredCapabilities":{"elicitation":{"url":{}}}}`
	samplingMissing := `json:{"requiredCapabilities":{"sampling":{}}}`
	for _, tt := range []struct {
		name   string
		caps   map[string]any
		method string
		data   string // empty: success
	}{
		{"form only, url needed", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, "x/needs-url", urlMissing},
		{"url declared", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, "x/needs-url", ""},
		{"nothing declared", map[string]any{}, "x/needs-sampling", samplingMissing},
		{"null is not declared", map[string]any{"sampling": nil}, "x/needs-sampling", samplingMissing},
		{"sampling declared", map[string]any{"sampling": map[string]any{}}, "x/needs-sampling", ""},
	} {
		t.Run("modern/"+tt.name, func(t *testing.T) {
			c := newClient(t, srv)
			w := c.call(tt.method, withMeta(nil, modernMeta(map[string]any{metaCaps: tt.caps})))
			if tt.data == "" {
				checkModernResult(t, w, "Result")
				return
			}
			wantError(t, w, -32021, "Missing required client capability", tt.data)
			testutil.ValidateDef(t, modernVersion, "MissingRequiredClientCapabilityError", w.raw)
		})
	}
	t.Run("legacy uses the initialize capabilities", func(t *testing.T) {
		c := newClient(t, srv)
		c.initWith("2025-11-25", map[string]any{"sampling": map[string]any{}})
		if w := c.call("x/needs-sampling", nil); w.Error != nil {
			t.Errorf("%s", w)
		}
		wantError(t, c.call("x/needs-url", nil), -32021, "Missing required client capability", urlMissing)
	})
}

// TestModernAccessors: on a modern request the envelope answers what the client is; nothing is
// kept for the next request.
func TestModernAccessors(t *testing.T) {
	type seen struct {
		Version string                  `json:"version"`
		Info    *core.Implementation    `json:"info"`
		Caps    core.ClientCapabilities `json:"caps"`
		Modern  bool                    `json:"modern"`
		Level   core.LoggingLevel       `json:"level"`
	}
	srv := newServer(nil)
	srv.HandleMethod("x/who", func(_ context.Context, call *core.Call) (any, error) {
		s := seen{Version: call.ProtocolVersion(), Info: call.ClientInfo(), Caps: call.ClientCapabilities(), Modern: call.Modern() != nil}
		if call.Modern() != nil {
			s.Level = call.Modern().LogLevel
		}
		return s, nil
	})
	who := func(c *client, meta map[string]any) seen {
		t.Helper()
		w := c.call("x/who", withMeta(nil, meta))
		var s seen
		if w.Error != nil || jsonv2.Unmarshal(w.Result, &s) != nil {
			t.Fatalf("%s", w)
		}
		return s
	}
	c := newClient(t, srv)
	s := who(c, modernMeta(map[string]any{metaCaps: map[string]any{"roots": map[string]any{}}, metaLevel: "notice"}))
	if s.Version != modernVersion || s.Info == nil || s.Info.Name != "modern-client" || !s.Caps.Has("roots") || !s.Modern || s.Level != "notice" {
		t.Errorf("first request saw %+v", s)
	}
	s = who(c, modernMeta(map[string]any{metaInfo: absent{}}))
	if s.Info != nil || s.Caps.Has("roots") || s.Level != "" {
		t.Errorf("the second request saw the first one's envelope: %+v", s)
	}
	if c.ss.ClientInfo() != nil || c.ss.ClientCapabilities() != nil || c.ss.ProtocolVersion() != "" {
		t.Error("the session kept what an envelope said")
	}

	legacy := newClient(t, srv)
	legacy.initWith("2025-06-18", map[string]any{"sampling": map[string]any{}})
	s = who(legacy, nil)
	if s.Version != "2025-06-18" || s.Info == nil || s.Info.Name != "test-client" || !s.Caps.Has("sampling") || s.Modern {
		t.Errorf("legacy request saw %+v", s)
	}
}

// TestModernLogging: a modern request gets log messages at or above its own logLevel, and none
// without one, whatever the server's default.
func TestModernLogging(t *testing.T) {
	sent := make(chan []bool, 1)
	srv := newServer(&core.Options{LogLevel: core.LevelDebug})
	srv.AddTool(&core.Tool{Name: "chatty"}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var got []bool
		for _, l := range []core.LoggingLevel{"debug", "info", "warning", "error", "bogus"} {
			ok, err := req.Log(l, "chatty", map[string]any{"at": string(l)})
			if err != nil {
				return nil, err
			}
			got = append(got, ok)
		}
		sent <- got
		return core.TextResult("done"), nil
	})
	for _, tt := range []struct {
		name string
		meta map[string]any
		want string
	}{
		{"warning", modernMeta(map[string]any{metaLevel: "warning"}), "[warning error]"},
		{"debug", modernMeta(map[string]any{metaLevel: "debug"}), "[debug info warning error]"},
		{"emergency", modernMeta(map[string]any{metaLevel: "emergency"}), "[]"},
		{"no logLevel", modernMeta(nil), "[]"},
		{"legacy, server default", nil, "[debug info warning error]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv)
			if tt.meta == nil {
				c.initWith("2025-11-25", map[string]any{})
			}
			path := newSink()
			w := parseWire(t, replyOn(c.ss, body(t, 1, "tools/call", withMeta(map[string]any{"name": "chatty"}, tt.meta)), path))
			if w.Error != nil {
				t.Fatalf("%s", w)
			}
			flags := await(t, sent, "the tool")
			levels := []string{}
			for _, m := range path.all(t) {
				if m.Method != "notifications/message" {
					t.Errorf("unexpected %s", m)
					continue
				}
				version := specVersion
				if tt.meta != nil {
					version = modernVersion
				}
				testutil.ValidateDef(t, version, "LoggingMessageNotification", m.raw)
				var p struct {
					Level string `json:"level"`
				}
				jsonv2.Unmarshal(m.Params, &p)
				levels = append(levels, p.Level)
			}
			if got := sprint(levels); got != tt.want {
				t.Errorf("sent %s, want %s", got, tt.want)
			}
			for i, l := range []string{"debug", "info", "warning", "error"} {
				if flags[i] != slices.Contains(levels, l) {
					t.Errorf("Log reported %v for %s, sent %v", flags[i], l, levels)
				}
			}
			if flags[4] {
				t.Error("a message with an unknown level was reported sent")
			}
			quiet(t, c.out)
		})
	}
}
