package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// recordingTransport records the requests the client sends.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, r.Clone(context.Background()))
	rt.mu.Unlock()
	r.Header.Set("X-Plugged", "yes")
	return http.DefaultTransport.RoundTrip(r)
}

func (rt *recordingTransport) find(method string, pred func(*http.Request) bool) *http.Request {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, r := range rt.reqs {
		if r.Method == method && (pred == nil || pred(r)) {
			return r
		}
	}
	return nil
}

func TestHTTPSessionDeletedOnClose(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{}))
	defer srv.Close()
	rt := &recordingTransport{}
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, HTTPClient: &http.Client{Transport: rt}}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	sid := c.SessionID()
	if sid == "" {
		t.Fatal("no session id")
	}
	if _, err := c.CallTool(context.Background(), "add", addIn{A: 1, B: 2}); err != nil {
		t.Fatal(err)
	}
	if rt.find(http.MethodGet, nil) == nil {
		t.Error("no standalone GET stream was opened")
	}
	post := rt.find(http.MethodPost, func(r *http.Request) bool { return r.Header.Get("Mcp-Session-Id") == sid })
	if post == nil || post.Header.Get("MCP-Protocol-Version") != core.LatestHandshakeVersion {
		t.Errorf("POST after initialize lacks the session or version header: %v", post)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if rt.find(http.MethodDelete, func(r *http.Request) bool { return r.Header.Get("Mcp-Session-Id") == sid }) == nil {
		t.Fatal("no DELETE on close")
	}
	if status := pingStatus(t, srv.URL, sid); status != http.StatusNotFound {
		t.Errorf("the deleted session still answers: %d", status)
	}
}

// TestHTTPResumesClosedStream: a handler closes its stream early (the polling pattern); the
// client waits the server's retry interval and resumes with Last-Event-ID.
func TestHTTPResumesClosedStream(t *testing.T) {
	f := newFixture(t)
	f.server.AddTool(&core.Tool{Name: "poll", Description: "Closes its stream, then answers.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			_ = req.Progress(1, 2, "before")
			if err := req.CloseStream(); err != nil {
				return nil, err
			}
			_ = req.Progress(2, 2, "after")
			return core.TextResult("polled"), nil
		})
	srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{Resumability: mcphttp.ResumabilityOptions{Enabled: true, RetryInterval: 20 * time.Millisecond}}))
	defer srv.Close()
	rt := &recordingTransport{}
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneStream: true}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var steps []string
	res, err := c.CallTool(context.Background(), "poll", nil, client.WithProgress(func(p client.Progress) { steps = append(steps, p.Message) }))
	if err != nil || res.Content[0].Text != "polled" {
		t.Fatalf("poll: %+v, %v", res, err)
	}
	if strings.Join(steps, ",") != "before,after" {
		t.Errorf("progress across the resumption = %v", steps)
	}
	if rt.find(http.MethodGet, func(r *http.Request) bool { return r.Header.Get("Last-Event-ID") != "" }) == nil {
		t.Error("no GET with Last-Event-ID")
	}
}

// TestHTTPModernHeaders: on 2026-07-28 the client sends the standard headers and mirrors the
// tool's x-mcp-header arguments, which the server's mirror layer checks (a missing or wrong
// header would be answered 400 -32020).
func TestHTTPModernHeaders(t *testing.T) {
	f := newFixture(t)
	f.server.AddTool(&core.Tool{Name: "region", Description: "Mirrors.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"q":{"type":"string"}}}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("mirrored"), nil
		})
	srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{}))
	defer srv.Close()
	rt := &recordingTransport{}
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, HTTPClient: &http.Client{Transport: rt}}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Not listed yet: the client reads the tool list first to learn the annotations.
	res, err := c.CallTool(context.Background(), "region", map[string]any{"region": " eu-west ", "n": 7, "q": "x"})
	if err != nil || res.Content[0].Text != "mirrored" {
		t.Fatalf("call: %+v, %v", res, err)
	}
	call := rt.find(http.MethodPost, func(r *http.Request) bool { return r.Header.Get("Mcp-Method") == "tools/call" })
	if call == nil {
		t.Fatal("no tools/call POST")
	}
	want := map[string]string{
		"Mcp-Name": "region", "Mcp-Param-Region": "=?base64?IGV1LXdlc3Qg?=", "Mcp-Param-N": "7",
		"Mcp-Param-Q": "", "MCP-Protocol-Version": core.Version20260728,
	}
	for k, v := range want {
		if got := call.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if call.Header.Get("Mcp-Session-Id") != "" {
		t.Error("a 2026-07-28 request carries a session id")
	}
}

func TestHTTPListen(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{}))
	defer srv.Close()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := c.Listen(ctx, client.ListenFilter{ToolsListChanged: true, PromptsListChanged: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sub.Honored.ToolsListChanged {
		t.Errorf("honored = %+v", sub.Honored)
	}
	f.server.NotifyToolsListChanged(context.Background())
	select {
	case n := <-sub.Notifications():
		if n.Method != "notifications/tools/list_changed" {
			t.Errorf("got %s", n.Method)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	cancel()
	select {
	case <-sub.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end with its context")
	}
	if err := sub.Err(); err != nil {
		t.Errorf("Err after the client ended it: %v", err)
	}
	// A legacy session listens on its GET stream: without one, Listen is refused.
	lc, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, DisableStandaloneStream: true}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	if _, err := lc.Listen(context.Background(), client.ListenFilter{}, nil); !errors.Is(err, client.ErrUnsupported) || !strings.Contains(err.Error(), "DisableStandaloneStream") {
		t.Errorf("legacy Listen without a GET stream: %v", err)
	}
}

func TestHTTPErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"nope"}}`))
	}))
	defer srv.Close()
	_, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL}, client.Options{Lifecycle: client.Legacy})
	var herr *client.HTTPError
	if !errors.As(err, &herr) || herr.StatusCode != http.StatusUnauthorized || !strings.Contains(herr.Body, "who are you") {
		t.Errorf("401: %v", err)
	}
	_, err = client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t"}}}, client.Options{Lifecycle: client.Legacy})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("JSON-RPC error body: %v", err)
	}
}

// TestListenOnOneChannel: the in-memory and stdio transports carry subscriptions/listen on the
// connection's one channel (served by the core); the client ends a stream with
// notifications/cancelled and gets its final result.
func TestListenOnOneChannel(t *testing.T) {
	for _, name := range []string{"memory", "stdio"} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			c, err := client.Connect(context.Background(), transports(t, f)[name](), client.Options{Lifecycle: client.Modern})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tools := c.ServerCapabilities().Tools; tools == nil || !tools.ListChanged {
				t.Errorf("discover does not offer list changes: %+v", c.ServerCapabilities())
			}
			got := make(chan client.Notification, 4)
			ctx, cancel := context.WithCancel(context.Background())
			sub, err := c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) { got <- n })
			if err != nil {
				t.Fatal(err)
			}
			if !sub.Honored.ToolsListChanged || sub.Honored.PromptsListChanged {
				t.Errorf("honored = %+v", sub.Honored)
			}
			_ = f.server.NotifyPromptsListChanged(context.Background()) // not asked for
			_ = f.server.NotifyToolsListChanged(context.Background())
			select {
			case n := <-got:
				if n.Method != "notifications/tools/list_changed" || !strings.Contains(string(n.Params), "subscriptionId") {
					t.Errorf("got %s %s", n.Method, n.Params)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no notification")
			}
			cancel()
			<-sub.Done()
			if err := sub.Err(); err != nil {
				t.Errorf("Err = %v", err)
			}
		})
	}
}

// TestHTTPReusesConnections: a legacy call answered on an SSE stream leaves its connection
// ready for the next request (the client reads the stream to its end after the response).
func TestHTTPReusesConnections(t *testing.T) {
	f := newFixture(t)
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(mcphttp.New(f.server, mcphttp.Options{}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, DisableStandaloneStream: true}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 10 {
		if _, err := c.CallTool(context.Background(), "add", addIn{A: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n > 2 {
		t.Errorf("%d connections for 12 requests", n)
	}
}
