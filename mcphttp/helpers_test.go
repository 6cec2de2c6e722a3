package mcphttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// bound is how long a test waits for something that should happen at once before it fails.
const bound = 5 * time.Second

// tools is the tool set of the test server, with the channels the tests drive them through.
type tools struct {
	// entered receives the request id (as JSON) of every call of "block" and "waitctx" once the
	// handler runs.
	entered chan string
	// release lets every blocked "block" call return.
	release chan struct{}
	// ctxDone receives the cause of a "waitctx" call's context once it ended.
	ctxDone chan error
	// finish, when non-nil, is waited on by "waitctx" after its context ended, so a test can
	// hold a handler in place while the endpoint shuts down.
	finish chan struct{}
	// notified receives the request id of a "stream" call once it sent its first progress
	// notification; the call then waits on release (or its context, whose cause goes to ctxDone).
	notified chan string
	// flooded receives the result of every notify call of a "flood" call, in order.
	flooded chan []error
}

func newTools() *tools {
	return &tools{
		entered: make(chan string, 16),
		release: make(chan struct{}),
		ctxDone: make(chan error, 16),

		notified: make(chan string, 16),
		flooded:  make(chan []error, 16),
	}
}

// newServer returns a core server with the test tools: echo, progress, block, waitctx, roots
// (asks the client for roots/list and answers with the first URI, or with the error as text),
// whoami (the client's name from initialize, or "nobody"), and those of addModernTools. It
// accepts resource subscriptions.
func newServer(tl *tools) *core.Server {
	return newServerWith(tl, nil)
}

// newServerWith is newServer with the given core options (nil: resource subscriptions accepted).
func newServerWith(tl *tools, opts *core.Options) *core.Server {
	if opts == nil {
		opts = &core.Options{SubscribeHandler: core.AcceptSubscription}
	}
	s := core.NewServer(core.Implementation{Name: "mcphttp-test", Version: "1.0.0"}, optionsOf(opts))
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&core.Tool{Name: "echo", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Arguments, &in)
		return core.TextResult(in.Text), nil
	})
	s.AddTool(&core.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var in struct {
			Steps int `json:"steps"`
		}
		_ = json.Unmarshal(req.Arguments, &in)
		for i := 1; i <= in.Steps; i++ {
			if err := req.Progress(float64(i), float64(in.Steps), "step"); err != nil {
				return nil, err
			}
		}
		return core.TextResult("done"), nil
	})
	s.AddTool(&core.Tool{Name: "block", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		tl.entered <- req.ID().String()
		select {
		case <-tl.release:
			return core.TextResult("released"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	s.AddTool(&core.Tool{Name: "waitctx", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		tl.entered <- req.ID().String()
		<-ctx.Done()
		tl.ctxDone <- context.Cause(ctx)
		if tl.finish != nil {
			<-tl.finish
		}
		return nil, ctx.Err()
	})
	s.AddTool(&core.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var res struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		if err := req.Request(ctx, "roots/list", nil, &res); err != nil {
			return core.ErrorResult(err.Error()), nil
		}
		if len(res.Roots) == 0 {
			return core.ErrorResult("no roots"), nil
		}
		return core.TextResult(res.Roots[0].URI), nil
	})
	s.AddTool(&core.Tool{Name: "whoami", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		name := "nobody"
		if ci := req.ClientInfo(); ci != nil {
			name = ci.Name
		}
		return core.TextResult(name), nil
	})
	addModernTools(s, tl)
	return s
}

// fixture is the default stack served over loopback.
type fixture struct {
	tools  *tools
	server *core.Server
	h      *mcphttp.Handler
	srv    *httptest.Server
	hc     *http.Client
	// connClosed receives a value each time the server closed a connection, which happens only
	// after the handler serving it returned (so its deferred clean-up has run).
	connClosed chan struct{}
}

func newFixture(t *testing.T, opts mcphttp.Options) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, nil, nil)
}

// newFixtureOn is newFixture with the server's listener wrapped by wrap (when not nil).
func newFixtureOn(t *testing.T, opts mcphttp.Options, wrap func(net.Listener) net.Listener) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, nil, wrap)
}

// newFixtureWith is newFixtureOn with the core server built from coreOpts (see newServerWith).
func newFixtureWith(t *testing.T, opts mcphttp.Options, coreOpts *core.Options, wrap func(net.Listener) net.Listener) *fixture {
	t.Helper()
	tl := newTools()
	f := &fixture{tools: tl, server: newServerWith(tl, coreOpts), connClosed: make(chan struct{}, 1024)}
	f.h = mcphttp.New(f.server, opts)
	f.srv = httptest.NewUnstartedServer(f.h)
	if wrap != nil {
		f.srv.Listener = wrap(f.srv.Listener)
	}
	f.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed || st == http.StateHijacked {
			select {
			case f.connClosed <- struct{}{}:
			default:
			}
		}
	}
	f.srv.Start()
	f.hc = f.srv.Client()
	// Cleanups run last-in first-out: the endpoint ends its streams before the server waits for
	// its handlers.
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { _ = f.h.Close() })
	return f
}

// client returns a fresh client of the fixture's endpoint.
func (f *fixture) client() *testutil.Client { return testutil.NewClient(f.srv.URL, f.hc) }

// initialized returns a client with a live session.
func (f *fixture) initialized(t *testing.T) *testutil.Client {
	t.Helper()
	c := f.client()
	c.Initialize(t)
	if c.SessionID == "" {
		t.Fatal("initialize returned no session id")
	}
	return c
}

// raw sends a request with exactly the given headers (pairs; an empty value is sent as an empty
// header), plus Content-Type application/json on a POST unless the pairs override it.
func (f *fixture) raw(t *testing.T, method, body string, hdr ...string) testutil.Reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.srv.URL, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header[http.CanonicalHeaderKey(hdr[i])] = []string{hdr[i+1]}
	}
	return f.client().Do(t, req)
}

// checkSchema validates data against a definition of the 2025-11-25 schema when the schema files
// are present, and does nothing otherwise (ValidateDef would skip the rest of the test).
func checkSchema(t *testing.T, def string, data []byte) {
	t.Helper()
	if testutil.SchemaAvailable("2025-11-25") {
		testutil.ValidateDef(t, "2025-11-25", def, data)
	}
}

// wantEmpty checks a bodiless answer with the given status.
func wantEmpty(t *testing.T, r testutil.Reply, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d (body %s)", r.Status, status, r.Body)
	}
	if len(r.Body) != 0 {
		t.Fatalf("body = %q, want none", r.Body)
	}
}

// wantResult checks a successful response with the given id and returns its result.
func wantResult(t *testing.T, w testutil.Wire, id string) json.RawMessage {
	t.Helper()
	if w.Error != nil {
		t.Fatalf("error response %d %q (data %s), want a result", w.Error.Code, w.Error.Message, w.Error.Data)
	}
	if string(w.ID) != id {
		t.Fatalf("id = %s, want %s", w.ID, id)
	}
	if len(w.Result) == 0 {
		t.Fatal("response without a result")
	}
	return w.Result
}

// toolText returns the text of the first content block of a tools/call result.
func toolText(t *testing.T, result json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tools/call result with content: %s", result)
	}
	return res.Content[0].Text
}

// recv waits for a value on ch, failing the test after bound.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// eventResult is what nextEvent returns.
type eventResult struct {
	ev  testutil.Event
	err error
}

// nextEvent reads the next SSE item (comments included) with a time bound.
func nextEvent(t *testing.T, sr *testutil.SSEReader, messagesOnly bool) (testutil.Event, error) {
	t.Helper()
	ch := make(chan eventResult, 1)
	go func() {
		var r eventResult
		if messagesOnly {
			r.ev, r.err = sr.NextMessage()
		} else {
			r.ev, r.err = sr.Next()
		}
		ch <- r
	}()
	r := recv(t, ch, "an SSE event")
	return r.ev, r.err
}

// openStream sends req and returns the response once its headers arrived, with a time bound.
func openStream(t *testing.T, c *testutil.Client, req *http.Request) *http.Response {
	t.Helper()
	type result struct {
		resp *http.Response
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, err := c.HTTP.Do(req)
		ch <- result{resp, err}
	}()
	r := recv(t, ch, "response headers")
	if r.err != nil {
		t.Fatalf("%s: %v", req.Method, r.err)
	}
	t.Cleanup(func() { r.resp.Body.Close() })
	return r.resp
}

// wantSSEHeaders checks the headers of an event stream.
func wantSSEHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status = %d, want 200 (body %s)", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	if v := resp.Header.Get("X-Accel-Buffering"); v != "no" {
		t.Fatalf("X-Accel-Buffering = %q, want no", v)
	}
	if v := resp.Header.Get("Cache-Control"); v != "no-cache" {
		t.Fatalf("Cache-Control = %q, want no-cache", v)
	}
}

// optionsOf lets the test helpers take nil for the default options.
func optionsOf(opts *core.Options) core.Options {
	if opts == nil {
		return core.Options{}
	}
	return *opts
}
