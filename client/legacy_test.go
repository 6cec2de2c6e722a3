package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// subscriptions is a server that records resources/subscribe and resources/unsubscribe and
// refuses to subscribe to test://refused.
type subscriptions struct {
	server       *core.Server
	subscribed   chan string
	unsubscribed chan string
}

func newSubscriptions(t *testing.T) *subscriptions {
	t.Helper()
	s := &subscriptions{subscribed: make(chan string, 16), unsubscribed: make(chan string, 16)}
	s.server = core.NewServer(core.Implementation{Name: "subs", Version: "1"}, core.Options{
		SubscribeHandler: func(ctx context.Context, req *core.SubscribeRequest) error {
			if req.URI == "test://refused" {
				return jsonrpc.InvalidParams("not this one")
			}
			s.subscribed <- req.URI
			return nil
		},
		UnsubscribeHandler: func(ctx context.Context, req *core.SubscribeRequest) error {
			s.unsubscribed <- req.URI
			return nil
		},
	})
	s.server.AddTool(&core.Tool{Name: "add", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if _, err := req.Log(core.LevelWarning, "subs", "careful"); err != nil {
				return nil, err
			}
			return core.TextResult("ok"), nil
		})
	s.server.AddPrompt(&core.Prompt{Name: "p"}, func(ctx context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{}, nil
	})
	s.server.AddResource(&core.Resource{URI: "test://a", Name: "a"}, func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "test://a", Text: "A"}}}, nil
	})
	return s
}

func mustClient(t *testing.T, s *core.Server) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: s}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// noneIn checks that nothing arrived on ch (by now: the caller made sure anything sent earlier
// would have).
func noneIn[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Errorf("unexpected %s: %v", what, v)
	default:
	}
}

func updatedURI(t *testing.T, n client.Notification) string {
	t.Helper()
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		t.Fatalf("%s params %s: %v", n.Method, n.Params, err)
	}
	return p.URI
}

// TestLegacyListen: on a legacy session, Listen delivers the list changes and resource updates it
// asked for (from the session's stream: the GET stream on HTTP), subscribes each resource once
// however many listens hold it, unsubscribes with the last, and leaves the rest to OnNotification.
func TestLegacyListen(t *testing.T) {
	for _, name := range []string{"memory", "stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			s := newSubscriptions(t)
			others := make(chan client.Notification, 16)
			tr := transports(t, &fixture{server: s.server})[name]()
			c, err := client.Connect(context.Background(), tr, client.Options{Lifecycle: client.Legacy,
				OnNotification: func(ctx context.Context, n client.Notification) { others <- n }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()

			lctx, cancel := context.WithCancel(ctx)
			sub, err := c.Listen(lctx, client.ListenFilter{ToolsListChanged: true,
				ResourceSubscriptions: []string{"test://a", "test://refused", "test://a"}, TaskIDs: []string{"t1"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := client.ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://a"}}
			if !sub.Honored.ToolsListChanged || sub.Honored.PromptsListChanged || !slices.Equal(sub.Honored.ResourceSubscriptions, want.ResourceSubscriptions) || sub.Honored.TaskIDs != nil {
				t.Errorf("Honored = %+v, want %+v", sub.Honored, want)
			}
			if got := await(t, s.subscribed, "resources/subscribe"); got != "test://a" {
				t.Errorf("subscribed %q", got)
			}
			// A second listen on the same resource, with a callback, does not subscribe again.
			second := make(chan client.Notification, 16)
			sub2, err := c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"test://a"}}, func(n client.Notification) { second <- n })
			if err != nil {
				t.Fatal(err)
			}

			s.server.AddTool(&core.Tool{Name: "new", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
					return core.TextResult(""), nil
				})
			if n := await(t, sub.Notifications(), "tools/list_changed on the listen"); n.Method != core.ToolsListChanged {
				t.Errorf("first notification %s", n.Method)
			}
			// Not asked for: to OnNotification. The updates of another resource reach no listen.
			if err := s.server.NotifyPromptsListChanged(ctx); err != nil {
				t.Fatal(err)
			}
			if n := await(t, others, "prompts/list_changed on OnNotification"); n.Method != core.PromptsListChanged {
				t.Errorf("OnNotification got %s", n.Method)
			}
			if err := s.server.NotifyResourceUpdated(ctx, "test://a"); err != nil {
				t.Fatal(err)
			}
			for _, ch := range []<-chan client.Notification{sub.Notifications(), second} {
				if n := await(t, ch, "resources/updated"); n.Method != core.ResourceUpdated || updatedURI(t, n) != "test://a" {
					t.Errorf("got %s %s", n.Method, n.Params)
				}
			}
			noneIn(t, others, "notification on OnNotification that a listen took")

			// The first listen ends with its context; the second still holds the subscription.
			cancel()
			await(t, sub.Done(), "the listen to end with its context")
			if err := sub.Err(); err != nil {
				t.Errorf("Err = %v", err)
			}
			noneIn(t, s.unsubscribed, "resources/unsubscribe while a listen holds the resource")
			if err := sub2.Close(); err != nil {
				t.Fatal(err)
			}
			if got := await(t, s.unsubscribed, "resources/unsubscribe after the last listen"); got != "test://a" {
				t.Errorf("unsubscribed %q", got)
			}
			noneIn(t, s.subscribed, "second resources/subscribe")

			// Listens open at Close end with ErrClosed.
			sub3, err := c.Listen(ctx, client.ListenFilter{PromptsListChanged: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := sub3.Err(); !errors.Is(err, client.ErrClosed) {
				t.Errorf("listen open at Close: %v", err)
			}
		})
	}
}

// TestLegacyListenAndSubscribe: an explicit Subscribe and a listen on the same resource share one
// server subscription; Unsubscribe while the listen holds it tells the server nothing.
func TestLegacyListenAndSubscribe(t *testing.T) {
	s := newSubscriptions(t)
	c := mustClient(t, s.server)
	ctx := context.Background()
	if err := c.Subscribe(ctx, "test://a"); err != nil {
		t.Fatal(err)
	}
	await(t, s.subscribed, "resources/subscribe")
	sub, err := c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"test://a"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe(ctx, "test://a"); err != nil {
		t.Fatal(err)
	}
	noneIn(t, s.unsubscribed, "resources/unsubscribe while the listen holds the resource")
	noneIn(t, s.subscribed, "a second resources/subscribe")
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if got := await(t, s.unsubscribed, "resources/unsubscribe"); got != "test://a" {
		t.Errorf("unsubscribed %q", got)
	}
}

// expiringServer is a real HTTP server whose sessions the test deletes, counting initialize.
type expiringServer struct {
	*subscriptions
	srv         *httptest.Server
	initializes atomic.Int32
}

func newExpiringServer(t *testing.T) *expiringServer {
	return newExpiringServerWith(t, mcphttp.Options{}, nil)
}

// newExpiringServerWith is newExpiringServer with endpoint options; setup adds to the server
// first.
func newExpiringServerWith(t *testing.T, opts mcphttp.Options, setup func(*expiringServer)) *expiringServer {
	e := &expiringServer{subscriptions: newSubscriptions(t)}
	if setup != nil {
		setup(e)
	}
	h := mcphttp.New(e.server, opts)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			e.initializes.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// expire deletes the session on the server, as its idle timeout or a restart would.
func (e *expiringServer) expire(t *testing.T, sid string) {
	t.Helper()
	if status := sessionRequest(t, http.MethodDelete, e.srv.URL, sid, ""); status/100 != 2 {
		t.Fatalf("DELETE: HTTP %d", status)
	}
}

// stale reports whether the server answers 404 for session sid.
func (e *expiringServer) stale(t *testing.T, sid string) bool {
	t.Helper()
	return pingStatus(t, e.srv.URL, sid) == http.StatusNotFound
}

// pingStatus posts a ping on session sid with a plain HTTP client and returns the status.
func pingStatus(t *testing.T, url, sid string) int {
	t.Helper()
	return sessionRequest(t, http.MethodPost, url, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
}

// sessionRequest sends a plain HTTP request on session sid (a POST with body, or a body-less
// GET or DELETE) and returns the status.
func sessionRequest(t *testing.T, method, url, sid, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", core.LatestHandshakeVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestReconnectAfterExpiry: a call that meets an expired session starts one new session (however
// many calls met it at once) and is repeated there.
func TestReconnectAfterExpiry(t *testing.T) {
	e := newExpiringServer(t)
	logs := make(chan client.LogMessage, 16)
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: e.srv.URL},
		client.Options{Lifecycle: client.Legacy, OnLog: func(ctx context.Context, m client.LogMessage) { logs <- m }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.SetLoggingLevel(ctx, core.LevelError); err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	e.expire(t, old)

	const calls = 5
	errc := make(chan error, calls)
	for range calls {
		go func() {
			_, err := c.CallTool(ctx, "add", map[string]any{"a": 1, "b": 2})
			errc <- err
		}()
	}
	for range calls {
		if err := await(t, errc, "a call after the expiry"); err != nil {
			t.Errorf("call after the expiry: %v", err)
		}
	}
	if n := e.initializes.Load(); n != 2 {
		t.Errorf("%d initialize requests, want 2 (the first session and one new one)", n)
	}
	if sid := c.SessionID(); sid == "" || sid == old {
		t.Errorf("session id %q after reconnecting (old %q)", sid, old)
	}
	// The logging level was restored: the tool's warning stays below it.
	noneIn(t, logs, "log message below the restored level")
}

// TestReconnectKeepsLegacyListens: when the session's GET stream finds the session gone, an open
// legacy listen gets a new session at once, with its resources subscribed again.
func TestReconnectKeepsLegacyListens(t *testing.T) {
	e := newExpiringServer(t)
	type change struct{ old, new string }
	changes := make(chan change, 4)
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: e.srv.URL}, client.Options{Lifecycle: client.Legacy,
		OnReconnect: func(ctx context.Context, old, new string) { changes <- change{old, new} }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	sub, err := c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"test://a"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	await(t, e.subscribed, "resources/subscribe")
	old := c.SessionID()
	e.expire(t, old)
	if got := await(t, e.subscribed, "resources/subscribe on the new session"); got != "test://a" {
		t.Errorf("resubscribed %q", got)
	}
	if ch := await(t, changes, "OnReconnect"); ch.old != old || ch.new == "" || ch.new == old || ch.new != c.SessionID() {
		t.Errorf("OnReconnect(%q, %q); sessions %q then %q", ch.old, ch.new, old, c.SessionID())
	}
	if err := e.server.NotifyResourceUpdated(ctx, "test://a"); err != nil {
		t.Fatal(err)
	}
	if n := await(t, sub.Notifications(), "resources/updated on the new session"); updatedURI(t, n) != "test://a" {
		t.Errorf("got %s %s", n.Method, n.Params)
	}
	select {
	case <-sub.Done():
		t.Fatalf("the listen ended: %v", sub.Err())
	default:
	}
}

// TestDisableReconnect: with DisableReconnect an expired session fails calls with
// ErrSessionExpired and ends legacy listens, until Reconnect starts a new one (and deletes a live
// old one).
func TestDisableReconnect(t *testing.T) {
	e := newExpiringServer(t)
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: e.srv.URL}, client.Options{Lifecycle: client.Legacy, DisableReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	sub, err := c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	e.expire(t, old)
	for range 2 {
		if _, err := c.CallTool(ctx, "add", map[string]any{}); !errors.Is(err, client.ErrSessionExpired) {
			t.Fatalf("call on the expired session: %v", err)
		}
	}
	await(t, sub.Done(), "the legacy listen to end with the session")
	if err := sub.Err(); !errors.Is(err, client.ErrSessionExpired) {
		t.Errorf("listen Err = %v", err)
	}
	if err := c.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "add", map[string]any{}); err != nil {
		t.Fatalf("call on the new session: %v", err)
	}
	// Reconnect on a live session deletes it.
	live := c.SessionID()
	if live == old || e.stale(t, live) {
		t.Fatalf("session %q (old %q) not live", live, old)
	}
	if err := c.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if !e.stale(t, live) {
		t.Errorf("Reconnect left the replaced session %q on the server", live)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping after Reconnect: %v", err)
	}
	if n := e.initializes.Load(); n != 3 {
		t.Errorf("%d initialize requests, want 3", n)
	}
}

// TestReconnectUnsupported: only a legacy HTTP session can be replaced.
func TestReconnectUnsupported(t *testing.T) {
	f := newFixture(t)
	for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
		c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: f.server}, client.Options{Lifecycle: lc})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Reconnect(context.Background()); !errors.Is(err, client.ErrUnsupported) {
			t.Errorf("%s in memory: Reconnect = %v", lc, err)
		}
		_ = c.Close()
	}
	srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{}))
	defer srv.Close()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Reconnect(context.Background()); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("2026-07-28 over HTTP: Reconnect = %v", err)
	}
}

// gatedTransport holds back the GETs that resume a stream (Last-Event-ID) until open is closed.
type gatedTransport struct{ open chan struct{} }

func (g *gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		select {
		case <-g.open:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestReconnectDoesNotRepeatWhatRan: a tools/call whose stream broke, and whose resumption then
// found the session gone, may have run: the client starts a new session but does not call the
// tool again, and says so.
func TestReconnectDoesNotRepeatWhatRan(t *testing.T) {
	var runs atomic.Int32
	var c *client.Client
	gate := &gatedTransport{open: make(chan struct{})}
	e := newExpiringServerWith(t, mcphttp.Options{Resumability: mcphttp.ResumabilityOptions{Enabled: true, RetryInterval: time.Millisecond}}, func(e *expiringServer) {
		e.server.AddTool(&core.Tool{Name: "once", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
				if runs.Add(1) == 1 {
					_ = req.Progress(1, 2, "before")
					if err := req.CloseStream(); err != nil {
						return nil, err
					}
					e.expire(t, c.SessionID()) // while the client waits to resume
					close(gate.open)
				}
				return core.TextResult("ran"), nil
			})
	})
	var err error
	c, err = client.Connect(context.Background(), &client.HTTPTransport{URL: e.srv.URL, HTTPClient: &http.Client{Transport: gate}, DisableStandaloneStream: true},
		client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	old := c.SessionID()
	_, err = c.CallTool(context.Background(), "once", nil, client.WithProgress(func(client.Progress) {}))
	if !errors.Is(err, client.ErrSessionExpired) || !strings.Contains(err.Error(), "not repeated") {
		t.Fatalf("call whose resumption met the expiry: %v", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times", n)
	}
	if sid := c.SessionID(); sid == old || sid == "" {
		t.Errorf("no new session: %q (old %q)", sid, old)
	}
	if _, err := c.CallTool(context.Background(), "once", nil); err != nil {
		t.Errorf("call on the new session: %v", err)
	}
}

// TestLegacyListenWithoutStream: a legacy listen needs the session's GET stream: a server that
// offers none (405) refuses Listen, and a stream lost for good ends the listens with the cause.
func TestLegacyListenWithoutStream(t *testing.T) {
	s := newSubscriptions(t)
	h := mcphttp.New(s.server, mcphttp.Options{})
	var refuseGET atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && refuseGET.Load() {
			http.Error(w, "no stream here", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	refuseGET.Store(true)
	srv.CloseClientConnections() // the GET stream breaks; its reconnections are refused
	await(t, sub.Done(), "the listen to end with its stream")
	var herr *client.HTTPError
	if err := sub.Err(); !errors.As(err, &herr) || herr.StatusCode != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "GET stream") {
		t.Errorf("listen Err = %v", err)
	}
	if _, err := c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, nil); !errors.Is(err, client.ErrUnsupported) || !errors.As(err, &herr) {
		t.Errorf("Listen without a GET stream: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("the session still serves calls: %v", err)
	}
}
