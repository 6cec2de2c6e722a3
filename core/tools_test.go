package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

type greetIn struct {
	Name  string `json:"name"`
	Times int    `json:"times,omitempty"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// errorLog collects what the server writes to Options.Logger.
type errorLog struct {
	buf testutil.SyncBuffer
	zl  zerolog.Logger
}

func newErrorLog() *errorLog {
	l := &errorLog{}
	l.zl = zerolog.New(&l.buf)
	return l
}

func (l *errorLog) Write(p []byte) (int, error) { return l.buf.Write(p) }

// logger is the value for Options.Logger.
func (l *errorLog) logger() *zerolog.Logger { return &l.zl }

// quietLog silences a server that is expected to log.
var quietLog = func() *zerolog.Logger { l := zerolog.Nop(); return &l }()

func (l *errorLog) raw() string { return l.buf.String() }

func (l *errorLog) reset() { l.buf.Reset() }

// String returns the lines logged, each as "message: error" (decoded, so quotes stay quotes).
func (l *errorLog) String() string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var rec struct {
			Level   string `json:"level"`
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		out = append(out, rec.Level+" "+rec.Message+": "+rec.Error)
	}
	return strings.Join(out, "\n")
}

func toolServer(t *testing.T, opts *core.Options) (*core.Server, *errorLog) {
	t.Helper()
	elog := newErrorLog()
	if opts == nil {
		opts = &core.Options{}
	}
	opts.Logger = elog.logger()
	srv := newServer(opts)
	core.AddTool(srv, &core.Tool{Name: "greet", Description: "greets"}, func(_ context.Context, _ *core.ToolRequest, in greetIn) (*core.CallToolResult, greetOut, error) {
		return nil, greetOut{Greeting: strings.Repeat("hello "+in.Name+" ", max(in.Times, 1))}, nil
	})
	srv.AddTool(&core.Tool{
		Name:        "need",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},"required":["a","b","c"]}`),
	}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("args " + string(req.Arguments)), nil
	})
	srv.AddTool(&core.Tool{Name: "plain-error"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, errors.New("database password is hunter2")
	})
	srv.AddTool(&core.Tool{Name: "protocol-error"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: -32042, Message: "URL elicitation required", Data: map[string]any{"elicitations": []any{}}})
	})
	srv.AddTool(&core.Tool{Name: "panics"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		panic("kaboom secret")
	})
	srv.AddTool(&core.Tool{Name: "tool-error"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.ErrorResult("This tool intentionally returns an error"), nil
	})
	srv.AddTool(&core.Tool{Name: "nil-result"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, nil
	})
	return srv, elog
}

func TestToolsList(t *testing.T) {
	srv, _ := toolServer(t, nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	var r struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
		NextCursor *string `json:"nextCursor"`
	}
	c.result("tools/list", nil, "ListToolsResult", &r)
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "greet,need,plain-error,protocol-error,panics,tool-error,nil-result" {
		t.Errorf("tools in order %s", got)
	}
	if r.NextCursor != nil {
		t.Errorf("one page has a nextCursor %q", *r.NextCursor)
	}
	greet := r.Tools[0]
	var in struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := jsonv2.Unmarshal(greet.InputSchema, &in); err != nil || in.Type != "object" || in.Properties["name"] == nil || sprint(in.Required) != "[name]" {
		t.Errorf("derived input schema %s", greet.InputSchema)
	}
	if !strings.Contains(string(greet.OutputSchema), `"greeting"`) {
		t.Errorf("derived output schema %s", greet.OutputSchema)
	}
	if r.Tools[1].OutputSchema != nil {
		t.Errorf("a raw tool without output schema lists one: %s", r.Tools[1].OutputSchema)
	}
}

func TestToolsCallErrors(t *testing.T) {
	srv, elog := toolServer(t, nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")

	wantError(t, c.call("tools/call", map[string]any{"name": "nope"}), -32602, "Invalid params", "Tool not found: nope")
	wantError(t, c.call("tools/call", map[string]any{}), -32602, "Invalid params", "Missing or invalid tool name")
	wantError(t, c.call("tools/call", map[string]any{"name": 7}), -32602, "Invalid params", "Missing or invalid tool name")
	wantError(t, c.call("tools/call", nil), -32602, "Invalid params", "Invalid params")
	wantError(t, c.call("tools/call", []any{"greet"}), -32602, "Invalid params", "Invalid params")

	// A plain error is a tool execution error: an isError result with the error's text, which
	// the model reads; it is logged too.
	w := c.result("tools/call", map[string]any{"name": "plain-error"}, "CallToolResult", nil)
	if want := `{"content":[{"type":"text","text":"database password is hunter2"}],"isError":true}`; string(w.Result) != want {
		t.Errorf("plain error: %s, want %s", w.Result, want)
	}
	if !strings.Contains(elog.String(), "error mcpkit: tool returned an error; the client gets it as an isError result: database password is hunter2") {
		t.Errorf("the error was not logged: %s", elog)
	}

	// A *jsonrpc.Error (even wrapped) passes through as is.
	wantError(t, c.call("tools/call", map[string]any{"name": "protocol-error"}), -32042, "URL elicitation required", map[string]any{"elicitations": []any{}})

	// A panic is -32603, logged, and the server keeps serving.
	w = c.call("tools/call", map[string]any{"name": "panics"})
	wantError(t, w, -32603, "Internal error", "Internal error calling tool panics")
	if strings.Contains(w.String(), "kaboom") {
		t.Errorf("the panic value reached the client: %s", w)
	}
	if !strings.Contains(elog.String(), "kaboom") {
		t.Errorf("the panic was not logged: %s", elog)
	}
	if r := c.callTool("greet", map[string]any{"name": "again"}); !strings.Contains(r.text(), "hello again") {
		t.Errorf("after a panic: %+v", r)
	}
	if w := c.call("ping", nil); w.Error != nil {
		t.Errorf("ping after a panic: %s", w)
	}
}

func TestToolsCallResults(t *testing.T) {
	srv, _ := toolServer(t, nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	tests := []struct {
		name     string
		tool     string
		args     any
		isError  bool
		text     string // exact, or a prefix when it ends with "…"
		wantBody string // a substring of the raw result, when set
	}{
		{"missing required", "need", map[string]any{"c": true}, true, "Missing required arguments: a, b", ""},
		{"missing all required", "need", nil, true, "Missing required arguments: a, b, c", ""},
		{"schema violation", "need", map[string]any{"a": "one", "b": "x", "c": true}, true, "Invalid arguments: …", ""},
		{"arguments not an object", "need", []any{1}, true, "Invalid arguments: arguments must be an object", ""},
		{"valid raw", "need", map[string]any{"a": 1, "b": "x", "c": false}, false, `args {"a":1,"b":"x","c":false}`, ""},
		{"tool-level error", "tool-error", nil, true, "This tool intentionally returns an error", `"isError":true`},
		{"nil result", "nil-result", nil, false, "", `"content":[]`},
		{"typed with mirror", "greet", map[string]any{"name": "Ada"}, false, `{"greeting":"hello Ada "}`, `"structuredContent":{"greeting":"hello Ada "}`},
		{"typed isError false present", "greet", map[string]any{"name": "B"}, false, `{"greeting":"hello B "}`, `"isError":false`},
		{"typed case-sensitive members", "greet", map[string]any{"NAME": "Ada"}, true, "Missing required arguments: name", ""},
		{"typed case-variant extra member", "greet", map[string]any{"name": "Ada", "Times": 3}, true, "Invalid arguments: …", ""},
		{"typed unknown member", "greet", map[string]any{"name": "Ada", "extra": 1}, true, "Invalid arguments: …", ""},
		{"typed wrong type", "greet", map[string]any{"name": 5}, true, "Invalid arguments: …", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := map[string]any{"name": tt.tool}
			if tt.args != nil {
				params["arguments"] = tt.args
			}
			w := c.result("tools/call", params, "CallToolResult", nil)
			var r toolResult
			if err := jsonv2.Unmarshal(w.Result, &r); err != nil {
				t.Fatal(err)
			}
			if r.IsError == nil || *r.IsError != tt.isError {
				t.Errorf("isError = %v, want %v: %s", r.IsError, tt.isError, w.Result)
			}
			if p, ok := strings.CutSuffix(tt.text, "…"); ok {
				if !strings.HasPrefix(r.text(), p) || len(r.text()) == len(p) {
					t.Errorf("text %q, want %q and a detail", r.text(), p)
				}
			} else if r.text() != tt.text {
				t.Errorf("text %q, want %q", r.text(), tt.text)
			}
			if tt.wantBody != "" && !strings.Contains(string(w.Result), tt.wantBody) {
				t.Errorf("result %s lacks %s", w.Result, tt.wantBody)
			}
		})
	}
}

// TestTypedToolDecodesCaseSensitively: even without schema validation, "NAME" does not fill Name.
func TestTypedToolDecodesCaseSensitively(t *testing.T) {
	srv := newServer(&core.Options{SkipArgumentValidation: true})
	type optIn struct {
		Name string `json:"name,omitempty"`
	}
	core.AddTool(srv, &core.Tool{Name: "echo"}, func(_ context.Context, _ *core.ToolRequest, in optIn) (*core.CallToolResult, any, error) {
		return core.TextResult("name=" + in.Name), nil, nil
	})
	c := newClient(t, srv)
	if r := c.callTool("echo", map[string]any{"NAME": "Ada", "Name": "Bob"}); r.text() != "name=" {
		t.Errorf("case-variant members filled the input: %q", r.text())
	}
	if r := c.callTool("echo", map[string]any{"name": "Ada"}); r.text() != "name=Ada" {
		t.Errorf("exact member: %q", r.text())
	}
	// Without validation, a value of the wrong type is still an isError result, not a crash.
	if r := c.callTool("echo", map[string]any{"name": 5}); !*r.IsError || !strings.HasPrefix(r.text(), "Invalid arguments: ") || strings.Contains(r.text(), "core_test") {
		t.Errorf("wrong type: %+v", r)
	}
	if r := c.callTool("echo", map[string]any{"name": 5}); r.text() != `Invalid arguments: argument "name" must be a string` {
		t.Errorf("wrong type names the argument: %q", r.text())
	}
	// An integer out of range names the argument and the range.
	type small struct {
		A int8 `json:"a"`
		B struct {
			C uint16 `json:"c"`
		} `json:"b"`
	}
	core.AddTool(srv, &core.Tool{Name: "small"}, func(_ context.Context, _ *core.ToolRequest, in small) (*core.CallToolResult, any, error) {
		return core.TextResult("ok"), nil, nil
	})
	if r := c.callTool("small", map[string]any{"a": 300, "b": map[string]any{"c": 1}}); r.text() != `Invalid arguments: argument "a" must be an integer from -128 to 127` {
		t.Errorf("overflow: %q", r.text())
	}
	if r := c.callTool("small", map[string]any{"a": 1, "b": map[string]any{"c": -1}}); r.text() != `Invalid arguments: argument "b" at /b/c must be an integer from 0 to 65535` {
		t.Errorf("nested overflow: %q", r.text())
	}
	// Missing required arguments are reported even when validation is off.
	srv.AddTool(&core.Tool{Name: "need", InputSchema: json.RawMessage(`{"type":"object","required":["x"]}`)}, okTool)
	if r := c.callTool("need", nil); r.text() != "Missing required arguments: x" {
		t.Errorf("required without validation: %q", r.text())
	}
}

func TestStructuredOutput(t *testing.T) {
	elog := newErrorLog()
	srv := newServer(&core.Options{Logger: elog.logger()})
	type sumOut struct {
		Sum int `json:"sum"`
	}
	// A declared output schema the value can violate.
	core.AddTool(srv, &core.Tool{
		Name:         "sum",
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer","minimum":0}},"required":["sum"]}`),
	}, func(_ context.Context, _ *core.ToolRequest, in struct {
		A int `json:"a"`
	}) (*core.CallToolResult, sumOut, error) {
		return nil, sumOut{Sum: in.A}, nil
	})
	// A raw tool whose structured content violates its schema, also when it is an error.
	srv.AddTool(&core.Tool{Name: "raw-bad", OutputSchema: json.RawMessage(`{"type":"object","required":["x"]}`)},
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{StructuredContent: map[string]any{"y": 1}, IsError: string(req.Arguments) == `{"fail":true}`}, nil
		})
	// Explicit content is kept; no mirror is added.
	srv.AddTool(&core.Tool{Name: "explicit"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return &core.CallToolResult{Content: []core.Content{core.Text("see structured")}, StructuredContent: map[string]int{"n": 1}}, nil
	})
	// Structured content must be an object: a list is sent as text only.
	core.AddTool(srv, &core.Tool{Name: "list"}, func(context.Context, *core.ToolRequest, struct{}) (*core.CallToolResult, []string, error) {
		return nil, []string{"a", "b"}, nil
	})
	// A nil pointer output with an output schema.
	core.AddTool(srv, &core.Tool{Name: "maybe"}, func(context.Context, *core.ToolRequest, struct{}) (*core.CallToolResult, *sumOut, error) {
		return core.TextResult("nothing"), nil, nil
	})
	// An interface output has no schema but is sent.
	core.AddTool(srv, &core.Tool{Name: "dynamic"}, func(context.Context, *core.ToolRequest, struct{}) (*core.CallToolResult, any, error) {
		return nil, map[string]any{"k": "v"}, nil
	})
	c := newClient(t, srv)

	r := c.callTool("sum", map[string]any{"a": 4})
	if string(r.StructuredContent) != `{"sum":4}` || r.text() != `{"sum":4}` {
		t.Errorf("valid output: %+v", r)
	}
	wantError(t, c.call("tools/call", map[string]any{"name": "sum", "arguments": map[string]any{"a": -1}}), -32603, "Internal error", "Internal error calling tool sum")
	wantError(t, c.call("tools/call", map[string]any{"name": "raw-bad"}), -32603, "Internal error", "Internal error calling tool raw-bad")
	if !strings.Contains(elog.String(), "output schema") {
		t.Errorf("violation not logged: %s", elog)
	}
	if r := c.callTool("raw-bad", map[string]any{"fail": true}); !*r.IsError {
		t.Errorf("an error result is not held to the output schema: %+v", r)
	}
	if r := c.callTool("explicit", nil); r.text() != "see structured" || string(r.StructuredContent) != `{"n":1}` {
		t.Errorf("explicit content: %+v", r)
	}
	if r := c.callTool("list", nil); r.StructuredContent != nil || r.text() != `["a","b"]` {
		t.Errorf("list output: %+v", r)
	}
	// A nil pointer output breaks the declared output schema: the tool's bug, not the model's.
	wantError(t, c.call("tools/call", map[string]any{"name": "maybe"}), -32603, "Internal error", "Internal error calling tool maybe")
	if r := c.callTool("dynamic", nil); string(r.StructuredContent) != `{"k":"v"}` {
		t.Errorf("interface output: %+v", r)
	}
	var lr struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	c.result("tools/list", nil, "ListToolsResult", &lr)
	for _, tl := range lr.Tools {
		if (tl.Name == "list" || tl.Name == "dynamic") && tl.OutputSchema != nil {
			t.Errorf("%s lists a non-object output schema %s", tl.Name, tl.OutputSchema)
		}
		if tl.Name == "maybe" && !strings.Contains(string(tl.OutputSchema), `"sum"`) {
			t.Errorf("pointer output schema %s", tl.OutputSchema)
		}
	}
}

// TestSharedResultNotMutated: a handler may return the same result to concurrent calls.
func TestSharedResultNotMutated(t *testing.T) {
	shared := &core.CallToolResult{StructuredContent: map[string]int{"n": 1}}
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "shared"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return shared, nil
	})
	c := newClient(t, srv)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			msg, _ := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":"x` + fmt.Sprint(c.ids.Add(1)) + `","method":"tools/call","params":{"name":"shared"}}`))
			if resp := transport.Core.Handle(c.ss, context.Background(), msg, nil); resp.Error != nil {
				t.Error(resp.Error)
			}
		})
	}
	wg.Wait()
	if len(shared.Content) != 0 {
		t.Errorf("the handler's result was changed: %+v", shared)
	}
}

func TestAddToolRejects(t *testing.T) {
	srv := newServer(nil)
	for name, tool := range map[string]*core.Tool{
		"empty name":          {Name: ""},
		"bad name":            {Name: "has space"},
		"long name":           {Name: strings.Repeat("x", 129)},
		"array input":         {Name: "a", InputSchema: json.RawMessage(`{"type":"array"}`)},
		"input not object":    {Name: "a", InputSchema: json.RawMessage(`[]`)},
		"invalid schema":      {Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":5}}}`)},
		"external ref":        {Name: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`)},
		"string output":       {Name: "a", OutputSchema: json.RawMessage(`{"type":"string"}`)},
		"output without type": {Name: "a", OutputSchema: json.RawMessage(`{}`)},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("AddTool accepted it")
				}
			}()
			srv.AddTool(tool, okTool)
		})
	}
	for _, ok := range []string{"a", "A-b_c.d", strings.Repeat("x", 128)} {
		if !core.ValidToolName(ok) {
			t.Errorf("ValidToolName(%q) = false", ok)
		}
	}
}
