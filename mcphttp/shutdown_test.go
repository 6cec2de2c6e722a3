package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// liveServer is a stack served over loopback by a client of its own, torn down by the test
// itself (not by cleanups) so that goleak can look at what is left.
type liveServer struct {
	tools *tools
	h     *mcphttp.Handler
	srv   *httptest.Server
	tr    *http.Transport
}

func newLiveServer(opts mcphttp.Options) *liveServer {
	tl := newTools()
	ls := &liveServer{tools: tl, h: mcphttp.New(newServer(tl), opts), tr: &http.Transport{}}
	ls.srv = httptest.NewServer(ls.h)
	return ls
}

func (ls *liveServer) client() *testutil.Client {
	return testutil.NewClient(ls.srv.URL, &http.Client{Transport: ls.tr})
}

func (ls *liveServer) stop() {
	ls.srv.Close()
	ls.tr.CloseIdleConnections()
}

// Shutdown ends the GET streams, cancels requests in flight, waits for their handlers to leave,
// and refuses new requests with 503; afterwards no goroutine is left.
func TestShutdown(t *testing.T) {
	leakCheck := goleak.IgnoreCurrent()
	ls := newLiveServer(mcphttp.Options{KeepAlive: 10 * time.Millisecond})
	ls.tools.finish = make(chan struct{})
	c := ls.client()
	c.Initialize(t)

	get := openStream(t, c, c.NewRequest(context.Background(), http.MethodGet))
	wantSSEHeaders(t, get)
	post := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(1, "waitctx", nil, nil)))
	wantSSEHeaders(t, post)
	recv(t, ls.tools.entered, "the request to start")

	shutdownDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		shutdownDone <- ls.h.Shutdown(ctx)
	}()
	// The handler's context ends...
	recv(t, ls.tools.ctxDone, "the request to be cancelled")
	// ...but the handler has not returned yet (it waits on finish), so neither has Shutdown.
	select {
	case err := <-shutdownDone:
		t.Fatalf("Shutdown returned (%v) while a handler was still running", err)
	default:
	}
	// New requests are refused meanwhile, with or without a session.
	nc := ls.client()
	nc.Post(t, testutil.Initialize(9, "2025-11-25")).WantError(t, http.StatusServiceUnavailable, -32603, msgShuttingDown, "9")
	c.Post(t, ping).WantError(t, http.StatusServiceUnavailable, -32603, msgShuttingDown, `"p-1"`)
	c.Do(t, c.NewRequest(context.Background(), http.MethodGet)).WantError(t, http.StatusServiceUnavailable, -32603, msgShuttingDown, "null")

	close(ls.tools.finish)
	if err := recv(t, shutdownDone, "Shutdown to return"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	// Both streams have ended.
	drain := func(name string, resp *http.Response) {
		t.Helper()
		sr := testutil.NewSSEReader(resp.Body)
		for {
			ev, err := nextEvent(t, sr, false)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatalf("%s stream: %v", name, err)
			}
			_ = ev
		}
	}
	drain("GET", get)
	drain("POST", post)
	get.Body.Close()
	post.Body.Close()
	if n := ls.h.Store().Len(); n != 0 {
		t.Fatalf("%d sessions left after Shutdown", n)
	}
	// A second Shutdown (and Close) is harmless.
	if err := ls.h.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if err := ls.h.Close(); err != nil {
		t.Fatalf("Close after Shutdown: %v", err)
	}

	ls.stop()
	goleak.VerifyNone(t, leakCheck)
}

// Close does the same at once, without waiting.
func TestCloseEndsStreamsAndRequests(t *testing.T) {
	leakCheck := goleak.IgnoreCurrent()
	ls := newLiveServer(mcphttp.Options{JSONResponse: true})
	c := ls.client()
	c.Accept = "application/json"
	c.Initialize(t)
	get := openStream(t, c, c.NewRequest(context.Background(), http.MethodGet))
	wantSSEHeaders(t, get)
	done := make(chan testutil.Reply, 1)
	go func() { done <- c.Post(t, testutil.CallTool(1, "waitctx", nil, nil)) }()
	recv(t, ls.tools.entered, "the request to start")

	if err := ls.h.Close(); err != nil {
		t.Fatal(err)
	}
	cause := recv(t, ls.tools.ctxDone, "the request to be cancelled")
	if !errors.Is(cause, context.Canceled) && !errors.Is(cause, core.ErrSessionClosed) {
		t.Fatalf("cause %v, want the endpoint's cancellation or the session's end", cause)
	}
	rep := recv(t, done, "the cancelled request to answer")
	if rep.Status != http.StatusOK {
		t.Fatalf("cancelled request: %d %s", rep.Status, rep.Body)
	}
	if w := rep.Message(t); w.Error == nil || string(w.ID) != "1" {
		t.Fatalf("cancelled request answered %s, want an error for id 1", rep.Body)
	}
	if _, err := nextEvent(t, testutil.NewSSEReader(get.Body), false); !errors.Is(err, io.EOF) {
		t.Fatalf("GET stream after Close: %v, want its end", err)
	}
	get.Body.Close()
	c.Post(t, ping).WantError(t, http.StatusServiceUnavailable, -32603, msgShuttingDown, `"p-1"`)

	ls.stop()
	goleak.VerifyNone(t, leakCheck)
}

// Close cancels the requests that run on a session of their own too: a stateless 2025-11-25
// call and a 2026-07-28 call in flight both see their context end and get an answer, and later
// requests get 503. (Such requests are ended through the session the endpoint holds for them,
// not through a context of their own.)
func TestCloseCancelsEphemeralRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mcphttp.Options
		post func(c *testutil.Client) testutil.Reply
	}{
		{"stateless", mcphttp.Options{Stateless: true}, func(c *testutil.Client) testutil.Reply {
			return c.Post(t, testutil.CallTool(1, "waitctx", nil, nil))
		}},
		{"modern", mcphttp.Options{}, func(c *testutil.Client) testutil.Reply {
			return c.PostModern(t, testutil.ModernRequest(1, "tools/call", map[string]any{"name": "waitctx", "arguments": map[string]any{}}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck := goleak.IgnoreCurrent()
			ls := newLiveServer(tc.opts)
			c := ls.client()
			done := make(chan testutil.Reply, 1)
			go func() { done <- tc.post(c) }()
			recv(t, ls.tools.entered, "the request to start")
			if err := ls.h.Close(); err != nil {
				t.Fatal(err)
			}
			cause := recv(t, ls.tools.ctxDone, "the request to be cancelled")
			if !errors.Is(cause, core.ErrSessionClosed) && !errors.Is(cause, context.Canceled) {
				t.Fatalf("cause %v, want the session's end", cause)
			}
			if rep := recv(t, done, "the cancelled request to answer"); rep.Status == 0 || len(rep.Body) == 0 {
				t.Fatalf("cancelled request: %d %q", rep.Status, rep.Body)
			}
			tc.post(c).WantError(t, http.StatusServiceUnavailable, -32603, msgShuttingDown, "1")
			ls.stop()
			goleak.VerifyNone(t, leakCheck)
		})
	}
}
