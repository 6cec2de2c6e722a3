package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// hostileServer is a hand-written legacy Streamable HTTP server for the client's hardening
// tests: it answers initialize (session "s1") and notifications/initialized itself, and hands
// the standalone GET and every other POST to the test's hooks (nil: 405 for GET, 202 for POST).
type hostileServer struct {
	srv *httptest.Server
	// get serves the standalone GET stream.
	get func(w http.ResponseWriter, r *http.Request)
	// post serves a POST other than initialize and notifications/initialized; m is its message.
	post func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)
}

func newHostileServer(t *testing.T, h *hostileServer) *hostileServer {
	t.Helper()
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostileServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if h.get == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		h.get(w, r)
		return
	case http.MethodDelete:
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	m, derr := transport.Core.DecodeMessage(body)
	if derr != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	switch m.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{"protocolVersion":"`+core.LatestHandshakeVersion+`","capabilities":{},"serverInfo":{"name":"hostile","version":"1"}}}`)
		return
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.post == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.post(w, r, m)
}

// sseOpen starts an SSE answer.
func sseOpen(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// floodServer sends n requests of method (params: params) on the standalone GET stream, then a
// notifications/flood_done, and holds every answer POST open until hold is closed (or the
// client goes). answers counts the answers that arrived, refusals those that are errors, and
// errs receives the first errors.
type floodServer struct {
	*hostileServer
	hold      chan struct{}
	answers   atomic.Int64
	refusals  atomic.Int64
	errs      chan jsonrpc.Error
	got       chan *jsonrpc.Message // the successful answers (up to n)
	holdReply bool
}

func newFloodServer(t *testing.T, n int, method, params string, holdReply bool) *floodServer {
	f := &floodServer{hold: make(chan struct{}), errs: make(chan jsonrpc.Error, 64), got: make(chan *jsonrpc.Message, n), holdReply: holdReply}
	f.hostileServer = newHostileServer(t, &hostileServer{
		get: func(w http.ResponseWriter, r *http.Request) {
			sseOpen(w)
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":%q%s}\n\n", i+1, method, params)
			}
			b.WriteString("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/flood_done\"}\n\n")
			_, _ = io.WriteString(w, b.String())
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
		post: func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
			if m.IsResponse() {
				f.answers.Add(1)
				if m.Error != nil {
					f.refusals.Add(1)
					select {
					case f.errs <- *m.Error:
					default:
					}
				} else {
					select {
					case f.got <- m:
					default:
					}
				}
				if f.holdReply {
					select {
					case <-f.hold:
					case <-r.Context().Done():
					}
				}
			}
			w.WriteHeader(http.StatusAccepted)
		},
	})
	t.Cleanup(func() { close(f.hold) })
	return f
}

// TestServerRequestFlood: a server that sends thousands of requests on its GET stream and holds
// every answer open gets at most Options.MaxServerRequests handled at once (and as many
// refusals): the client's goroutines and heap stay bounded, whatever the flood's size.
func TestServerRequestFlood(t *testing.T) {
	const flood = 3000
	f := newFloodServer(t, flood, "ping", "", true)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	done := make(chan struct{})
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: f.srv.URL}, client.Options{
		Lifecycle: client.Legacy,
		OnNotification: func(ctx context.Context, n client.Notification) {
			if n.Method == "notifications/flood_done" {
				close(done)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	await(t, done, "the end of the flood")
	g1 := runtime.NumGoroutine()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := g1 - g0
	heap := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("%d pings with the answers held open: %d goroutines more (client and loopback server), heap in use %+.1f MiB, %d answers reached the server",
		flood, grew, float64(heap)/(1<<20), f.answers.Load())
	// Each held answer costs a handful of goroutines (the sender, the connection's reader and
	// writer, the server's handler); 2*DefaultMaxServerRequests of them may be held.
	if limit := 2 * client.DefaultMaxServerRequests * 8; grew > limit {
		t.Errorf("the flood left %d more goroutines, want at most %d", grew, limit)
	}
}

// TestServerRequestsBeyondTheBound: requests past Options.MaxServerRequests are refused at once
// with a JSON-RPC error that says why, while the ones admitted keep running; the handlers
// admitted are never more than the bound.
func TestServerRequestsBeyondTheBound(t *testing.T) {
	const limit, extra = 3, 3 // as many refusals as the bound may be in flight at once
	f := newFloodServer(t, limit+extra, "sampling/createMessage", `,"params":{"messages":[],"maxTokens":5}`, false)
	started := make(chan struct{}, limit+extra)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	var running, most atomic.Int32
	done := make(chan struct{})
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: f.srv.URL}, client.Options{
		Lifecycle:         client.Legacy,
		MaxServerRequests: limit,
		Sampling: func(ctx context.Context, p *core.CreateMessageParams) (*core.CreateMessageResult, error) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			started <- struct{}{}
			<-release
			running.Add(-1)
			return &core.CreateMessageResult{Role: "assistant", Content: core.ContentList{core.Text("ok")}, Model: "m"}, nil
		},
		OnNotification: func(ctx context.Context, n client.Notification) {
			if n.Method == "notifications/flood_done" {
				close(done)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer free() // runs before Close, which awaits the handlers
	await(t, done, "the end of the requests")
	for range limit {
		await(t, started, "a sampling handler to start")
	}
	for range extra {
		e := await(t, f.errs, "a refusal")
		if e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, "Client busy") {
			t.Errorf("refusal = %d %q", e.Code, e.Message)
		}
	}
	free()
	if most.Load() > limit {
		t.Errorf("%d sampling handlers ran at once, want at most %d", most.Load(), limit)
	}
	if got := f.refusals.Load(); got != extra {
		t.Errorf("%d refusals, want %d", got, extra)
	}
	for range limit {
		if m := await(t, f.got, "the answer of an admitted request"); m.Error != nil || !strings.Contains(string(m.Result), `"model":"m"`) {
			t.Errorf("admitted request answered %s / %v", m.Result, m.Error)
		}
	}
}

// TestBrokenJSONAnswer: an application/json body is the whole answer to its request, so one that
// cannot be the request's response fails the call at once, saying what was wrong, instead of
// leaving it to wait for its timeout.
func TestBrokenJSONAnswer(t *testing.T) {
	deep := strings.Repeat("[", jsonrpc.MaxNesting+1) + strings.Repeat("]", jsonrpc.MaxNesting+1)
	for name, tc := range map[string]struct{ body, want string }{
		"invalid UTF-8":   {"{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"x\":\"\xff\xfe\"}}", "not valid UTF-8"},
		"not JSON":        {`{"jsonrpc":"2.0","id":ID,"result":`, "not valid JSON"},
		"wrong id":        {`{"jsonrpc":"2.0","id":987654,"result":{}}`, "answers id 987654"},
		"too deep":        {`{"jsonrpc":"2.0","id":ID,"result":{"x":` + deep + `}}`, "nested deeper than 64"},
		"a request":       {`{"jsonrpc":"2.0","id":5,"method":"ping"}`, `request or notification "ping"`},
		"no id, an error": {`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, "Parse error"},
		"empty batch":     {`[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}]`, "batch holds no response"},
		"not JSON-RPC":    {`{"id":ID,"result":{}}`, "not a JSON-RPC message"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHostileServer(t, &hostileServer{post: func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
				if m.Method != "ping" {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, strings.ReplaceAll(tc.body, "ID", m.ID.String()))
			}})
			c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: h.srv.URL, DisableStandaloneStream: true},
				client.Options{Lifecycle: client.Legacy, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.Ping(context.Background())
			if !errors.Is(err, client.ErrInvalidResponse) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ping answered with %s: %v, want ErrInvalidResponse saying %q", name, err, tc.want)
			}
		})
	}
}

// TestCrossOriginRedirect: a 307 that sends a POST to another origin (which would take its body
// and custom headers along) is refused by default, naming the origin; one within the endpoint's
// origin is followed, and HTTPTransport.AllowCrossOriginRedirects lets the other one through.
func TestCrossOriginRedirect(t *testing.T) {
	reached := make(chan http.Header, 8)
	other := newHostileServer(t, &hostileServer{post: func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		reached <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{}}`)
	}})
	var target atomic.Value // where the endpoint redirects a ping
	h := newHostileServer(t, &hostileServer{post: func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		if r.URL.Path == "/moved" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+m.ID.String()+`,"result":{}}`)
			return
		}
		if m.Method != "ping" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		http.Redirect(w, r, target.Load().(string), http.StatusTemporaryRedirect)
	}})
	connect := func(allow bool) *client.Client {
		c, err := client.Connect(context.Background(), &client.HTTPTransport{
			URL: h.srv.URL + "/mcp", Header: http.Header{"X-Api-Key": {"secret"}},
			DisableStandaloneStream: true, AllowCrossOriginRedirects: allow,
		}, client.Options{Lifecycle: client.Legacy})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c := connect(false)
	target.Store(other.srv.URL + "/mcp")
	err := c.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "another origin, "+other.srv.URL) || !strings.Contains(err.Error(), "AllowCrossOriginRedirects") {
		t.Errorf("ping redirected to another origin: %v", err)
	}
	select {
	case hdr := <-reached:
		t.Fatalf("the other origin received the request (X-Api-Key %q)", hdr.Get("X-Api-Key"))
	default:
	}
	target.Store(h.srv.URL + "/moved")
	if err := c.Ping(context.Background()); err != nil {
		t.Errorf("ping redirected within the origin: %v", err)
	}

	target.Store(other.srv.URL + "/mcp")
	if err := connect(true).Ping(context.Background()); err != nil {
		t.Fatalf("ping redirected to another origin, allowed: %v", err)
	}
	if hdr := await(t, reached, "the allowed redirect"); hdr.Get("X-Api-Key") != "secret" {
		t.Errorf("the allowed redirect lost the custom header: %v", hdr)
	}
}

// TestGETStreamRetryZero: a server that answers the session's GET with retry: 0 and closes it
// at once is reconnected to no sooner than HTTPTransport.MinReconnectDelay, then later and
// later (TestStandaloneStreamBackoff checks each wait): the first three GETs span at least
// 100 ms + 200 ms. A timer never fires early, so the bound cannot flake.
func TestGETStreamRetryZero(t *testing.T) {
	const streams = 3
	at := make(chan time.Time, streams)
	var gets atomic.Int32
	h := newHostileServer(t, &hostileServer{get: func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) > streams {
			w.WriteHeader(http.StatusMethodNotAllowed) // enough: the stream ends for good
			return
		}
		at <- time.Now()
		sseOpen(w)
		_, _ = io.WriteString(w, "retry: 0\n\n")
	}})
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: h.srv.URL}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var first, last time.Time
	for i := range streams {
		last = await(t, at, "a GET")
		if i == 0 {
			first = last
		}
	}
	if span, floor := last.Sub(first), 3*client.DefaultMinReconnectDelay; span < floor {
		t.Errorf("%d GETs in %v, want at least %v between them (a tight reconnection loop)", streams, span, floor)
	}
}
