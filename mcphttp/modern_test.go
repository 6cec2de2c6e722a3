package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

// §3.6 rows 1-13 and 15: the modern POST ladder, each row through the whole default stack.
func TestModernLadder(t *testing.T) {
	f := newFixture(t, mcphttp.Options{MaxRequestBytes: 2048})
	echo := call(1, "echo", map[string]any{"text": "hi"})

	t.Run("1 not POST", func(t *testing.T) {
		for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
			for _, accept := range []string{testutil.AcceptSSE, ""} {
				rep := f.raw(t, method, "", "MCP-Protocol-Version", modernVersion, "Accept", accept)
				rep.WantError(t, http.StatusMethodNotAllowed, -32600, msgMethodNotAllw, "null")
				if got := rep.Header.Get("Allow"); got != "POST" {
					t.Errorf("%s (Accept %q): Allow = %q, want POST", method, accept, got)
				}
			}
		}
	})
	t.Run("2 Accept", func(t *testing.T) {
		for _, accept := range []string{"application/json", "text/event-stream", "text/html"} {
			f.modern(t, echo, "Accept", accept).WantError(t, http.StatusNotAcceptable, -32600, msgAcceptBoth, "null")
		}
		for _, accept := range []string{"*/*", "application/json;q=0.9, TEXT/EVENT-STREAM"} {
			wantJSONAnswer(t, f.modern(t, echo, "Accept", accept))
		}
		// JSON response mode is a legacy setting: the modern path still wants both.
		jf := newFixture(t, mcphttp.Options{JSONResponse: true})
		jf.modern(t, echo, "Accept", "application/json").WantError(t, http.StatusNotAcceptable, -32600, msgAcceptBoth, "null")
		// ...and its 406 comes before what the body layers and the mirror checks would say.
		jf.modern(t, echo, "Accept", "application/json", "Content-Type", "text/plain").WantError(t,
			http.StatusNotAcceptable, -32600, msgAcceptBoth, "null")
		jf.modern(t, `{"jsonrpc":`, "Accept", "application/json", "Mcp-Method", "tools/list").WantError(t, http.StatusNotAcceptable, -32600, msgAcceptBoth, "null")
		jf.modern(t, echo, "Accept", "application/json", "Mcp-Method", "").WantError(t,
			http.StatusNotAcceptable, -32600, msgAcceptBoth, "null")
		jf.modern(t, echo, "Accept", "application/json", "MCP-Protocol-Version", "1900-01-01", "Content-Type", "text/plain").WantError(t,
			http.StatusNotAcceptable, -32600, msgAcceptBoth, "null")
		// A legacy initialize sent with the newest version header (a client probing) is still
		// legacy: in JSON mode it needs application/json only.
		rep := jf.raw(t, http.MethodPost, testutil.Initialize(0, "2025-11-25"), "MCP-Protocol-Version", modernVersion, "Accept", "application/json")
		if rep.Status != http.StatusOK || rep.Header.Get(middleware.HeaderSessionID) == "" {
			t.Fatalf("probing initialize in JSON mode: %d %s", rep.Status, rep.Body)
		}
	})
	t.Run("3 Content-Type", func(t *testing.T) {
		f.modern(t, echo, "Content-Type", "text/plain").WantError(t, http.StatusUnsupportedMediaType, -32600,
			"Unsupported Media Type: Content-Type must be application/json", "null")
	})
	t.Run("4 too large", func(t *testing.T) {
		big := call(1, "echo", map[string]any{"text": strings.Repeat("x", 4096)})
		f.modern(t, big).WantError(t, http.StatusRequestEntityTooLarge, -32600, "Payload too large: request body exceeds 2048 bytes", "null")
	})
	t.Run("5 not JSON", func(t *testing.T) {
		f.modern(t, `{"jsonrpc":`, "Mcp-Method", "tools/list").WantError(t, http.StatusBadRequest, -32700, "Parse error", "null")
	})
	t.Run("6 not an object", func(t *testing.T) {
		req := modernPost(f.client(), `{}`, "Mcp-Method", "tools/list")
		req.Body = io.NopCloser(strings.NewReader(`[` + echo + `]`))
		req.ContentLength = int64(len(echo) + 2)
		f.client().Do(t, req).WantError(t, http.StatusBadRequest, -32600, "Invalid Request: JSON-RPC body must be a single request object", "null")
	})
	t.Run("7 unsupported version", func(t *testing.T) {
		// Checked before any other content check: no Mcp-Method, no envelope at all.
		body := testutil.Request("v", "tools/list", nil)
		rep := f.raw(t, http.MethodPost, body, "MCP-Protocol-Version", "1900-01-01", "Accept", testutil.AcceptBoth)
		rep.WantError(t, http.StatusBadRequest, -32022, "Unsupported protocol version", `"v"`)
		wantData(t, rep, `{"supported":["2026-07-28"],"requested":"1900-01-01"}`)
		checkModernSchema(t, "UnsupportedProtocolVersionError", rep.Body)
	})
	t.Run("9 body version", func(t *testing.T) {
		body := withMeta(2, "tools/list", nil, map[string]any{"io.modelcontextprotocol/protocolVersion": "2025-11-25"})
		rep := f.modern(t, body, "MCP-Protocol-Version", modernVersion)
		rep.WantError(t, http.StatusBadRequest, -32020,
			"Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value '2025-11-25'", "2")
		checkModernSchema(t, "HeaderMismatchError", rep.Body)
	})
	t.Run("10 Mcp-Method missing", func(t *testing.T) {
		f.modern(t, echo, "Mcp-Method", "").WantError(t, http.StatusBadRequest, -32020,
			"Header mismatch: Mcp-Method header is required on the modern path", "1")
		// Notifications too.
		f.modern(t, testutil.ModernRequest(nil, "notifications/initialized", nil), "Mcp-Method", "").WantError(t,
			http.StatusBadRequest, -32020, "Header mismatch: Mcp-Method header is required on the modern path", "null")
	})
	t.Run("11 Mcp-Method mismatch", func(t *testing.T) {
		f.modern(t, echo, "Mcp-Method", "tools/list").WantError(t, http.StatusBadRequest, -32020,
			"Header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'", "1")
		// Values are case-sensitive.
		f.modern(t, echo, "Mcp-Method", "TOOLS/CALL").WantError(t, http.StatusBadRequest, -32020,
			"Header mismatch: Mcp-Method header value 'TOOLS/CALL' does not match body value 'tools/call'", "1")
	})
	t.Run("12 Mcp-Name missing", func(t *testing.T) {
		f.modern(t, echo, "Mcp-Name", "").WantError(t, http.StatusBadRequest, -32020,
			"Header mismatch: Mcp-Name header is required for `tools/call`", "1")
	})
	t.Run("13 Mcp-Name mismatch", func(t *testing.T) {
		f.modern(t, echo, "Mcp-Name", "whoami").WantError(t, http.StatusBadRequest, -32020,
			"Header mismatch: Mcp-Name header value 'whoami' does not match body value 'echo'", "1")
	})
	t.Run("15a notification", func(t *testing.T) {
		wantEmpty(t, f.modern(t, testutil.ModernRequest(nil, "notifications/initialized", nil)), http.StatusAccepted)
		wantEmpty(t, f.modern(t, testutil.ModernRequest(nil, "notifications/cancelled", map[string]any{"requestId": 1})), http.StatusAccepted)
	})
	t.Run("15b JSON", func(t *testing.T) {
		rep := f.modern(t, echo)
		w := wantJSONAnswer(t, rep)
		if got := toolText(t, wantResult(t, w, "1")); got != "hi" {
			t.Fatalf("echo %q", got)
		}
		if rep.Header.Get(middleware.HeaderSessionID) != "" {
			t.Fatal("the modern lifecycle issued a session id")
		}
		checkModernSchema(t, "CallToolResultResponse", rep.Body)
	})
	t.Run("15c SSE even for an error", func(t *testing.T) {
		body := withMeta("e", "test/fail", map[string]any{"code": -32601}, map[string]any{"progressToken": "t"})
		rep := f.modern(t, body)
		if rep.Status != http.StatusOK || rep.ContentType() != "text/event-stream" {
			t.Fatalf("answer %d %q, want 200 text/event-stream", rep.Status, rep.ContentType())
		}
		evs := rep.Events(t)
		if len(evs) != 2 || evs[0].Method != "notifications/progress" || evs[1].Error == nil || evs[1].Error.Code != -32601 {
			t.Fatalf("frames %s", rep.Body)
		}
	})
}

// §3.6 row 8: the Modern handler refuses a session id (New never routes one there, so the handler
// is mounted alone).
func TestModernRefusesSessionID(t *testing.T) {
	s := newServer(newTools())
	h := middleware.Decode(middleware.DecodeOptions{})(middleware.SSE(middleware.SSEOptions{})(mcphttp.NewModern(s, mcphttp.ModernOptions{})))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := testutil.NewClient(srv.URL, srv.Client())
	req := c.NewModernPost(context.Background(), testutil.ModernRequest(3, "tools/list", nil))
	req.Header.Set(middleware.HeaderSessionID, "abc")
	c.Do(t, req).WantError(t, http.StatusBadRequest, -32600, "Bad Request: Mcp-Session-Id is not accepted in the modern lifecycle", "3")
}

// §3.8: the HTTP status of each JSON-RPC outcome, as the handler's own error reaches the wire.
func TestModernStatusMapping(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	for _, tc := range []struct {
		code   int64
		status int
	}{
		{-32601, 404},
		{-32020, 400}, {-32021, 400}, {-32022, 400}, {-32700, 400}, {-32600, 400}, {-32602, 400},
		{-32603, 200}, {-32001, 200}, {-32000, 200}, {1234, 200},
	} {
		rep := f.modern(t, testutil.ModernRequest(7, "test/fail", map[string]any{"code": tc.code}))
		rep.WantError(t, tc.status, tc.code, "test failure", "7")
		if got := mcphttp.ModernStatus(&jsonrpc.Error{Code: tc.code}); got != tc.status {
			t.Errorf("ModernStatus(%d) = %d, want %d", tc.code, got, tc.status)
		}
	}
	// -32042 does not exist on the modern wire: it becomes -32603, still 200.
	rep := f.modern(t, testutil.ModernRequest(8, "test/fail", map[string]any{"code": -32042}))
	if w := testutil.DecodeWire(t, rep.Body); rep.Status != http.StatusOK || w.Error == nil || w.Error.Code != -32603 {
		t.Fatalf("-32042 on the modern wire: %d %s", rep.Status, rep.Body)
	}
	if got := mcphttp.ModernStatus(nil); got != http.StatusOK {
		t.Errorf("ModernStatus(nil) = %d", got)
	}
	// Success, and errors from the core: a missing capability, an unknown tool.
	wantJSONAnswer(t, f.modern(t, call(9, "whoami", nil)))
	rep = f.modern(t, call(10, "needs_sampling", nil))
	rep.WantError(t, http.StatusBadRequest, -32021, "Missing required client capability", "10")
	wantData(t, rep, `{"requiredCapabilities":{"sampling":{}}}`)
	checkModernSchema(t, "MissingRequiredClientCapabilityError", rep.Body)
	sampling := withMeta(11, "tools/call", map[string]any{"name": "needs_sampling"},
		map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"sampling": map[string]any{}}})
	if got := toolText(t, wantResult(t, wantJSONAnswer(t, f.modern(t, sampling)), "11")); got != "sampled" {
		t.Fatalf("with sampling declared: %q", got)
	}
	rep = f.modern(t, call(12, "nope", nil))
	if w := testutil.DecodeWire(t, rep.Body); rep.Status != http.StatusBadRequest || w.Error == nil || w.Error.Code != -32602 {
		t.Fatalf("unknown tool: %d %s", rep.Status, rep.Body)
	}
}

// Methods the modern lifecycle removed, and unknown ones, are 404 -32601.
func TestModernRemovedMethods(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	for i, m := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		params := map[string]any{}
		switch m {
		case "initialize":
			params = testutil.InitializeParams(modernVersion)
		case "logging/setLevel":
			params["level"] = "debug"
		case "resources/subscribe", "resources/unsubscribe":
			params["uri"] = "test://doc"
		}
		rep := f.modern(t, testutil.ModernRequest(i, m, params))
		rep.WantError(t, http.StatusNotFound, -32601, "Method not found: "+m+" is not part of the modern lifecycle (SEP-2575)", strconv.Itoa(i))
		checkModernSchema(t, "JSONRPCErrorResponse", rep.Body)
		checkModernSchema(t, "MethodNotFoundError", errorMember(t, rep.Body))
	}
	rep := f.modern(t, testutil.ModernRequest("u", "unknown/method", nil))
	if w := testutil.DecodeWire(t, rep.Body); rep.Status != http.StatusNotFound || w.Error == nil || w.Error.Code != -32601 || string(w.ID) != `"u"` {
		t.Fatalf("unknown method: %d %s", rep.Status, rep.Body)
	}
}

// server/discover over HTTP: the capabilities keep listChanged and subscribe only while listen is
// served; the result validates against the 2026-07-28 schema.
func TestModernDiscover(t *testing.T) {
	type discover struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		ResultType        string          `json:"resultType"`
		TTL               *int64          `json:"ttlMs"`
		CacheScope        string          `json:"cacheScope"`
		Meta              struct {
			ServerInfo struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	for _, tc := range []struct {
		name string
		opts mcphttp.Options
		caps string
	}{
		{"listen", mcphttp.Options{},
			`{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`},
		{"disabled", mcphttp.Options{DisableListen: true},
			`{"logging":{},"prompts":{},"resources":{},"tools":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			rep := f.modern(t, testutil.ModernRequest("d", "server/discover", nil))
			w := wantJSONAnswer(t, rep)
			checkModernSchema(t, "DiscoverResultResponse", rep.Body)
			var d discover
			if err := json.Unmarshal(wantResult(t, w, `"d"`), &d); err != nil {
				t.Fatal(err)
			}
			if len(d.SupportedVersions) != 1 || d.SupportedVersions[0] != modernVersion || d.ResultType != "complete" ||
				d.TTL == nil || d.CacheScope != "private" || d.Meta.ServerInfo.Name != "mcphttp-test" {
				t.Fatalf("discover result %s", w.Result)
			}
			sameJSONText(t, "capabilities", d.Capabilities, tc.caps)
			// The modern lifecycle has no session: discover without the envelope is -32602.
			f.modern(t, testutil.Request(5, "server/discover", nil)).WantError(t, http.StatusBadRequest, -32602,
				"Invalid params: missing or invalid `io.modelcontextprotocol/protocolVersion`, `io.modelcontextprotocol/clientCapabilities` in `_meta`", "5")
		})
	}
}

// Modern results and errors validate against the 2026-07-28 schema, and every error echoes the
// request id (numbers and strings alike).
func TestModernSchemaAndIDs(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	for _, tc := range []struct {
		body, def string
	}{
		{testutil.ModernRequest(1, "tools/list", nil), "ListToolsResultResponse"},
		{call("c", "echo", map[string]any{"text": "x"}), "CallToolResultResponse"},
		{testutil.ModernRequest(2, "prompts/list", nil), "ListPromptsResultResponse"},
		{testutil.ModernRequest(3, "prompts/get", map[string]any{"name": "greet"}), "GetPromptResultResponse"},
		{testutil.ModernRequest(4, "resources/list", nil), "ListResourcesResultResponse"},
		{testutil.ModernRequest(5, "resources/read", map[string]any{"uri": "test://doc"}), "ReadResourceResultResponse"},
		{testutil.ModernRequest(6, "resources/templates/list", nil), "ListResourceTemplatesResultResponse"},
	} {
		rep := f.modern(t, tc.body)
		wantJSONAnswer(t, rep)
		checkModernSchema(t, tc.def, rep.Body)
	}
	for _, id := range []any{0, 42, "abc", "a-b_c"} {
		idJSON := mustJSON(t, id)
		for _, rep := range []testutil.Reply{
			f.modern(t, call(id, "echo", nil), "Mcp-Name", "whoami"),                                   // mirror layer
			f.modern(t, testutil.Request(id, "tools/list", nil), "MCP-Protocol-Version", "2099-01-01"), // version
			f.modern(t, testutil.ModernRequest(id, "ping", nil)),                                       // core: removed
			f.modern(t, testutil.Request(id, "tools/list", nil)),                                       // core: no envelope
		} {
			w := testutil.DecodeWire(t, rep.Body)
			if w.Error == nil || string(w.ID) != idJSON {
				t.Errorf("id %s: answer %s", idJSON, rep.Body)
			}
			checkModernSchema(t, "JSONRPCErrorResponse", rep.Body)
		}
	}
}

// §3.2: one handler serves a stateful legacy session and modern requests side by side, and routes
// each request by its header first, then its shape.
func TestDualEraRouting(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	legacy := f.initialized(t)
	get := openStream(t, legacy, legacy.NewRequest(context.Background(), http.MethodGet))
	wantSSEHeaders(t, get)

	// Interleaved: legacy, modern, legacy.
	if got := toolText(t, wantResult(t, legacy.Call(t, 1, "tools/call", map[string]any{"name": "whoami"}), "1")); got != "testutil" {
		t.Fatalf("legacy whoami %q", got)
	}
	if got := toolText(t, wantResult(t, wantJSONAnswer(t, f.modern(t, call(1, "whoami", nil))), "1")); got != "testutil" {
		t.Fatalf("modern whoami %q (the envelope's clientInfo)", got)
	}
	wantResult(t, legacy.Call(t, 2, "ping", nil), "2")

	t.Run("unknown header version with a session is refused as legacy", func(t *testing.T) {
		req := legacy.NewPost(context.Background(), testutil.Request(3, "tools/list", nil))
		req.Header.Set(middleware.HeaderProtocolVersion, "1900-01-01")
		legacy.Do(t, req).WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+"1900-01-01"+msgSupportedSuffix, "3")
	})
	t.Run("modern header with a session is legacy", func(t *testing.T) {
		req := legacy.NewPost(context.Background(), testutil.Request(4, "tools/call", map[string]any{"name": "whoami"}))
		req.Header.Set(middleware.HeaderProtocolVersion, modernVersion)
		rep := legacy.Do(t, req)
		if rep.Status != http.StatusOK || rep.ContentType() != "text/event-stream" {
			t.Fatalf("legacy answer %d %q: %s", rep.Status, rep.ContentType(), rep.Body)
		}
		if got := toolText(t, wantResult(t, rep.Message(t), "4")); got != "testutil" {
			t.Fatalf("whoami on the session %q", got)
		}
		// §3.3 row 6: the envelope on that session is refused.
		req = legacy.NewPost(context.Background(), testutil.ModernRequest(5, "tools/list", nil))
		req.Header.Set(middleware.HeaderProtocolVersion, modernVersion)
		legacy.Do(t, req).WantError(t, http.StatusBadRequest, -32600, msgLegacyLocked, "5")
	})
	t.Run("sessionless initialize under the modern header", func(t *testing.T) {
		// Without the claim: legacy, a new session negotiating a handshake version.
		c := f.client()
		req := c.NewPost(context.Background(), testutil.Initialize(0, modernVersion))
		req.Header.Set(middleware.HeaderProtocolVersion, modernVersion)
		rep := c.Do(t, req)
		if rep.Status != http.StatusOK || rep.ContentType() != "application/json" || rep.Header.Get(middleware.HeaderSessionID) == "" {
			t.Fatalf("initialize: %d %q session %q: %s", rep.Status, rep.ContentType(), rep.Header.Get(middleware.HeaderSessionID), rep.Body)
		}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := json.Unmarshal(wantResult(t, testutil.DecodeWire(t, rep.Body), "0"), &res); err != nil || res.ProtocolVersion != "2025-11-25" {
			t.Fatalf("negotiated %q (%v)", res.ProtocolVersion, err)
		}
		// With the claim: modern, where initialize does not exist.
		f.modern(t, testutil.ModernRequest(0, "initialize", testutil.InitializeParams(modernVersion))).WantError(t,
			http.StatusNotFound, -32601, "Method not found: initialize is not part of the modern lifecycle (SEP-2575)", "0")
	})
	t.Run("GET and DELETE under the modern header", func(t *testing.T) {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			f.raw(t, method, "", "MCP-Protocol-Version", modernVersion, "Accept", testutil.AcceptSSE).WantError(t,
				http.StatusMethodNotAllowed, -32600, msgMethodNotAllw, "null")
		}
	})
	t.Run("legacy guard", func(t *testing.T) {
		// §3.3 row 7: the envelope without the modern header, with or without a session.
		body := testutil.ModernRequest(6, "tools/list", nil)
		for _, hdr := range [][]string{
			{},
			{"MCP-Protocol-Version", "2025-11-25"},
			{"MCP-Protocol-Version", "2025-11-25", "Mcp-Session-Id", legacy.SessionID},
		} {
			args := append([]string{"Accept", testutil.AcceptBoth}, hdr...)
			rep := f.raw(t, http.MethodPost, body, args...)
			rep.WantError(t, http.StatusBadRequest, -32020, msgEnvelopeHdr, "6")
			checkModernSchema(t, "HeaderMismatchError", rep.Body)
		}
	})

	// The legacy session is untouched by all of this: its GET stream gets a broadcast, and it ends
	// with DELETE.
	f.server.NotifyToolsListChanged(context.Background())
	ev, err := nextEvent(t, testutil.NewSSEReader(get.Body), true)
	if err != nil || testutil.DecodeWire(t, []byte(ev.Data)).Method != "notifications/tools/list_changed" {
		t.Fatalf("GET stream: %v %q", err, ev.Data)
	}
	if rep := legacy.Do(t, legacy.NewRequest(context.Background(), http.MethodDelete)); rep.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", rep.Status, rep.Body)
	}
}

// Mirror headers through the whole stack: names are case-insensitive, values are compared after
// trimming and base64 decoding, Mcp-Param-* are checked against the tool's x-mcp-header arguments.
func TestModernMirrorHeaders(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.client()

	// Header names in any case.
	req := c.NewModernPost(context.Background(), testutil.ModernRequest(1, "tools/list", nil))
	req.Header.Del(middleware.HeaderMethod)
	req.Header["mcp-method"] = []string{"tools/list"}
	wantJSONAnswer(t, c.Do(t, req))
	req = c.NewModernPost(context.Background(), testutil.ModernRequest(1, "tools/list", nil))
	req.Header.Del(middleware.HeaderMethod)
	req.Header["MCP-METHOD"] = []string{"tools/list"}
	wantJSONAnswer(t, c.Do(t, req))

	// Surrounding spaces.
	wantJSONAnswer(t, f.modern(t, call(2, "echo", nil), "Mcp-Name", "  echo  "))

	// Names that are not plain ASCII travel in base64; raw bytes are refused.
	prompt := testutil.ModernRequest(3, "prompts/get", map[string]any{"name": "grüße"})
	rep := f.modern(t, prompt)
	if h := testutil.ModernHeaders(prompt).Get(middleware.HeaderName); !strings.HasPrefix(h, "=?base64?") {
		t.Fatalf("Mcp-Name %q is not base64", h)
	}
	wantJSONAnswer(t, rep)
	f.modern(t, prompt, "Mcp-Name", "grüße").WantError(t, http.StatusBadRequest, -32020, "Header mismatch: Mcp-Name header value is not valid", "3")
	f.modern(t, prompt, "Mcp-Name", "=?base64?Z3L!!?=").WantError(t, http.StatusBadRequest, -32020, "Header mismatch: Mcp-Name header value is not valid", "3")
	read := testutil.ModernRequest(4, "resources/read", map[string]any{"uri": "test://dóc"})
	wantJSONAnswer(t, f.modern(t, read))
	f.modern(t, read, "Mcp-Name", "test://doc").WantError(t, http.StatusBadRequest, -32020,
		"Header mismatch: Mcp-Name header value 'test://doc' does not match body value 'test://dóc'", "4")
	f.modern(t, testutil.ModernRequest(5, "prompts/get", map[string]any{"name": "greet"}), "Mcp-Name", "").WantError(t,
		http.StatusBadRequest, -32020, "Header mismatch: Mcp-Name header is required for `prompts/get`", "5")
	f.modern(t, testutil.ModernRequest(6, "resources/read", map[string]any{"uri": "test://doc"}), "Mcp-Name", "").WantError(t,
		http.StatusBadRequest, -32020, "Header mismatch: Mcp-Name header is required for `resources/read`", "6")

	// Mcp-Param-*: all three mirrored, then each way of getting one wrong.
	args := map[string]any{"region": "eu-west", "priority": 2.5, "dryRun": true, "note": "n"}
	ok := []string{"Mcp-Param-Region", "eu-west", "Mcp-Param-Priority", "2.50", "Mcp-Param-Dry-Run", "true"}
	if got := toolText(t, wantResult(t, wantJSONAnswer(t, f.modern(t, call(7, "headers", args), ok...)), "7")); !strings.Contains(got, `"eu-west"`) {
		t.Fatalf("headers tool %q", got)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		hdr  []string
		msg  string
	}{
		{"header missing", args, []string{"Mcp-Param-Region", ""},
			"Header mismatch: Mcp-Param-Region header is required: argument `region` is present"},
		{"argument missing", map[string]any{"priority": 2.5, "dryRun": true}, nil,
			"Header mismatch: Mcp-Param-Region header is present but argument `region` is not"},
		{"string", args, []string{"Mcp-Param-Region", "eu-east"},
			"Header mismatch: Mcp-Param-Region header value 'eu-east' does not match body value 'eu-west'"},
		{"number", args, []string{"Mcp-Param-Priority", "3"},
			"Header mismatch: Mcp-Param-Priority header value '3' does not match body value '2.5'"},
		{"boolean", args, []string{"Mcp-Param-Dry-Run", "false"},
			"Header mismatch: Mcp-Param-Dry-Run header value 'false' does not match body value 'true'"},
		{"invalid characters", args, []string{"Mcp-Param-Region", "eu-wést"},
			"Header mismatch: Mcp-Param-Region header value is not valid"},
	} {
		hdr := append(append([]string(nil), ok...), tc.hdr...)
		rep := f.modern(t, call(8, "headers", tc.args), hdr...)
		rep.WantError(t, http.StatusBadRequest, -32020, tc.msg, "8")
		if t.Failed() {
			t.Fatalf("case %s", tc.name)
		}
	}
}

// The cases of the conformance suite's http-custom-header-server-validation scenario, against the
// "headers" tool: base64 decoded before comparing, invalid base64 refused, values without the
// whole =?base64?...?= wrapper taken literally, and the header required when the argument is sent.
func TestModernCustomHeaderScenario(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	for _, tc := range []struct {
		name, value, header string
		accept              bool
	}{
		{"valid base64", "Hello", "=?base64?SGVsbG8=?=", true},
		{"invalid padding", "Hello", "=?base64?SGVsbG8?=", false},
		{"invalid characters", "Hello", "=?base64?SGVs!!!bG8=?=", false},
		{"no prefix: literal", "SGVsbG8=", "SGVsbG8=", true},
		{"no suffix: literal", "=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"header omitted", "test-value", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := f.modern(t, call(200, "headers", map[string]any{"region": tc.value}), "Mcp-Param-Region", tc.header)
			if tc.accept {
				if got := toolText(t, wantResult(t, wantJSONAnswer(t, rep), "200")); !strings.Contains(got, tc.value) {
					t.Fatalf("tool got %q", got)
				}
				return
			}
			if w := testutil.DecodeWire(t, rep.Body); rep.Status != http.StatusBadRequest || w.Error == nil || w.Error.Code != -32020 {
				t.Fatalf("%d %s, want 400 -32020", rep.Status, rep.Body)
			}
		})
	}
}

// A notification reaches the client while the handler still runs; the response follows it on the
// same stream, and the stream ends there.
func TestModernLiveNotification(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.client()
	body := withMeta(1, "tools/call", map[string]any{"name": "stream"}, map[string]any{"progressToken": "p1"})
	resp := openStream(t, c, modernPost(c, body))
	wantSSEHeaders(t, resp)
	sr := testutil.NewSSEReader(resp.Body)
	ev, err := nextEvent(t, sr, false)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Event != "message" || ev.ID != "" {
		t.Fatalf("modern frames are event: message, without id: %+v", ev)
	}
	checkModernSchema(t, "ProgressNotification", []byte(ev.Data))
	var p struct {
		Params struct {
			Token string `json:"progressToken"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &p); err != nil || p.Params.Token != "p1" {
		t.Fatalf("progress frame %s", ev.Data)
	}
	// The tool is now blocked on release: it has not returned, and we already hold its frame.
	if got := recv(t, f.tools.notified, "the tool's notification"); got != "1" {
		t.Fatalf("notified by %s", got)
	}
	close(f.tools.release)
	ev, err = nextEvent(t, sr, false)
	if err != nil {
		t.Fatal(err)
	}
	checkModernSchema(t, "CallToolResultResponse", []byte(ev.Data))
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), "1")); got != "streamed" {
		t.Fatalf("result %q", got)
	}
	if _, err := nextEvent(t, sr, false); !errors.Is(err, io.EOF) {
		t.Fatalf("after the response: %v, want the end of the stream", err)
	}
}

// Closing the stream cancels the handler, whether it is an SSE stream already or still a pending
// JSON answer.
func TestModernCloseCancels(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.client()

	body := withMeta(1, "tools/call", map[string]any{"name": "stream"}, map[string]any{"progressToken": 1})
	resp := openStream(t, c, modernPost(c, body))
	wantSSEHeaders(t, resp)
	if _, err := nextEvent(t, testutil.NewSSEReader(resp.Body), true); err != nil {
		t.Fatal(err)
	}
	recv(t, f.tools.notified, "the tool's notification")
	resp.Body.Close()
	if cause := recv(t, f.tools.ctxDone, "the handler's context to end"); !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause %v", cause)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req := c.NewModernPost(ctx, call(2, "waitctx", nil))
		resp, err := c.HTTP.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	recv(t, f.tools.entered, "waitctx to start")
	cancel()
	if cause := recv(t, f.tools.ctxDone, "the handler's context to end"); !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause %v", cause)
	}
	if err := recv(t, done, "the client to give up"); !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
}

// Past MaxRequestNotifications a notify call reports ErrNotificationDropped and nothing more is
// sent; the response still arrives.
func TestModernNotificationBound(t *testing.T) {
	f := newFixture(t, mcphttp.Options{MaxRequestNotifications: 3})
	body := withMeta(1, "tools/call", map[string]any{"name": "flood", "arguments": map[string]any{"count": 6}},
		map[string]any{"progressToken": "f"})
	rep := f.modern(t, body)
	errs := recv(t, f.tools.flooded, "the flood to end")
	for i, err := range errs {
		if i < 3 && err != nil {
			t.Errorf("notification %d: %v", i+1, err)
		}
		if i >= 3 && !errors.Is(err, mcphttp.ErrNotificationDropped) {
			t.Errorf("notification %d: %v, want ErrNotificationDropped", i+1, err)
		}
	}
	evs := rep.Events(t)
	if len(evs) != 4 {
		t.Fatalf("%d frames, want 3 notifications and the response: %s", len(evs), rep.Body)
	}
	for _, w := range evs[:3] {
		if w.Method != "notifications/progress" {
			t.Fatalf("frame %+v", w)
		}
	}
	if got := toolText(t, wantResult(t, evs[3], "1")); got != "flooded" {
		t.Fatalf("result %q", got)
	}
}

// Log messages reach a modern client only when its request names a logLevel, at or above it.
func TestModernLogging(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	rep := f.modern(t, call(1, "log", nil))
	if got := toolText(t, wantResult(t, wantJSONAnswer(t, rep), "1")); got != "" {
		t.Fatalf("without a logLevel the tool sent %q", got)
	}
	rep = f.modern(t, withMeta(2, "tools/call", map[string]any{"name": "log"}, map[string]any{"io.modelcontextprotocol/logLevel": "warning"}))
	evs := rep.Events(t)
	if rep.ContentType() != "text/event-stream" || len(evs) != 3 {
		t.Fatalf("answer %q: %s", rep.ContentType(), rep.Body)
	}
	for i, lvl := range []string{"warning", "error"} {
		checkModernSchema(t, "LoggingMessageNotification", mustJSONRaw(t, evs[i]))
		var p struct {
			Level string `json:"level"`
		}
		if err := json.Unmarshal(evs[i].Params, &p); err != nil || evs[i].Method != "notifications/message" || p.Level != lvl {
			t.Fatalf("frame %d: %s %s", i, evs[i].Method, evs[i].Params)
		}
	}
	if got := toolText(t, wantResult(t, evs[2], "2")); got != "warning,error" {
		t.Fatalf("sent %q", got)
	}
	f.modern(t, withMeta(3, "tools/call", map[string]any{"name": "log"}, map[string]any{"io.modelcontextprotocol/logLevel": "loud"})).WantError(t,
		http.StatusBadRequest, -32602, "Invalid params: missing or invalid `io.modelcontextprotocol/logLevel` in `_meta`", "3")
}

// The modern lifecycle refuses server-to-client requests: the handler sees the refusal, and no
// request frame ever reaches the client.
func TestModernNoServerToClientRequests(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	rep := f.modern(t, call(1, "roots", nil))
	w := wantJSONAnswer(t, rep)
	res := wantResult(t, w, "1")
	if !strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("roots on the modern wire: %s", res)
	}
}

// errorMember returns the error member of a JSON-RPC error response.
func errorMember(t *testing.T, body []byte) []byte {
	t.Helper()
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil || len(m.Error) == 0 {
		t.Fatalf("not an error response: %s", body)
	}
	return m.Error
}

func wantData(t *testing.T, rep testutil.Reply, want string) {
	t.Helper()
	w := testutil.DecodeWire(t, rep.Body)
	if w.Error == nil {
		t.Fatalf("not an error: %s", rep.Body)
	}
	sameJSONText(t, "error.data", w.Error.Data, want)
}

// sameJSONText compares two JSON texts by value.
func sameJSONText(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v: %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s = %s, want %s", what, gb, wb)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustJSONRaw re-encodes a decoded message (for schema checks of SSE frames).
func mustJSONRaw(t *testing.T, w testutil.Wire) []byte {
	t.Helper()
	m := map[string]any{"jsonrpc": w.JSONRPC}
	if len(w.ID) > 0 {
		m["id"] = json.RawMessage(w.ID)
	}
	if w.Method != "" {
		m["method"] = w.Method
	}
	if len(w.Params) > 0 {
		m["params"] = json.RawMessage(w.Params)
	}
	if len(w.Result) > 0 {
		m["result"] = json.RawMessage(w.Result)
	}
	return []byte(mustJSON(t, m))
}
