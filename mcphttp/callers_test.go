package mcphttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// callerServer serves the default stack behind a layer that takes the principal from the X-Who
// header (none when absent), as an authentication layer would.
// Each connection the server closes (once its handler returned) is reported on closed.
func callerServer(t *testing.T, opts mcphttp.Options) (srv *httptest.Server, h *mcphttp.Handler, closed chan struct{}) {
	t.Helper()
	h = mcphttp.New(newServer(newTools()), opts)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(core.WithPrincipal(r.Context(), r.Header.Get("X-Who"))))
	}))
	closed = make(chan struct{}, 64)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	return srv, h, closed
}

var initBody = testutil.Initialize(1, "2025-11-25")

func clientAs(srv *httptest.Server, who string) *testutil.Client {
	c := testutil.NewClient(srv.URL, srv.Client())
	if who != "" {
		c.Header.Set("X-Who", who)
	}
	return c
}

func TestSessionsPerCaller(t *testing.T) {
	const msg = "Too many requests: this caller holds the maximum of 2 sessions"
	srv, h, _ := callerServer(t, mcphttp.Options{MaxSessionsPerCaller: 2})
	var alice []*testutil.Client
	for range 2 {
		c := clientAs(srv, "alice")
		if rep := c.Initialize(t); rep.Status != http.StatusOK || c.SessionID == "" {
			t.Fatalf("initialize: %d %s", rep.Status, rep.Body)
		}
		alice = append(alice, c)
	}
	rep := clientAs(srv, "alice").Post(t, initBody)
	rep.WantError(t, http.StatusTooManyRequests, -32603, msg, "1")
	checkSchema(t, "JSONRPCErrorResponse", rep.Body)

	// Another principal has its own allowance; so do anonymous callers (by address).
	for _, who := range []string{"bob", "bob", ""} {
		if c := clientAs(srv, who); c.Initialize(t).Status != http.StatusOK {
			t.Fatalf("%q refused while alice was at her cap", who)
		}
	}
	// A session that ends gives its slot back.
	if rep := alice[0].Do(t, alice[0].NewRequest(context.Background(), http.MethodDelete)); rep.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", rep.Status, rep.Body)
	}
	if rep := clientAs(srv, "alice").Initialize(t); rep.Status != http.StatusOK {
		t.Fatalf("alice refused after one of her sessions ended: %d %s", rep.Status, rep.Body)
	}
	// A refused initialize leaves nothing behind: alice is at her cap again, and the store holds
	// alice's two, bob's two and the anonymous caller's one.
	clientAs(srv, "alice").Post(t, initBody).WantError(t, http.StatusTooManyRequests, -32603, msg, "1")
	if n := h.Store().Len(); n != 5 {
		t.Errorf("store holds %d sessions, want 5", n)
	}
}

func TestSessionsPerCallerByAddress(t *testing.T) {
	srv, h, _ := callerServer(t, mcphttp.Options{MaxSessionsPerCaller: 1})
	if rep := clientAs(srv, "").Initialize(t); rep.Status != http.StatusOK {
		t.Fatal(rep.Status)
	}
	clientAs(srv, "").Post(t, initBody).WantError(t, http.StatusTooManyRequests, -32603,
		"Too many requests: this caller holds the maximum of 1 sessions", "1")
	if n := h.Store().Len(); n != 1 {
		t.Errorf("store holds %d sessions, want 1", n)
	}
	off, _, _ := callerServer(t, mcphttp.Options{MaxSessionsPerCaller: -1})
	for range 3 {
		if rep := clientAs(off, "").Initialize(t); rep.Status != http.StatusOK {
			t.Fatalf("no cap: %d %s", rep.Status, rep.Body)
		}
	}
}

func TestListenStreamsPerCaller(t *testing.T) {
	srv, _, closed := callerServer(t, mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreamsPerCaller: 1}})
	open := func(who string, id any) *http.Response {
		t.Helper()
		c := clientAs(srv, who)
		resp, err := c.HTTP.Do(c.NewModernPost(context.Background(), listenBody(id, toolsOnly)))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := open("alice", "a1")
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first listen: %d", first.StatusCode)
	}
	ls := &listenStream{resp: first, sr: testutil.NewSSEReader(first.Body)}
	ls.next(t) // acknowledged: the stream holds its slot
	second := open("alice", "a2")
	body, _ := io.ReadAll(second.Body)
	_ = second.Body.Close()
	rep := testutil.Reply{Status: second.StatusCode, Header: second.Header, Body: body}
	rep.WantError(t, http.StatusTooManyRequests, -32603,
		"Too many requests: this caller holds the maximum of 1 subscriptions/listen streams", `"a2"`)
	bob := open("bob", "b1")
	if bob.StatusCode != http.StatusOK {
		t.Fatalf("bob refused while alice was at her cap: %d", bob.StatusCode)
	}
	bls := &listenStream{resp: bob, sr: testutil.NewSSEReader(bob.Body)}
	bls.next(t)
	bls.close()
	// Closing alice's stream frees her slot once its handler ends (then the server closes the
	// connection). Bob's connection closes too, in either order: wait for both.
	ls.close()
	recv(t, closed, "a listen connection to close")
	recv(t, closed, "the other listen connection to close")
	again := open("alice", "a3")
	defer again.Body.Close()
	if again.StatusCode != http.StatusOK {
		t.Fatalf("alice refused after her stream ended: %d", again.StatusCode)
	}
}

// counter is a CallerCounter in memory that can be made to fail, standing for a shared store.
type counter struct {
	mu   sync.Mutex
	n    map[string]int
	fail error
}

func (c *counter) Acquire(_ context.Context, key string, max int) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return false, c.fail
	}
	if c.n[key] >= max {
		return false, nil
	}
	c.n[key]++
	return true, nil
}

func (c *counter) Release(_ context.Context, key string) {
	c.mu.Lock()
	c.n[key]--
	c.mu.Unlock()
}

// TestCallersShared: with Options.Callers the session and listen caps count there, under keys
// naming the cap and the caller; a counter that fails answers 503 (at initialize as a failing
// store does), never admits.
func TestCallersShared(t *testing.T) {
	cn := &counter{n: map[string]int{}}
	srv, _, _ := callerServer(t, mcphttp.Options{MaxSessionsPerCaller: 1, Callers: cn})
	a := clientAs(srv, "alice")
	if rep := a.Initialize(t); rep.Status != http.StatusOK {
		t.Fatalf("initialize: %d %s", rep.Status, rep.Body)
	}
	cn.mu.Lock()
	got := cn.n["sessions|principal:alice"]
	cn.mu.Unlock()
	if got != 1 {
		t.Fatalf("the shared counter holds %d of alice's sessions, want 1", got)
	}
	clientAs(srv, "alice").Post(t, initBody).WantError(t, http.StatusTooManyRequests, -32603,
		"Too many requests: this caller holds the maximum of 1 sessions", "1")
	if rep := a.Do(t, a.NewRequest(context.Background(), http.MethodDelete)); rep.Status != http.StatusOK {
		t.Fatalf("DELETE: %d", rep.Status)
	}
	cn.mu.Lock()
	got = cn.n["sessions|principal:alice"]
	cn.fail = errors.New("down")
	cn.mu.Unlock()
	if got != 0 {
		t.Fatalf("the ended session's unit was not given back: %d", got)
	}
	clientAs(srv, "alice").Post(t, initBody).WantError(t, http.StatusServiceUnavailable, -32603,
		"Service unavailable: the session could not be stored", "1")
	l := clientAs(srv, "bob")
	rep := l.PostModern(t, testutil.ModernRequest(2, "subscriptions/listen",
		map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	rep.WantError(t, http.StatusServiceUnavailable, -32603, "Service unavailable: the per-caller limits could not be checked", "2")
}
