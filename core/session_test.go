package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// blocker is a tool that reports when it starts and waits until released or cancelled.
type blocker struct {
	started chan jsonrpc.ID
	release chan struct{}
	ended   chan error // the context's cause when it ended by cancellation, nil when released
}

func newBlocker() *blocker {
	return &blocker{started: make(chan jsonrpc.ID, 16), release: make(chan struct{}), ended: make(chan error, 16)}
}

func (b *blocker) handler(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
	b.started <- req.ID()
	select {
	case <-b.release:
		b.ended <- nil
		return core.TextResult("released"), nil
	case <-ctx.Done():
		b.ended <- context.Cause(ctx)
		if strings.Contains(string(req.Arguments), "ignore") {
			return core.TextResult("finished anyway"), nil
		}
		return nil, ctx.Err()
	}
}

// handleAsync serves a request on its own goroutine; the reply arrives on the channel (nil when
// there is none).
func (c *client) handleAsync(body string) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() { ch <- c.reply(body) }()
	return ch
}

// TestDuplicateInFlightID: a second request with an id in flight is refused and the first one is
// not disturbed.
func TestDuplicateInFlightID(t *testing.T) {
	for _, id := range []string{`7`, `"abc"`} {
		t.Run(id, func(t *testing.T) {
			b := newBlocker()
			srv := newServer(nil)
			srv.AddTool(&core.Tool{Name: "slow"}, b.handler)
			c := newClient(t, srv)
			first := c.handleAsync(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"slow"}}`)
			await(t, b.started, "the slow tool to start")

			w := c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
			wantError(t, w, -32600, "Invalid Request", "Invalid Request: request id "+id+" is already in flight")
			if string(w.ID) != id {
				t.Errorf("id %s", w.ID)
			}
			// Another id is served meanwhile.
			if w := c.send(`{"jsonrpc":"2.0","id":"other","method":"ping"}`); w.Error != nil {
				t.Errorf("ping: %s", w)
			}
			close(b.release)
			r := parseWire(t, await(t, first, "the first response"))
			if r.Error != nil || !strings.Contains(string(r.Result), "released") || string(r.ID) != id {
				t.Errorf("first response: %s", r)
			}
			if transport.Core.InFlight(c.ss, jsonrpc.IntID(7)) || transport.Core.InFlight(c.ss, jsonrpc.StringID("abc")) {
				t.Error("the id is still in flight")
			}
			// The id is free again.
			if w := c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); w.Error != nil {
				t.Errorf("reusing the id: %s", w)
			}
		})
	}
}

// TestEscapedIDIsTheSameRequest: an id sent with escapes names the same request as its plain
// spelling (a duplicate is refused, a cancel finds it), and its answer echoes the spelling sent.
func TestEscapedIDIsTheSameRequest(t *testing.T) {
	b := newBlocker()
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "slow"}, b.handler)
	c := newClient(t, srv)
	first := c.handleAsync(`{"jsonrpc":"2.0","id":"\u006cisten:0","method":"tools/call","params":{"name":"slow"}}`)
	await(t, b.started, "the slow tool to start")
	if !transport.Core.InFlight(c.ss, jsonrpc.StringID("listen:0")) {
		t.Fatal("the escaped id is not in flight under its value")
	}
	w := c.send(`{"jsonrpc":"2.0","id":"listen:0","method":"ping"}`)
	wantError(t, w, -32600, "Invalid Request", `Invalid Request: request id "listen:0" is already in flight`)
	if b := c.reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen:0"}}`); b != nil {
		t.Fatalf("a notification was answered: %s", b)
	}
	if err := await(t, b.ended, "the handler to see the cancel"); err == nil {
		t.Fatal("the handler was not cancelled")
	}
	if r := await(t, first, "the handler to end"); r != nil {
		t.Errorf("a cancelled request was answered: %s", r)
	}
	// The plain spelling of the same id is free again and echoed plainly.
	if w := c.send(`{"jsonrpc":"2.0","id":"listen:0","method":"ping"}`); w.Error != nil || string(w.ID) != `"listen:0"` {
		t.Errorf("ping: %s", w)
	}
}

// TestUnknownMethodDoesNotHoldID: a request that fails before its handler does not occupy its id,
// and the method check comes before the duplicate-id check.
func TestUnknownMethodDoesNotHoldID(t *testing.T) {
	b := newBlocker()
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "slow"}, b.handler)
	c := newClient(t, srv)
	done := c.handleAsync(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	await(t, b.started, "the slow tool")
	wantError(t, c.send(`{"jsonrpc":"2.0","id":1,"method":"no/such"}`), -32601, "Method not found", "no/such")
	close(b.release)
	await(t, done, "the slow tool's response")
}

func TestCancellation(t *testing.T) {
	for _, tt := range []struct {
		name, id, args string
	}{
		{"integer id", "11", `{}`},
		{"string id", `"req-1"`, `{}`},
		{"handler ignores the cancel", "12", `{"ignore":true}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newBlocker()
			srv := newServer(nil)
			srv.AddTool(&core.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, b.handler)
			c := newClient(t, srv)
			reply := c.handleAsync(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"tools/call","params":{"name":"slow","arguments":` + tt.args + `}}`)
			await(t, b.started, "the slow tool")
			if got := c.reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tt.id + `,"reason":"user gave up"}}`); got != nil {
				t.Errorf("the cancel was answered: %s", got)
			}
			if cause := await(t, b.ended, "the tool to end"); !errors.Is(cause, core.ErrCancelled) {
				t.Errorf("cause %v, want ErrCancelled", cause)
			}
			if got := await(t, reply, "Handle to return"); got != nil {
				t.Errorf("a cancelled request was answered: %s", got)
			}
			if m := c.out.all(t); len(m) != 0 {
				t.Errorf("sent %v", m)
			}
		})
	}
}

func TestCancelUnknownOrLate(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "fast"}, okTool)
	c := newClient(t, srv)
	for _, b := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x.y"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
	} {
		if got := c.reply(b); got != nil {
			t.Errorf("%s answered: %s", b, got)
		}
	}
	w := c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast"}}`)
	if w.Error != nil {
		t.Fatal(w)
	}
	// Late: the request is done; the cancel changes nothing and the id can be used again.
	c.reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	if w := c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fast"}}`); w.Error != nil || w.Result == nil {
		t.Errorf("after a late cancel: %s", w)
	}
}

// TestInitializeNotCancellable: initialize is never registered in flight, so a cancel cannot
// reach it and its response is always sent.
func TestInitializeNotCancellable(t *testing.T) {
	c := newClient(t, newServer(nil))
	msg, derr := transport.Core.DecodeMessage([]byte(body(t, 1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"},
	})))
	if derr != nil {
		t.Fatal(derr)
	}
	call, err := transport.Core.Begin(c.ss, context.Background(), msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if transport.Core.InFlight(c.ss, jsonrpc.IntID(1)) {
		t.Error("initialize is registered as in flight")
	}
	c.reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	resp := transport.Core.Run(call)
	if resp == nil || resp.Error != nil || call.Cancelled() {
		t.Fatalf("initialize after a cancel: %+v", resp)
	}
	testSchema(t, "InitializeResult", resp.Result)
}

// TestSessionClose: closing the session cancels what is in flight, and refuses new work.
func TestSessionClose(t *testing.T) {
	b := newBlocker()
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "slow"}, b.handler)
	c := newClient(t, srv)
	reply := c.handleAsync(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	await(t, b.started, "the slow tool")
	c.ss.Close()
	if cause := await(t, b.ended, "the tool to end"); !errors.Is(cause, core.ErrSessionClosed) {
		t.Errorf("cause %v", cause)
	}
	await(t, reply, "the reply")
	await(t, c.ss.Done(), "Done")
	wantError(t, c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), -32603, "Internal error", "Session closed")
	if err := c.ss.Notify(context.Background(), "notifications/message", nil); !errors.Is(err, core.ErrNoPath) {
		t.Errorf("Notify after Close: %v", err)
	}
	c.ss.Close() // twice is fine
}

func TestProgress(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "work"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		for i, step := range []float64{0, 50, 100} {
			if err := req.Progress(step, 100, fmt.Sprintf("step %d", i)); err != nil {
				return nil, err
			}
		}
		if err := req.Progress(3, 0, ""); err != nil { // unknown total, no message
			return nil, err
		}
		return core.TextResult("done"), nil
	})
	for _, tt := range []struct {
		name, token string // token as raw JSON, "" for none
	}{
		{"string token", `"tok-1"`},
		{"integer token", `42`},
		{"large integer token", `9007199254740993`},
		{"no token", ``},
		{"null token", `null`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv)
			path := newSink() // the request's own path (its stream)
			meta := ""
			if tt.token != "" {
				meta = `,"_meta":{"progressToken":` + tt.token + `}`
			}
			out := replyOn(c.ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work"`+meta+`}}`, path)
			if r := parseWire(t, out); r.Error != nil {
				t.Fatal(r)
			}
			if m := c.out.all(t); len(m) != 0 {
				t.Errorf("progress went to the session path: %v", m)
			}
			got := path.all(t)
			if tt.token == "" || tt.token == "null" {
				if len(got) != 0 {
					t.Errorf("progress without a token: %v", got)
				}
				return
			}
			if len(got) != 4 {
				t.Fatalf("%d notifications: %v", len(got), got)
			}
			want := []string{
				`{"message":"step 0","progress":0,"progressToken":` + tt.token + `,"total":100}`,
				`{"message":"step 1","progress":50,"progressToken":` + tt.token + `,"total":100}`,
				`{"message":"step 2","progress":100,"progressToken":` + tt.token + `,"total":100}`,
				`{"progress":3,"progressToken":` + tt.token + `}`,
			}
			for i, w := range got {
				testSchema(t, "ProgressNotification", w.raw)
				if w.Method != "notifications/progress" || w.ID != nil || canon(t, w.Params) != canon(t, json.RawMessage(want[i])) {
					t.Errorf("notification %d: %s, want params %s", i, w, want[i])
				}
				// The token is echoed byte for byte.
				if !strings.Contains(string(w.raw), `"progressToken":`+tt.token) {
					t.Errorf("token not echoed unchanged: %s", w)
				}
			}
		})
	}
}

func TestListChangedNotifications(t *testing.T) {
	srv := newServer(nil)
	initialized, fresh := newClient(t, srv), newClient(t, srv)
	initialized.initialize("2025-11-25")

	srv.AddTool(&core.Tool{Name: "t1"}, okTool)
	srv.AddPrompt(&core.Prompt{Name: "p1"}, okPrompt)
	srv.AddResource(&core.Resource{URI: "test://a", Name: "a"}, okResource)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://b/{x}", Name: "b"}, okResource)
	srv.RemoveTools("t1")
	srv.RemoveTools("never-there") // no change, no notification
	srv.RemovePrompts("p1")
	srv.RemoveResources("test://a", "test://b/{x}")
	srv.NotifyToolsListChanged(context.Background())

	want := "[notifications/tools/list_changed notifications/prompts/list_changed notifications/resources/list_changed notifications/resources/list_changed notifications/tools/list_changed notifications/prompts/list_changed notifications/resources/list_changed notifications/tools/list_changed]"
	if got := sprint(initialized.out.methods(t)); got != want {
		t.Errorf("initialized session received\n %s\nwant\n %s", got, want)
	}
	for _, w := range initialized.out.all(t) {
		def := map[string]string{
			"notifications/tools/list_changed":     "ToolListChangedNotification",
			"notifications/prompts/list_changed":   "PromptListChangedNotification",
			"notifications/resources/list_changed": "ResourceListChangedNotification",
		}[w.Method]
		testSchema(t, def, w.raw)
	}
	if m := fresh.out.all(t); len(m) != 0 {
		t.Errorf("a session that never initialized received %v", m)
	}

	// Capabilities that do not promise listChanged: no notifications.
	quiet := newServer(&core.Options{Capabilities: &core.ServerCapabilities{Tools: &core.ListChangedCapability{}}})
	qc := newClient(t, quiet)
	qc.initialize("2025-11-25")
	quiet.AddTool(&core.Tool{Name: "t"}, okTool)
	quiet.NotifyToolsListChanged(context.Background())
	if m := qc.out.all(t); len(m) != 0 {
		t.Errorf("sent without listChanged: %v", m)
	}
}

func TestCustomMethods(t *testing.T) {
	srv := newServer(&core.Options{Logger: quietLog})
	srv.HandleMethod("x/echo", func(_ context.Context, call *core.Call) (any, error) {
		return map[string]any{"params": call.Params(), "method": call.Method(), "id": call.ID().Raw()}, nil
	})
	srv.HandleMethod("x/fail", func(context.Context, *core.Call) (any, error) { return nil, errors.New("private detail") })
	srv.HandleMethod("x/refuse", func(context.Context, *core.Call) (any, error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: "refused", Data: map[string]int{"n": 1}}
	})
	srv.HandleMethod("x/empty", func(context.Context, *core.Call) (any, error) { return nil, nil })
	srv.HandleMethod("x/panic", func(context.Context, *core.Call) (any, error) { panic("no") })
	srv.HandleMethod("x/unencodable", func(context.Context, *core.Call) (any, error) { return func() {}, nil })
	srv.HandleMethod("notifications/custom", func(context.Context, *core.Call) (any, error) { return "never", nil })
	c := newClient(t, srv)

	w := c.call("x/echo", map[string]any{"a": 1})
	var r struct {
		Params map[string]any `json:"params"`
		Method string         `json:"method"`
		ID     int            `json:"id"`
	}
	if err := jsonv2.Unmarshal(w.Result, &r); err != nil || r.Method != "x/echo" || r.Params["a"] != 1.0 || r.ID == 0 {
		t.Errorf("x/echo: %s", w)
	}
	w = c.call("x/fail", nil)
	wantError(t, w, -32603, "Internal error", "Internal error handling x/fail request")
	if strings.Contains(w.String(), "private") {
		t.Errorf("leaked: %s", w)
	}
	wantError(t, c.call("x/refuse", nil), -32000, "refused", map[string]int{"n": 1})
	if w := c.call("x/empty", nil); string(w.Result) != "{}" {
		t.Errorf("nil result: %s", w)
	}
	wantError(t, c.call("x/panic", nil), -32603, "Internal error", "Internal error handling x/panic request")
	wantError(t, c.call("x/unencodable", nil), -32603, "Internal error", "Internal error handling x/unencodable request")
	wantError(t, c.call("notifications/custom", nil), -32601, "Method not found", "notifications/custom")
	if w := c.call("ping", nil); w.Error != nil {
		t.Errorf("ping: %s", w)
	}

	for _, m := range []string{"tools/call", "initialize", "ping", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HandleMethod(%q) replaced a protocol method", m)
				}
			}()
			srv.HandleMethod(m, func(context.Context, *core.Call) (any, error) { return nil, nil })
		}()
	}
}

// TestCallAccessors: what a handler can learn about its request.
func TestCallAccessors(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "inspect"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if core.CallFromContext(ctx) != req.Call {
			t.Error("CallFromContext does not find the call")
		}
		if req.Context() != ctx {
			t.Error("Context differs from the handler's context")
		}
		if req.Session() == nil || req.ProtocolVersion() != "2025-06-18" || req.ClientInfo().Name != "test-client" || !req.ClientCapabilities().Has("sampling") {
			t.Error("session details not visible")
		}
		if req.Meta("absent") != nil {
			t.Errorf("Meta(absent) = %s", req.Meta("absent"))
		}
		if m := req.Meta("custom"); m != nil {
			return core.TextResult("meta " + string(m)), nil
		}
		if req.ProgressToken() != nil {
			t.Error("a progress token from nowhere")
		}
		return core.TextResult(req.Name), nil
	})
	c := newClient(t, srv)
	c.initialize("2025-06-18")
	if r := c.callTool("inspect", nil); r.text() != "inspect" {
		t.Errorf("%+v", r)
	}
	var r toolResult
	c.result("tools/call", map[string]any{"name": "inspect", "_meta": map[string]any{"custom": map[string]any{"k": []int{1}}}}, "CallToolResult", &r)
	if r.text() != `meta {"k":[1]}` {
		t.Errorf("Meta: %q", r.text())
	}
	if core.CallFromContext(context.Background()) != nil {
		t.Error("CallFromContext on a bare context")
	}
}

func TestInitializeOnClosedSession(t *testing.T) {
	c := newClient(t, newServer(nil))
	c.ss.Close()
	wantError(t, c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}), -32603, "Internal error", "Session closed")
	if c.ss.Initialized() {
		t.Error("a closed session was initialized")
	}
}

// TestSessionDoneBeforeClose: the Done channel asked for while the session is open is one channel,
// open until Close closes it.
func TestSessionDoneBeforeClose(t *testing.T) {
	c := newClient(t, newServer(nil))
	done := c.ss.Done()
	if c.ss.Done() != done {
		t.Fatal("Done returned two channels for one session")
	}
	select {
	case <-done:
		t.Fatal("Done is closed while the session is open")
	default:
	}
	c.ss.Close()
	await(t, done, "Done after Close")
}
