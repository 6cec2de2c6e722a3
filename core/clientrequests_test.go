package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// TestMain fails the package when a goroutine outlives the tests: nothing a request starts (a
// server-to-client wait, its timer) may be left behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// outcome is what a tool's server-to-client request produced.
type outcome struct {
	v   any
	err error
}

// askServer has one tool, "ask", that runs ask and reports what it got on the returned channel.
// The tool answers with the error ask returned (so the wire shows how it maps) or with "ok".
func askServer(opts *core.Options, ask func(ctx context.Context, req *core.ToolRequest) (any, error)) (*core.Server, chan outcome) {
	got := make(chan outcome, 16)
	srv := newServer(opts)
	srv.AddTool(&core.Tool{Name: "ask"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		v, err := ask(ctx, req)
		got <- outcome{v, err}
		if err != nil {
			return nil, err
		}
		return core.TextResult("ok"), nil
	})
	return srv, got
}

// initWith runs the handshake declaring caps.
func (c *client) initWith(version string, caps map[string]any) {
	c.t.Helper()
	c.result("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "test-client", "version": "0.1"},
	}, "InitializeResult", nil)
}

// callAsync sends a request from a goroutine with its own request path (a fresh sink), the way a
// transport serves a POST with its own stream. The reply (nil when there is none) arrives on the
// returned channel once the handler is done.
func (c *client) callAsync(id any, method string, params any) (*sink, <-chan *wire) {
	c.t.Helper()
	path := newSink()
	return path, c.callAsyncOn(path, id, method, params)
}

// callAsyncOn is callAsync on a given path.
func (c *client) callAsyncOn(path transport.Sender, id any, method string, params any) <-chan *wire {
	c.t.Helper()
	b := body(c.t, id, method, params)
	ch := make(chan *wire, 1)
	go func() {
		raw := replyOn(c.ss, b, path)
		if raw == nil {
			ch <- nil
			return
		}
		var w wire
		if err := jsonv2.Unmarshal(raw, &w); err != nil {
			ch <- &wire{raw: raw}
			return
		}
		w.raw = raw
		ch <- &w
	}()
	return ch
}

// strictSink is a path that, like a real stream, refuses to write for a cancelled context.
type strictSink struct{ *sink }

func (s strictSink) Send(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.sink.Send(ctx, msg)
}

// answer delivers a client's JSON-RPC response (result or error, given as raw JSON members) to
// the session, as a transport does with a response it read.
func answer(t testing.TB, ss *core.Session, id json.RawMessage, members string) {
	t.Helper()
	raw := `{"jsonrpc":"2.0","id":` + string(id) + `,` + members + `}`
	msg, derr := transport.Core.DecodeMessage([]byte(raw))
	if derr != nil {
		t.Fatalf("the test's answer %s does not decode: %v", raw, derr)
	}
	if resp := transport.Core.Handle(ss, context.Background(), msg, nil); resp != nil {
		t.Fatalf("a response from the client was answered: %s", transport.Core.EncodeResponseMessage(resp))
	}
}

// nextRequest waits for the next message on path, which must be a server-to-client request for
// method with a string id, valid against the 2025-11-25 definition def.
func nextRequest(t testing.TB, path *sink, method, def string) *wire {
	t.Helper()
	w := path.next(t)
	if w.Method != method || jsontext.Value(w.ID).Kind() != '"' {
		t.Fatalf("want a %s request with a string id, got %s", method, w)
	}
	testSchema(t, "JSONRPCRequest", w.raw)
	if def != "" {
		testSchema(t, def, w.raw)
	}
	return w
}

// wantCancelled waits for notifications/cancelled for the request id on path.
func wantCancelled(t testing.TB, path *sink, id json.RawMessage, reason string) {
	t.Helper()
	w := path.next(t)
	if w.Method != "notifications/cancelled" || w.ID != nil {
		t.Fatalf("want notifications/cancelled, got %s", w)
	}
	testSchema(t, "CancelledNotification", w.raw)
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := jsonv2.Unmarshal(w.Params, &p); err != nil {
		t.Fatal(err)
	}
	if string(p.RequestID) != string(id) {
		t.Errorf("cancelled request %s, want %s", p.RequestID, id)
	}
	if reason != "" && p.Reason != reason {
		t.Errorf("cancel reason %q, want %q", p.Reason, reason)
	}
}

// quiet checks that nothing reached path besides the messages the test already took.
func quiet(t testing.TB, path *sink) {
	t.Helper()
	for {
		select {
		case b := <-path.ch:
			t.Errorf("unexpected message to the client: %s", b)
		default:
			return
		}
	}
}

func TestCreateMessageRoundTrip(t *testing.T) {
	temp := 0.5
	params := &core.CreateMessageParams{
		Messages: []core.SamplingMessage{
			{Role: "user", Content: core.ContentList{core.Text("weather?")}},
			{Role: "user", Content: core.ContentList{core.Text("in Paris"), core.Image("aGk=", "image/png")}},
		},
		MaxTokens:        100,
		SystemPrompt:     "be brief",
		ModelPreferences: &core.ModelPreferences{Hints: []core.ModelHint{{Name: "claude"}}},
		IncludeContext:   "none",
		Temperature:      &temp,
		StopSequences:    []string{"\n\n"},
		Metadata:         map[string]any{"k": "v"},
		Tools:            []core.Tool{{Name: "get_weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		ToolChoice:       map[string]any{"mode": "auto"},
	}
	srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.CreateMessage(ctx, params)
	})
	for _, tt := range []struct {
		name, content string
		want          []string
	}{
		{"single block", `{"type":"text","text":"sunny"}`, []string{"sunny"}},
		{"array of blocks", `[{"type":"text","text":"sunny"},{"type":"text","text":"22C"}]`, []string{"sunny", "22C"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv)
			c.initWith("2025-11-25", map[string]any{"sampling": map[string]any{"tools": map[string]any{}}})
			path, reply := c.callAsync(1, "tools/call", map[string]any{"name": "ask"})
			req := nextRequest(t, path, "sampling/createMessage", "CreateMessageRequest")
			var p struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
				MaxTokens    int            `json:"maxTokens"`
				SystemPrompt string         `json:"systemPrompt"`
				Tools        []core.Tool    `json:"tools"`
				ToolChoice   map[string]any `json:"toolChoice"`
			}
			if err := jsonv2.Unmarshal(req.Params, &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Messages) != 2 || jsontext.Value(p.Messages[0].Content).Kind() != '{' || jsontext.Value(p.Messages[1].Content).Kind() != '[' {
				t.Errorf("one block must go as an object, several as an array: %s", req.Params)
			}
			if p.MaxTokens != 100 || p.SystemPrompt != "be brief" || len(p.Tools) != 1 || p.ToolChoice["mode"] != "auto" {
				t.Errorf("params %s", req.Params)
			}
			answer(t, c.ss, req.ID, `"result":{"role":"assistant","content":`+tt.content+`,"model":"m-1","stopReason":"endTurn"}`)
			o := await(t, got, "the sampling result")
			if o.err != nil {
				t.Fatal(o.err)
			}
			res := o.v.(*core.CreateMessageResult)
			var texts []string
			for _, b := range res.Content {
				texts = append(texts, b.Text)
			}
			if res.Role != "assistant" || res.Model != "m-1" || res.StopReason != "endTurn" || !slices.Equal(texts, tt.want) {
				t.Errorf("decoded %+v", res)
			}
			w := await(t, reply, "the tools/call reply")
			if w == nil || w.Error != nil {
				t.Fatalf("tools/call reply %v", w)
			}
			testSchema(t, "CallToolResult", w.Result)
			quiet(t, path)
		})
	}
}

// TestClientRequestCapabilityRefusals: a request the client's capabilities do not allow is
// refused before anything is sent.
func TestClientRequestCapabilityRefusals(t *testing.T) {
	form := &core.ElicitParams{Message: "name?"}
	url := &core.ElicitParams{Mode: "url", Message: "log in", URL: "https://example.com/login"}
	for _, tt := range []struct {
		name, capability, msg string
		caps                  map[string]any
		ask                   func(ctx context.Context, req *core.ToolRequest) (any, error)
	}{
		{"no sampling", "sampling", "Client does not support sampling.", map[string]any{"roots": map[string]any{}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) {
				return req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 1})
			}},
		{"tools without sampling.tools", "sampling.tools", "Client does not support sampling with tools.", map[string]any{"sampling": map[string]any{}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) {
				return req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 1, Tools: []core.Tool{{Name: "x"}}})
			}},
		{"toolChoice without sampling.tools", "sampling.tools", "Client does not support sampling with tool_choice.", map[string]any{"sampling": map[string]any{"context": map[string]any{}}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) {
				return req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 1, ToolChoice: map[string]any{"mode": "none"}})
			}},
		{"no elicitation", "elicitation", "Client does not support elicitation. The client must declare the `elicitation` capability during initialization.", map[string]any{"sampling": map[string]any{}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) { return req.Elicit(ctx, form) }},
		{"url mode without elicitation.url", "elicitation.url", "Client does not support URL mode elicitation. The client must declare the `elicitation.url` capability during initialization.", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) { return req.Elicit(ctx, url) }},
		{"bare elicitation is not url", "elicitation.url", "Client does not support URL mode elicitation. The client must declare the `elicitation.url` capability during initialization.", map[string]any{"elicitation": map[string]any{}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) { return req.Elicit(ctx, url) }},
		{"url alone does not imply form", "elicitation", "Client does not support elicitation. The client must declare the `elicitation` capability during initialization.", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) { return req.Elicit(ctx, form) }},
		{"no roots", "roots", "Client does not support roots.", map[string]any{"sampling": map[string]any{}},
			func(ctx context.Context, req *core.ToolRequest) (any, error) { return req.ListRoots(ctx) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := askServer(nil, tt.ask)
			c := newClient(t, srv)
			c.initWith("2025-11-25", tt.caps)
			path := newSink()
			w := parseWire(t, replyOn(c.ss, body(t, 1, "tools/call", map[string]any{"name": "ask"}), path))
			o := await(t, got, "the refusal")
			var ce *core.CapabilityError
			if !errors.As(o.err, &ce) || ce.Capability != tt.capability || ce.Error() != tt.msg {
				t.Fatalf("error %v (%T), want CapabilityError %s %q", o.err, o.err, tt.capability, tt.msg)
			}
			if errors.Is(o.err, core.ErrRequestsRefused) {
				t.Error("a missing capability is not a refused path")
			}
			// The handler returned the refusal: the model reads it as the tool's error.
			wantToolError(t, w, tt.msg)
			quiet(t, path)
			quiet(t, c.out)
		})
	}
}

// enumSchema is a form schema with the SEP-1330 enum shapes and SEP-1034 defaults, to be sent as is.
const enumSchema = `{"type":"object","properties":{` +
	`"color":{"type":"string","title":"Color","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}],"default":"g"},` +
	`"size":{"type":"string","enum":["s","m","l"],"default":"m"},` +
	`"legacy":{"type":"string","enum":["a","b"],"enumNames":["Option A","Option B"]},` +
	`"tags":{"type":"array","title":"Tags","items":{"type":"string","enum":["x","y"]},"minItems":1,"default":["x"]},` +
	`"picks":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"},{"const":"q","title":"Q"}]}},` +
	`"name":{"type":"string","minLength":1,"default":"anon"},` +
	`"age":{"type":"integer","minimum":0,"default":30},` +
	`"ok":{"type":"boolean","default":true}` +
	`},"required":["color"]}`

func TestElicitForm(t *testing.T) {
	for _, tt := range []struct {
		version  string
		schema   string
		wantMode string
		wantSent string
	}{
		{"2025-11-25", enumSchema, "form", enumSchema},
		{"2025-06-18", enumSchema, "", enumSchema},
		{"2025-11-25", "", "form", `{"type":"object","properties":{}}`},
	} {
		t.Run(tt.version+"/"+sprint(tt.schema != ""), func(t *testing.T) {
			// A stray url-mode member is not sent with a form.
			p := &core.ElicitParams{Message: "Tell me more", URL: "https://stray.example", ElicitationID: "stray"}
			if tt.schema != "" {
				p.RequestedSchema = json.RawMessage(tt.schema)
			}
			srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
				return req.Elicit(ctx, p)
			})
			c := newClient(t, srv)
			c.initWith(tt.version, map[string]any{"elicitation": map[string]any{}}) // bare: form is implied
			path, reply := c.callAsync("e1", "tools/call", map[string]any{"name": "ask"})
			req := nextRequest(t, path, "elicitation/create", "ElicitRequest")
			var sent struct {
				Mode            *string         `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
				URL             *string         `json:"url"`
				ElicitationID   *string         `json:"elicitationId"`
			}
			if err := jsonv2.Unmarshal(req.Params, &sent); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantMode == "" && sent.Mode != nil:
				t.Errorf("mode %q sent to a %s client, which knows no modes", *sent.Mode, tt.version)
			case tt.wantMode != "" && (sent.Mode == nil || *sent.Mode != tt.wantMode):
				t.Errorf("mode %v, want %q", sent.Mode, tt.wantMode)
			}
			if sent.Message != "Tell me more" || canon(t, sent.RequestedSchema) != canon(t, json.RawMessage(tt.wantSent)) || sent.URL != nil || sent.ElicitationID != nil {
				t.Errorf("params %s", req.Params)
			}
			if p.Mode != "" || (tt.schema == "" && p.RequestedSchema != nil) {
				t.Error("Elicit changed the caller's params")
			}
			content := `{"color":"r","tags":["x","y"],"age":41,"ok":false}`
			if tt.schema == "" {
				content = `{}` // a form that asks for nothing gets nothing back
			}
			answer(t, c.ss, req.ID, `"result":{"action":"accept","content":`+content+`}`)
			o := await(t, got, "the elicitation result")
			if o.err != nil {
				t.Fatal(o.err)
			}
			res := o.v.(*core.ElicitResult)
			if tt.schema != "" && (res.Action != "accept" || res.Content["color"] != "r" || res.Content["ok"] != false || sprint(res.Content["tags"]) != "[x y]") {
				t.Errorf("decoded %+v", res)
			}
			// The defaults fill what the user left out.
			if tt.schema != "" && (res.Content["size"] != "m" || res.Content["name"] != "anon" || res.Content["age"] != float64(41)) {
				t.Errorf("defaults not applied: %+v", res.Content)
			}
			if w := await(t, reply, "the reply"); w == nil || w.Error != nil {
				t.Errorf("reply %v", w)
			}
		})
	}
}

func TestElicitURL(t *testing.T) {
	for _, id := range []string{"", "given-id"} {
		t.Run("id="+id, func(t *testing.T) {
			p := &core.ElicitParams{Mode: "url", Message: "Please log in", URL: "https://example.com/login?x=1", ElicitationID: id,
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)} // a form member, not sent
			srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
				return req.Elicit(ctx, p)
			})
			c := newClient(t, srv)
			c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
			path, reply := c.callAsync(3, "tools/call", map[string]any{"name": "ask"})
			req := nextRequest(t, path, "elicitation/create", "ElicitRequest")
			testutil.ValidateDef(t, specVersion, "ElicitRequestURLParams", req.Params)
			var sent map[string]any
			if err := jsonv2.Unmarshal(req.Params, &sent); err != nil {
				t.Fatal(err)
			}
			eid, _ := sent["elicitationId"].(string)
			if sent["mode"] != "url" || sent["url"] != p.URL || sent["message"] != p.Message || eid == "" || (id != "" && eid != id) {
				t.Errorf("params %s", req.Params)
			}
			if _, ok := sent["requestedSchema"]; ok {
				t.Errorf("a url elicitation carries a form schema: %s", req.Params)
			}
			answer(t, c.ss, req.ID, `"result":{"action":"accept"}`)
			o := await(t, got, "the result")
			if o.err != nil || o.v.(*core.ElicitResult).Action != "accept" {
				t.Fatalf("outcome %+v", o)
			}
			await(t, reply, "the reply")

			// The server later says the elicitation is done, on the session-level path.
			if err := c.ss.NotifyElicitationComplete(context.Background(), eid); err != nil {
				t.Fatal(err)
			}
			n := c.out.next(t)
			testSchema(t, "ElicitationCompleteNotification", n.raw)
			if canon(t, n.Params) != canonOf(t, map[string]string{"elicitationId": eid}) {
				t.Errorf("complete notification %s", n)
			}
		})
	}
}

func TestListRoots(t *testing.T) {
	srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.ListRoots(ctx)
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"roots": map[string]any{"listChanged": true}})
	path, reply := c.callAsync(1, "tools/call", map[string]any{"name": "ask"})
	req := nextRequest(t, path, "roots/list", "ListRootsRequest")
	if req.Params != nil {
		t.Errorf("roots/list carries params: %s", req)
	}
	answer(t, c.ss, req.ID, `"result":{"roots":[{"uri":"file:///home/a","name":"a"},{"uri":"file:///tmp"}]}`)
	o := await(t, got, "the roots")
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.v.(*core.ListRootsResult)
	if len(res.Roots) != 2 || res.Roots[0].URI != "file:///home/a" || res.Roots[0].Name != "a" || res.Roots[1].URI != "file:///tmp" {
		t.Errorf("roots %+v", res)
	}
	await(t, reply, "the reply")
	quiet(t, c.out) // the request rode the request's own path, not the session's
}

func TestClientPing(t *testing.T) {
	t.Run("call", func(t *testing.T) {
		srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
			return nil, req.Ping(ctx)
		})
		c := newClient(t, srv)
		c.initWith("2025-11-25", map[string]any{})
		for _, tt := range []struct {
			result string
			ok     bool
		}{
			{`{}`, true},
			{`{"_meta":{"k":1}}`, true},
			{`[]`, false},
			{`null`, false},
			{`"pong"`, false},
		} {
			path, reply := c.callAsync("p", "tools/call", map[string]any{"name": "ask"})
			req := nextRequest(t, path, "ping", "PingRequest")
			answer(t, c.ss, req.ID, `"result":`+tt.result)
			o := await(t, got, "the ping")
			if tt.ok != (o.err == nil) {
				t.Errorf("ping answered with %s: %v", tt.result, o.err)
			}
			if !tt.ok && (o.err == nil || !strings.Contains(o.err.Error(), "Response validation failed: invalid `result`")) {
				t.Errorf("error %v", o.err)
			}
			await(t, reply, "the reply")
		}
	})
	t.Run("session", func(t *testing.T) {
		c := newClient(t, newServer(nil))
		c.initWith("2025-11-25", map[string]any{})
		done := make(chan error, 1)
		go func() { done <- c.ss.Ping(context.Background()) }()
		req := nextRequest(t, c.out, "ping", "PingRequest")
		answer(t, c.ss, req.ID, `"result":{}`)
		if err := await(t, done, "Session.Ping"); err != nil {
			t.Fatal(err)
		}
		// Without a session-level path there is nowhere to send it.
		transport.Core.SetOut(c.ss, nil)
		if err := c.ss.Ping(context.Background(), core.WithTimeout(time.Second)); !errors.Is(err, core.ErrRequestsRefused) {
			t.Errorf("Ping without a path = %v", err)
		}
	})
}

// TestClientRequestTimeout: an unanswered request is cancelled at the client after the
// configured timeout, the call gets *RequestTimeoutError, a tool that returns it answers -32001,
// and a late answer changes nothing.
func TestClientRequestTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, got := askServer(&core.Options{ServerToClientRequestTimeout: 50 * time.Millisecond}, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.ListRoots(ctx)
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"roots": map[string]any{}})

	path, reply := c.callAsync(1, "tools/call", map[string]any{"name": "ask"})
	first := nextRequest(t, path, "roots/list", "")
	wantCancelled(t, path, first.ID, "Timed out after 0.05 seconds")
	o := await(t, got, "the timeout")
	var te *core.RequestTimeoutError
	if !errors.As(o.err, &te) || te.Method != "roots/list" || te.Timeout != 50*time.Millisecond {
		t.Fatalf("error %v, want a RequestTimeoutError for roots/list after 50ms", o.err)
	}
	w := await(t, reply, "the reply")
	wantError(t, w, -32001, "roots/list request timed out after 0.05 seconds", "roots/list request timed out after 0.05 seconds")

	// A late answer to the first request reaches nobody; the next request gets its own answer.
	path, reply = c.callAsync(2, "tools/call", map[string]any{"name": "ask"})
	second := nextRequest(t, path, "roots/list", "")
	if string(second.ID) == string(first.ID) {
		t.Fatal("request ids are reused")
	}
	answer(t, c.ss, first.ID, `"result":{"roots":[{"uri":"file:///late"}]}`)
	answer(t, c.ss, second.ID, `"result":{"roots":[{"uri":"file:///fresh"}]}`)
	o = await(t, got, "the second answer")
	if o.err != nil || o.v.(*core.ListRootsResult).Roots[0].URI != "file:///fresh" {
		t.Errorf("second request got %+v", o)
	}
	await(t, reply, "the second reply")
	quiet(t, path)
}

func TestClientRequestTimeoutOverrides(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, tt := range []struct {
		name   string
		server time.Duration
		ask    func(ctx context.Context, req *core.ToolRequest) error
		want   time.Duration // 0: the answer arrives in time
	}{
		{"WithTimeout shorter", 0, func(ctx context.Context, req *core.ToolRequest) error {
			_, err := req.ListRoots(ctx, core.WithTimeout(30*time.Millisecond))
			return err
		}, 30 * time.Millisecond},
		{"ctx deadline shorter", 0, func(ctx context.Context, req *core.ToolRequest) error {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
			defer cancel()
			_, err := req.ListRoots(ctx)
			return err
		}, 30 * time.Millisecond},
		{"WithTimeout longer than the server's", 20 * time.Millisecond, func(ctx context.Context, req *core.ToolRequest) error {
			_, err := req.ListRoots(ctx, core.WithTimeout(failsafe))
			return err
		}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := askServer(&core.Options{ServerToClientRequestTimeout: tt.server}, func(ctx context.Context, req *core.ToolRequest) (any, error) {
				return nil, tt.ask(ctx, req)
			})
			c := newClient(t, srv)
			c.initWith("2025-11-25", map[string]any{"roots": map[string]any{}})
			path, reply := c.callAsync(1, "tools/call", map[string]any{"name": "ask"})
			req := nextRequest(t, path, "roots/list", "")
			if tt.want == 0 {
				// Answer well after the server-wide timeout; the call's own bound still holds.
				time.Sleep(5 * tt.server)
				answer(t, c.ss, req.ID, `"result":{"roots":[]}`)
				if o := await(t, got, "the answer"); o.err != nil {
					t.Fatalf("error %v", o.err)
				}
				if w := await(t, reply, "the reply"); w.Error != nil {
					t.Errorf("reply %s", w)
				}
				quiet(t, path)
				return
			}
			wantCancelled(t, path, req.ID, "")
			o := await(t, got, "the timeout")
			var te *core.RequestTimeoutError
			if !errors.As(o.err, &te) || te.Timeout <= 0 || te.Timeout > tt.want {
				t.Fatalf("error %v, want a RequestTimeoutError within %v", o.err, tt.want)
			}
			if w := await(t, reply, "the reply"); w.Error == nil || w.Error.Code != -32001 {
				t.Errorf("reply %s", w)
			}
		})
	}
}

// TestNestedCancellation: when the client cancels the originating request, the waiting request
// ends, the client is told to drop the nested one, and the originating request is not answered.
func TestNestedCancellation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 5, Messages: []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("hi")}}}})
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"sampling": map[string]any{}})
	path := newSink()
	// The cancellation must reach the client although the originating request's context is done.
	reply := c.callAsyncOn(strictSink{path}, 42, "tools/call", map[string]any{"name": "ask"})
	req := nextRequest(t, path, "sampling/createMessage", "CreateMessageRequest")
	if b := c.reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"user gave up"}}`); b != nil {
		t.Fatalf("a notification was answered: %s", b)
	}
	wantCancelled(t, path, req.ID, "")
	o := await(t, got, "the wait to end")
	if !errors.Is(o.err, core.ErrCancelled) {
		t.Errorf("error %v, want the client's cancellation", o.err)
	}
	if w := await(t, reply, "the handler to end"); w != nil {
		t.Errorf("a cancelled request was answered: %s", w)
	}
	answer(t, c.ss, req.ID, `"result":{"role":"assistant","content":{"type":"text","text":"late"},"model":"m"}`)
	quiet(t, path)
}

// TestCloseWhileWaiting: closing the session ends the wait at once; nothing more is sent.
func TestCloseWhileWaiting(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.ListRoots(ctx)
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"roots": map[string]any{}})
	path, reply := c.callAsync(1, "tools/call", map[string]any{"name": "ask"})
	nextRequest(t, path, "roots/list", "")
	pingDone := make(chan error, 1)
	go func() { pingDone <- c.ss.Ping(context.Background()) }()
	nextRequest(t, c.out, "ping", "")
	c.ss.Close()
	if o := await(t, got, "the wait to end"); !errors.Is(o.err, core.ErrSessionClosed) {
		t.Errorf("call wait ended with %v", o.err)
	}
	if err := await(t, pingDone, "Session.Ping"); !errors.Is(err, core.ErrSessionClosed) {
		t.Errorf("session ping ended with %v", err)
	}
	await(t, reply, "the handler to end")
	quiet(t, path)
	quiet(t, c.out)
	// A closed session sends nothing more.
	if err := c.ss.Ping(context.Background(), core.WithTimeout(time.Second)); !errors.Is(err, core.ErrRequestsRefused) {
		t.Errorf("Ping on a closed session = %v", err)
	}
}

func TestClientErrorAnswer(t *testing.T) {
	srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 5, Messages: []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("hi")}}}})
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"sampling": map[string]any{}})
	path, reply := c.callAsync(1, "tools/call", map[string]any{"name": "ask"})
	req := nextRequest(t, path, "sampling/createMessage", "")
	answer(t, c.ss, req.ID, `"error":{"code":-1,"message":"User rejected sampling request","data":{"why":"no"}}`)
	o := await(t, got, "the error")
	var ce *core.ClientError
	if !errors.As(o.err, &ce) {
		t.Fatalf("error %v (%T), want *ClientError", o.err, o.err)
	}
	if ce.Method != "sampling/createMessage" || ce.Code != -1 || ce.Message != "User rejected sampling request" || canon(t, ce.Data) != `{"why":"no"}` {
		t.Errorf("client error %+v", ce)
	}
	if want := "Client returned an error for sampling/createMessage request (code: -1): User rejected sampling request"; ce.Error() != want {
		t.Errorf("text %q", ce.Error())
	}
	// The handler returned the client's error: it is the tool's error, for the model to read.
	wantToolError(t, await(t, reply, "the reply"), ce.Error())
}

// TestAnswerRouting: an answer resolves only the pending request of the session it is delivered
// to, and only by its id.
func TestAnswerRouting(t *testing.T) {
	srv, got := askServer(nil, func(ctx context.Context, req *core.ToolRequest) (any, error) {
		return req.ListRoots(ctx)
	})
	a, b := newClient(t, srv), newClient(t, srv)
	for _, c := range []*client{a, b} {
		c.initWith("2025-11-25", map[string]any{"roots": map[string]any{}})
	}
	path, reply := a.callAsync(1, "tools/call", map[string]any{"name": "ask"})
	req := nextRequest(t, path, "roots/list", "")
	answer(t, b.ss, req.ID, `"result":{"roots":[{"uri":"file:///from-b"}]}`)                     // right id, wrong session
	answer(t, a.ss, json.RawMessage(`"no-such-id"`), `"result":{"roots":[{"uri":"file:///x"}]}`) // unknown id
	answer(t, a.ss, json.RawMessage(`7`), `"error":{"code":-1,"message":"x"}`)
	answer(t, a.ss, req.ID, `"result":{"roots":[{"uri":"file:///from-a"}]}`)
	o := await(t, got, "the answer")
	if o.err != nil || o.v.(*core.ListRootsResult).Roots[0].URI != "file:///from-a" {
		t.Errorf("outcome %+v: resolved by a stray answer", o)
	}
	await(t, reply, "the reply")
	// A duplicate answer after the request is done is dropped as well.
	answer(t, a.ss, req.ID, `"result":{"roots":[]}`)
	quiet(t, b.out)
}

// refusingSink is a request path that cannot carry requests (like a JSON response).
type refusingSink struct{ *sink }

func (refusingSink) RefuseRequests() error {
	return errors.New("JSON response mode does not support server-to-client requests")
}

// allAsks makes every kind of server-to-client request, collecting the errors.
func allAsks(ctx context.Context, req *core.ToolRequest) []error {
	_, e1 := req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 1})
	_, e2 := req.Elicit(ctx, &core.ElicitParams{Message: "m"})
	_, e3 := req.ListRoots(ctx)
	e4 := req.Ping(ctx)
	e5 := req.Request(ctx, "x/custom", nil, nil)
	return []error{e1, e2, e3, e4, e5}
}

func TestRequestsRefused(t *testing.T) {
	caps := map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}, "roots": map[string]any{}}
	for _, tt := range []struct {
		name string
		opts transport.SessionOptions
		path func(*sink) transport.Sender
		init bool
		meta map[string]any
	}{
		{name: "ephemeral session", opts: transport.SessionOptions{Ephemeral: true}},
		{name: "path refuses requests", init: true, path: func(s *sink) transport.Sender { return refusingSink{s} }},
		{name: "modern request", meta: modernMeta(map[string]any{metaCaps: caps})},
		{name: "modern session", opts: transport.SessionOptions{Modern: true}, meta: modernMeta(map[string]any{metaCaps: caps})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := make(chan []error, 1)
			// Should a request go out after all, nobody answers it: bound the wait.
			srv := newServer(&core.Options{ServerToClientRequestTimeout: time.Second})
			srv.AddTool(&core.Tool{Name: "ask"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
				errs <- allAsks(ctx, req)
				return core.TextResult("ok"), nil
			})
			out := newSink()
			opts := tt.opts
			opts.Out = out
			ss := transport.NewSession(srv, opts)
			t.Cleanup(ss.Close)
			c := &client{t: t, srv: srv, ss: ss, out: out}
			if tt.init {
				c.initWith("2025-11-25", caps)
			}
			path := newSink()
			var p transport.Sender = path
			if tt.path != nil {
				p = tt.path(path)
			}
			params := map[string]any{"name": "ask"}
			if tt.meta != nil {
				params["_meta"] = tt.meta
			}
			if w := parseWire(t, replyOn(ss, body(t, 1, "tools/call", params), p)); w.Error != nil {
				t.Fatalf("tools/call %s", w)
			}
			for i, err := range await(t, errs, "the tool") {
				if !errors.Is(err, core.ErrRequestsRefused) {
					t.Errorf("ask %d: %v, want ErrRequestsRefused", i, err)
				}
			}
			if tt.opts.Ephemeral || tt.opts.Modern {
				if err := ss.Ping(context.Background(), core.WithTimeout(time.Second)); !errors.Is(err, core.ErrRequestsRefused) {
					t.Errorf("Session.Ping = %v", err)
				}
				if err := ss.NotifyElicitationComplete(context.Background(), "e"); !errors.Is(err, core.ErrRequestsRefused) {
					t.Errorf("NotifyElicitationComplete = %v", err)
				}
			}
			quiet(t, path)
			quiet(t, out)
		})
	}
	t.Run("session path refuses requests", func(t *testing.T) {
		out := newSink()
		ss := transport.NewSession(newServer(nil), transport.SessionOptions{Out: refusingSink{out}})
		t.Cleanup(ss.Close)
		err := ss.Ping(context.Background(), core.WithTimeout(time.Second))
		if !errors.Is(err, core.ErrRequestsRefused) || !strings.Contains(err.Error(), "JSON response mode") {
			t.Errorf("Ping = %v", err)
		}
		quiet(t, out)
	})
}

func TestURLElicitationRequired(t *testing.T) {
	list := []core.ElicitParams{{Message: "Authorize the app", URL: "https://example.com/auth"}, {Message: "Pay", URL: "https://example.com/pay", ElicitationID: "pay-1"}}
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "needs-auth"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, core.URLElicitationRequired(list...)
	})
	t.Run("legacy", func(t *testing.T) {
		c := newClient(t, srv)
		c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
		w := c.call("tools/call", map[string]any{"name": "needs-auth"})
		if w.Error == nil || w.Error.Code != -32042 || w.Error.Message != "URL elicitation required" {
			t.Fatalf("reply %s", w)
		}
		testSchema(t, "URLElicitationRequiredError", w.raw)
		var data struct {
			Elicitations []map[string]any `json:"elicitations"`
		}
		if err := jsonv2.Unmarshal(w.Error.Data, &data); err != nil || len(data.Elicitations) != 2 {
			t.Fatalf("data %s", w.Error.Data)
		}
		if e := data.Elicitations[0]; e["mode"] != "url" || e["url"] != "https://example.com/auth" || e["elicitationId"] == "" || e["elicitationId"] == nil {
			t.Errorf("first elicitation %v", e)
		}
		if e := data.Elicitations[1]; e["elicitationId"] != "pay-1" {
			t.Errorf("second elicitation %v", e)
		}
		if list[0].Mode != "" || list[0].ElicitationID != "" {
			t.Error("URLElicitationRequired changed the caller's slice")
		}
	})
	t.Run("modern", func(t *testing.T) {
		c := newClient(t, srv)
		w := c.call("tools/call", map[string]any{"name": "needs-auth", "_meta": modernMeta(map[string]any{metaCaps: map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}})})
		if w.Error == nil || w.Error.Code == -32042 {
			t.Fatalf("a 2026-07-28 request got %s", w)
		}
		wantModernError(t, w, -32603)
	})
}

func TestOnRootsListChanged(t *testing.T) {
	seen := make(chan *core.Session, 1)
	srv := newServer(&core.Options{OnRootsListChanged: func(_ context.Context, s *core.Session) { seen <- s }})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"roots": map[string]any{"listChanged": true}})
	if b := c.reply(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`); b != nil {
		t.Fatalf("answered: %s", b)
	}
	if s := await(t, seen, "the callback"); s != c.ss {
		t.Error("the callback got another session")
	}
	quiet(t, c.out)
}

// TestRequestAfterHandlerReturned: a request made for a call that is over is refused without
// sending anything: its path is gone.
func TestRequestAfterHandlerReturned(t *testing.T) {
	calls := make(chan *core.ToolRequest, 1)
	srv := newServer(&core.Options{ServerToClientRequestTimeout: time.Second})
	srv.AddTool(&core.Tool{Name: "leaky"}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		calls <- req
		return core.TextResult("done"), nil
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"roots": map[string]any{}})
	path := newSink()
	if w := parseWire(t, replyOn(c.ss, body(t, 1, "tools/call", map[string]any{"name": "leaky"}), path)); w.Error != nil {
		t.Fatalf("%s", w)
	}
	req := await(t, calls, "the tool")
	if _, err := req.ListRoots(context.Background()); err == nil {
		t.Error("a request for a finished call succeeded")
	}
	quiet(t, path)
	quiet(t, c.out)
}

// wantToolError checks that w is a tool result with isError set and text as its one text block.
func wantToolError(t *testing.T, w *wire, text string) {
	t.Helper()
	if w.Error != nil {
		t.Fatalf("want an isError result %q, got the error %s", text, w)
	}
	testutil.ValidateDef(t, specVersion, "CallToolResult", w.Result)
	var r toolResult
	if err := json.Unmarshal(w.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.IsError == nil || !*r.IsError || r.text() != text {
		t.Errorf("result %s, want isError with text %q", w.Result, text)
	}
}
