package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// specVersion is the schema every legacy wire result is checked against.
const specVersion = "2025-11-25"

// failsafe bounds every wait on a channel: reaching it means the awaited event never happened.
const failsafe = 10 * time.Second

// sink is a Sender that records every message and hands each one to a channel as well.
type sink struct {
	mu   sync.Mutex
	msgs [][]byte
	ch   chan []byte
}

func newSink() *sink { return &sink{ch: make(chan []byte, 4096)} }

func (s *sink) Send(_ context.Context, msg []byte) error {
	b := bytes.Clone(msg)
	s.mu.Lock()
	s.msgs = append(s.msgs, b)
	s.mu.Unlock()
	select {
	case s.ch <- b:
	default:
	}
	return nil
}

// all returns the messages sent so far, each decoded.
func (s *sink) all(t testing.TB) []*wire {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*wire, len(s.msgs))
	for i, m := range s.msgs {
		out[i] = parseWire(t, m)
	}
	return out
}

// methods returns the methods of the notifications sent so far, in order.
func (s *sink) methods(t testing.TB) []string {
	var out []string
	for _, w := range s.all(t) {
		out = append(out, w.Method)
	}
	return out
}

// next waits for the next message.
func (s *sink) next(t testing.TB) *wire {
	t.Helper()
	select {
	case b := <-s.ch:
		return parseWire(t, b)
	case <-time.After(failsafe):
		t.Fatal("no message reached the client")
		return nil
	}
}

// wire is a JSON-RPC message as a client reads it.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
	raw     []byte
}

type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (w *wire) String() string { return string(w.raw) }

func parseWire(t testing.TB, b []byte) *wire {
	t.Helper()
	var w wire
	if err := jsonv2.Unmarshal(b, &w); err != nil {
		t.Fatalf("the server sent invalid JSON %q: %v", b, err)
	}
	if w.JSONRPC != "2.0" {
		t.Fatalf("message without jsonrpc 2.0: %s", b)
	}
	w.raw = bytes.Clone(b)
	return &w
}

// client drives one session the way a transport does: bytes in, encoded replies out.
type client struct {
	t   testing.TB
	srv *core.Server
	ss  *core.Session
	out *sink
	ids atomic.Int64
}

func newClient(t testing.TB, srv *core.Server) *client {
	t.Helper()
	out := newSink()
	ss := transport.NewSession(srv, transport.SessionOptions{Out: out})
	t.Cleanup(ss.Close)
	return &client{t: t, srv: srv, ss: ss, out: out}
}

// reply feeds one raw message and returns the encoded reply, or nil when there is none.
func (c *client) reply(body string) []byte {
	return replyOn(c.ss, body, nil)
}

func replyOn(ss *core.Session, body string, path transport.Sender) []byte {
	msg, err := transport.Core.DecodeMessage([]byte(body))
	if err != nil {
		var derr *jsonrpc.DecodeError
		if !errors.As(err, &derr) {
			panic("DecodeMessage failed with a " + fmt.Sprintf("%T", err))
		}
		if derr.Notification {
			return nil
		}
		return transport.Core.EncodeError(derr.ID, derr.Err)
	}
	resp := transport.Core.Handle(ss, context.Background(), msg, path)
	if resp == nil {
		return nil
	}
	return transport.Core.EncodeResponseMessage(resp)
}

// send feeds one raw message that must be answered.
func (c *client) send(body string) *wire {
	c.t.Helper()
	b := c.reply(body)
	if b == nil {
		c.t.Fatalf("no reply to %s", body)
	}
	return parseWire(c.t, b)
}

// body builds a request with the given id and params (nil for none).
func body(t testing.TB, id any, method string, params any) string {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call sends a request with a fresh id and checks that the reply echoes it.
func (c *client) call(method string, params any) *wire {
	c.t.Helper()
	id := c.ids.Add(1)
	w := c.send(body(c.t, id, method, params))
	if string(w.ID) != fmt.Sprint(id) {
		c.t.Fatalf("reply id %s, want %d: %s", w.ID, id, w)
	}
	return w
}

// result sends a request that must succeed, checks the result against def of the schema (when
// def is set) and decodes it into into (when set).
func (c *client) result(method string, params any, def string, into any) *wire {
	c.t.Helper()
	w := c.call(method, params)
	if w.Error != nil || w.Result == nil {
		c.t.Fatalf("%s failed: %s", method, w)
	}
	if def != "" {
		testutil.ValidateDef(c.t, specVersion, def, w.Result)
		testutil.ValidateDef(c.t, specVersion, "JSONRPCResultResponse", w.raw)
	}
	if into != nil {
		if err := jsonv2.Unmarshal(w.Result, into); err != nil {
			c.t.Fatalf("decoding the %s result %s: %v", method, w.Result, err)
		}
	}
	return w
}

// initialize runs the handshake for version.
func (c *client) initialize(version string) *wire {
	c.t.Helper()
	return c.result("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"sampling": map[string]any{}},
		"clientInfo":      map[string]any{"name": "test-client", "version": "0.1"},
	}, "InitializeResult", nil)
}

// wantError checks an error reply: its code, message and data (nil means no data; a string is
// compared as a JSON string; anything else as JSON).
func wantError(t testing.TB, w *wire, code int64, message string, data any) {
	t.Helper()
	if w.Error == nil {
		t.Fatalf("want error %d %q, got %s", code, message, w)
	}
	if w.Result != nil {
		t.Errorf("error response also carries a result: %s", w)
	}
	if w.Error.Code != code || w.Error.Message != message {
		t.Errorf("error = %d %q, want %d %q (%s)", w.Error.Code, w.Error.Message, code, message, w)
	}
	switch {
	case data == nil && w.Error.Data != nil:
		t.Errorf("error data = %s, want none (%s)", w.Error.Data, w)
	case data != nil:
		if got, want := canon(t, w.Error.Data), canonOf(t, data); got != want {
			t.Errorf("error data = %s, want %s (%s)", got, want, w)
		}
	}
	if w.ID != nil && string(w.ID) != "null" {
		testutil.ValidateDef(t, specVersion, "JSONRPCErrorResponse", w.raw)
	} else {
		// An unreadable id is answered with id null (JSON-RPC 2.0); the error object itself
		// still follows the schema.
		raw, _ := jsonv2.Marshal(w.Error)
		testutil.ValidateDef(t, specVersion, "Error", raw)
	}
}

func canon(t testing.TB, v json.RawMessage) string {
	t.Helper()
	if v == nil {
		return "<absent>"
	}
	v = bytes.Clone(v)
	if err := (*jsontext.Value)(&v).Canonicalize(); err != nil {
		t.Fatalf("canonicalizing %s: %v", v, err)
	}
	return string(v)
}

func canonOf(t testing.TB, x any) string {
	t.Helper()
	if raw, ok := x.(string); ok && strings.HasPrefix(raw, "json:") {
		return canon(t, json.RawMessage(strings.TrimPrefix(raw, "json:")))
	}
	b, err := jsonv2.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return canon(t, b)
}

// toolResult is a decoded tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           *bool           `json:"isError"`
}

func (r *toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "|")
}

// callTool sends tools/call and returns the decoded, schema-checked result.
func (c *client) callTool(name string, args any) *toolResult {
	c.t.Helper()
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	var r toolResult
	c.result("tools/call", params, "CallToolResult", &r)
	if r.IsError == nil {
		c.t.Errorf("tools/call result without isError")
	}
	return &r
}

// newServer makes a server whose log is silent unless the test sets Options.Logger.
func newServer(opts *core.Options) *core.Server {
	o := optionsOf(opts)
	if o.Logger == nil {
		o.Logger = quietLog
	}
	return core.NewServer(core.Implementation{Name: "test-server", Version: "1.0.0"}, o)
}

// await waits for a channel to be closed or to deliver.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(failsafe):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func okTool(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
	return core.TextResult("ok"), nil
}

func okPrompt(_ context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
	return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("hello " + req.Arguments["who"])}}}, nil
}

func okResource(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
	return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: "body of " + req.URI}}}, nil
}

// testSchema checks a message against a definition of the schema.
func testSchema(t testing.TB, def string, raw []byte) {
	t.Helper()
	testutil.ValidateDef(t, specVersion, def, raw)
}

func sprint(v any) string { return fmt.Sprint(v) }

// optionsOf lets the test helpers take nil for the default options.
func optionsOf(opts *core.Options) core.Options {
	if opts == nil {
		return core.Options{}
	}
	return *opts
}
