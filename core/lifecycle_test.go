package core_test

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
)

type initResult struct {
	ProtocolVersion string                    `json:"protocolVersion"`
	Capabilities    map[string]map[string]any `json:"capabilities"`
	ServerInfo      map[string]any            `json:"serverInfo"`
	Instructions    *string                   `json:"instructions"`
}

func TestInitializeNegotiation(t *testing.T) {
	tests := []struct {
		pin, asked, want string
	}{
		{"", "2024-11-05", "2024-11-05"},
		{"", "2025-03-26", "2025-03-26"},
		{"", "2025-06-18", "2025-06-18"},
		{"", "2025-11-25", "2025-11-25"},
		{"", "2026-07-28", "2025-11-25"}, // a modern version is not negotiated by initialize
		{"", "1999-01-01", "2025-11-25"},
		{"", "", "2025-11-25"},
		{"2025-03-26", "2026-07-28", "2025-03-26"},
		{"2025-03-26", "2030-01-01", "2025-03-26"},
		{"2025-03-26", "2025-06-18", "2025-06-18"}, // a handshake version is echoed even with a pin
	}
	for _, tt := range tests {
		t.Run(tt.pin+"/"+tt.asked, func(t *testing.T) {
			c := newClient(t, newServer(&core.Options{ProtocolVersion: tt.pin}))
			var r initResult
			w := c.initialize(tt.asked)
			if err := json.Unmarshal(w.Result, &r); err != nil {
				t.Fatal(err)
			}
			if r.ProtocolVersion != tt.want {
				t.Errorf("negotiated %q, want %q", r.ProtocolVersion, tt.want)
			}
			if got := c.ss.ProtocolVersion(); got != tt.want {
				t.Errorf("session version %q, want %q", got, tt.want)
			}
			if !c.ss.Initialized() {
				t.Error("session not initialized")
			}
		})
	}
}

func TestNewServerRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]*core.Options{
		"modern pin":    {ProtocolVersion: "2026-07-28"},
		"unknown pin":   {ProtocolVersion: "2025-01-01"},
		"negative page": {PageSize: -1},
		"bad log level": {LogLevel: "loud"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("NewServer accepted it")
				}
			}()
			newServer(opts)
		})
	}
}

// TestInitializeFieldsByVersion: serverInfo and instructions carry only what the negotiated version
// knows (§6.1).
func TestInitializeFieldsByVersion(t *testing.T) {
	impl := core.Implementation{
		Name: "full", Version: "2.0", Title: "Full Server", Description: "does it all",
		WebsiteURL: "https://example.com", Icons: []core.Icon{{Src: "https://example.com/i.png", MimeType: "image/png"}},
	}
	tests := []struct {
		version                                   string
		title, website, description, icons, instr bool
	}{
		{"2025-11-25", true, true, true, true, true},
		{"2025-06-18", true, true, false, false, true},
		{"2025-03-26", false, false, false, false, true},
		{"2024-11-05", false, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			srv := core.NewServer(impl, core.Options{Instructions: "call the tools"})
			c := newClient(t, srv)
			var r initResult
			if err := json.Unmarshal(c.initialize(tt.version).Result, &r); err != nil {
				t.Fatal(err)
			}
			has := func(k string) bool { _, ok := r.ServerInfo[k]; return ok }
			if r.ServerInfo["name"] != "full" || r.ServerInfo["version"] != "2.0" {
				t.Errorf("serverInfo %v", r.ServerInfo)
			}
			for _, f := range []struct {
				key  string
				want bool
			}{{"title", tt.title}, {"websiteUrl", tt.website}, {"description", tt.description}, {"icons", tt.icons}} {
				if has(f.key) != f.want {
					t.Errorf("serverInfo.%s present = %v, want %v: %v", f.key, has(f.key), f.want, r.ServerInfo)
				}
			}
			if (r.Instructions != nil) != tt.instr {
				t.Errorf("instructions present = %v, want %v", r.Instructions != nil, tt.instr)
			}
			if r.Instructions != nil && *r.Instructions != "call the tools" {
				t.Errorf("instructions = %q", *r.Instructions)
			}
		})
	}
}

func TestInitializeCapabilities(t *testing.T) {
	srv := newServer(nil)
	c := newClient(t, srv)
	var r initResult
	if err := json.Unmarshal(c.initialize("2025-11-25").Result, &r); err != nil {
		t.Fatal(err)
	}
	// Nothing registered: logging only.
	if len(r.Capabilities) != 1 || r.Capabilities["logging"] == nil {
		t.Errorf("capabilities of an empty server: %v", r.Capabilities)
	}
	srv2 := newServer(&core.Options{
		SubscribeHandler:  core.AcceptSubscription,
		CompletionHandler: func(context.Context, *core.CompleteRequest) (*core.CompleteResult, error) { return nil, nil },
	})
	srv2.AddTool(&core.Tool{Name: "t"}, okTool)
	srv2.AddPrompt(&core.Prompt{Name: "p"}, okPrompt)
	c2 := newClient(t, srv2)
	var r2 initResult
	if err := json.Unmarshal(c2.initialize("2025-11-25").Result, &r2); err != nil {
		t.Fatal(err)
	}
	want := `{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`
	if got := canonOf(t, r2.Capabilities); got != want {
		t.Errorf("capabilities\n got %s\nwant %s", got, want)
	}
	if info := c2.ss.ClientInfo(); info == nil || info.Name != "test-client" || info.Version != "0.1" {
		t.Errorf("client info %+v", info)
	}
	if !c2.ss.ClientCapabilities().Has("sampling") || c2.ss.ClientCapabilities().Has("roots") {
		t.Errorf("client capabilities %v", c2.ss.ClientCapabilities())
	}
}

func TestInitializeErrors(t *testing.T) {
	good := map[string]any{"name": "c", "version": "1"}
	tests := []struct {
		name   string
		params any
		data   string
	}{
		{"no params", nil, "Invalid params"},
		{"params array", []any{1}, "Invalid params"},
		{"protocolVersion missing", map[string]any{"capabilities": map[string]any{}, "clientInfo": good}, "Missing or invalid protocolVersion"},
		{"protocolVersion number", map[string]any{"protocolVersion": 20251125, "capabilities": map[string]any{}, "clientInfo": good}, "Missing or invalid protocolVersion"},
		{"capabilities missing", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": good}, "Missing or invalid capabilities"},
		{"capabilities array", map[string]any{"protocolVersion": "2025-11-25", "capabilities": []any{}, "clientInfo": good}, "Missing or invalid capabilities"},
		{"clientInfo missing", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}, "Missing or invalid clientInfo"},
		{"clientInfo string", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": "me"}, "Missing or invalid clientInfo"},
		{"clientInfo without name", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"version": "1"}}, "Missing or invalid clientInfo"},
		{"clientInfo without version", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c"}}, "Missing or invalid clientInfo"},
		{"clientInfo with case-variant Name", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"Name": "c", "version": "1"}}, "Missing or invalid clientInfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, newServer(nil))
			wantError(t, c.call("initialize", tt.params), -32602, "Invalid params", tt.data)
			if c.ss.Initialized() {
				t.Error("a failed initialize initialized the session")
			}
		})
	}
}

func TestDuplicateInitialize(t *testing.T) {
	c := newClient(t, newServer(nil))
	c.initialize("2025-06-18")
	w := c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"roots": map[string]any{}},
		"clientInfo": map[string]any{"name": "other", "version": "9"},
	})
	wantError(t, w, -32600, "Invalid Request", "Invalid Request: Server already initialized")
	if v := c.ss.ProtocolVersion(); v != "2025-06-18" {
		t.Errorf("version changed to %q", v)
	}
	if info := c.ss.ClientInfo(); info.Name != "test-client" {
		t.Errorf("client info changed to %+v", info)
	}
	if c.ss.ClientCapabilities().Has("roots") {
		t.Error("client capabilities changed")
	}
	if w := c.call("ping", nil); string(w.Result) != "{}" {
		t.Errorf("session unusable after a duplicate initialize: %s", w)
	}
}

func TestPing(t *testing.T) {
	c := newClient(t, newServer(nil))
	c.result("ping", nil, "EmptyResult", nil)
	if w := c.call("ping", map[string]any{"_meta": map[string]any{"progressToken": 1}}); string(w.Result) != "{}" {
		t.Errorf("ping with _meta: %s", w)
	}
}

func TestCapabilityErrors(t *testing.T) {
	bare := newServer(&core.Options{Capabilities: &core.ServerCapabilities{}})
	c := newClient(t, bare)
	tests := []struct {
		method, capability string
		params             any
	}{
		{"completion/complete", "completions", map[string]any{}},
		{"resources/subscribe", "resources.subscribe", map[string]any{"uri": "x:a"}},
		{"resources/unsubscribe", "resources.subscribe", map[string]any{"uri": "x:a"}},
		{"tools/list", "tools", nil},
		{"tools/call", "tools", map[string]any{"name": "t"}},
		{"prompts/list", "prompts", nil},
		{"prompts/get", "prompts", map[string]any{"name": "p"}},
		{"resources/list", "resources", nil},
		{"resources/templates/list", "resources", nil},
		{"resources/read", "resources", map[string]any{"uri": "x:a"}},
		{"logging/setLevel", "logging", map[string]any{"level": "info"}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			wantError(t, c.call(tt.method, tt.params), -32603, "Internal error",
				"Server does not support "+tt.capability+" (required for "+tt.method+")")
		})
	}
	// The derived capabilities: no completion handler, no subscribe handler.
	c2 := newClient(t, newServer(nil))
	wantError(t, c2.call("completion/complete", map[string]any{}), -32603, "Internal error",
		"Server does not support completions (required for completion/complete)")
	wantError(t, c2.call("resources/subscribe", map[string]any{"uri": "x:a"}), -32603, "Internal error",
		"Server does not support resources.subscribe (required for resources/subscribe)")
}

func TestSetLevel(t *testing.T) {
	c := newClient(t, newServer(nil))
	c.initialize("2025-11-25")
	for _, tt := range []struct {
		params any
		data   string
	}{
		{map[string]any{"level": "verbose"}, "Invalid log level verbose"},
		{map[string]any{"level": "INFO"}, "Invalid log level INFO"},
		{map[string]any{"level": 3}, "Invalid log level 3"},
		{map[string]any{}, "Invalid log level "},
		{[]any{"debug"}, "Invalid params"},
	} {
		wantError(t, c.call("logging/setLevel", tt.params), -32602, "Invalid params", tt.data)
	}
	if c.ss.LogLevel() != core.LevelInfo {
		t.Errorf("a failed setLevel changed the level to %s", c.ss.LogLevel())
	}
	for _, l := range []core.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		c.result("logging/setLevel", map[string]any{"level": l}, "EmptyResult", nil)
		if c.ss.LogLevel() != l {
			t.Errorf("level %s not kept: %s", l, c.ss.LogLevel())
		}
	}
}

// TestLogLevelPerSession: the level is per session, and messages below it are not sent.
func TestLogLevelPerSession(t *testing.T) {
	srv := newServer(&core.Options{LogLevel: core.LevelWarning})
	srv.AddTool(&core.Tool{Name: "chatty"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		for _, l := range []core.LoggingLevel{"debug", "info", "warning", "error"} {
			if _, err := req.Log(l, "chatty", map[string]any{"at": string(l)}); err != nil {
				return nil, err
			}
		}
		sent, _ := req.Log("bogus", "chatty", "never")
		if sent {
			t.Error("a message with an unknown level was sent")
		}
		return core.TextResult("done"), nil
	})
	quiet, loud, dflt := newClient(t, srv), newClient(t, srv), newClient(t, srv)
	for _, c := range []*client{quiet, loud, dflt} {
		c.initialize("2025-11-25")
	}
	quiet.result("logging/setLevel", map[string]any{"level": "error"}, "", nil)
	loud.result("logging/setLevel", map[string]any{"level": "debug"}, "", nil)
	levels := func(c *client) []string {
		c.callTool("chatty", nil)
		var out []string
		for _, w := range c.out.all(t) {
			if w.Method != "notifications/message" {
				continue
			}
			testSchema(t, "LoggingMessageNotification", w.raw)
			var p struct {
				Level  string `json:"level"`
				Logger string `json:"logger"`
			}
			if err := json.Unmarshal(w.Params, &p); err != nil || p.Logger != "chatty" {
				t.Errorf("log params %s", w.Params)
			}
			out = append(out, p.Level)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		c    *client
		want string
	}{
		{"error", quiet, "[error]"},
		{"debug", loud, "[debug info warning error]"},
		{"server default warning", dflt, "[warning error]"},
	} {
		if got := sprint(levels(tt.c)); got != tt.want {
			t.Errorf("session at %s received %s, want %s", tt.name, got, tt.want)
		}
	}
	if quiet.ss.LogLevel() != core.LevelError || loud.ss.LogLevel() != core.LevelDebug || dflt.ss.LogLevel() != core.LevelWarning {
		t.Error("levels leaked between sessions")
	}
}

// TestLogWithoutLoggingCapability: a server that does not offer logging sends no log messages.
func TestLogWithoutLoggingCapability(t *testing.T) {
	srv := newServer(&core.Options{Capabilities: &core.ServerCapabilities{Tools: &core.ListChangedCapability{}}})
	srv.AddTool(&core.Tool{Name: "t"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		sent, err := req.Log(core.LevelEmergency, "", "x")
		if sent || err != nil {
			t.Errorf("Log = %v, %v", sent, err)
		}
		return core.TextResult("ok"), nil
	})
	c := newClient(t, srv)
	c.callTool("t", nil)
	if m := c.out.all(t); len(m) != 0 {
		t.Errorf("sent %v", m)
	}
}
