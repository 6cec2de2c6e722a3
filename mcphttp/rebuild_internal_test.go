package mcphttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/session"
)

// parkedHold is a replica's shared store whose first Hold parks once the session is held (the
// store's copy in place) and before it returns: the window in which the endpoint does not know
// the live session yet.
type parkedHold struct {
	*redisstore.Sessions
	first   atomic.Bool
	id      string        // the session of the first Hold, set before held is closed
	held    chan struct{} // closed when the first Hold parked
	release chan struct{} // closed by the test to let it return
}

func (p *parkedHold) Hold(ctx context.Context, l session.Live) (session.Live, error) {
	got, err := p.Sessions.Hold(ctx, l)
	if p.first.CompareAndSwap(false, true) {
		p.id = l.Entry().ID
		close(p.held)
		<-p.release
	}
	return got, err
}

// sharedReplica is one replica of a session store on the test's redis-server, served over
// loopback; everything stops with the test.
func sharedReplica(t *testing.T, rs *testutil.RedisServer, prefix string, store func(*redisstore.Sessions) session.Store) (*Handler, string) {
	t.Helper()
	rdb, err := redisstore.NewClient(rs.URL())
	if err != nil {
		t.Fatal(err)
	}
	nop := zerolog.Nop()
	r := redisstore.NewRouter(rdb, redisstore.Options{Prefix: prefix, Logger: &nop, LeaseTTL: time.Hour})
	s := core.NewServer(core.Implementation{Name: "replica", Version: "1"}, core.Options{Logger: &nop})
	h := New(s, Options{Store: store(redisstore.NewSessions(r, redisstore.SessionsOptions{}))})
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		_ = h.Close()
		_ = r.Close()
		_ = rdb.Close()
	})
	return h, hs.URL
}

// postAsync sends body as a POST of c and delivers the whole answer (a transport error as the
// body of a zero status).
func postAsync(c *testutil.Client, body string) <-chan testutil.Reply {
	out := make(chan testutil.Reply, 1)
	req := c.NewPost(context.Background(), body)
	go func() {
		resp, err := c.HTTP.Do(req)
		if err != nil {
			out <- testutil.Reply{Body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- testutil.Reply{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}()
	return out
}

// Two first requests of a session on a replica that did not create it, the second arriving while
// the first has handed the rebuilt session to the store and not yet to the endpoint: the second
// waits for that session and is served by it (it used to find the store's copy without the
// endpoint's, and answer 503 or end the session under the first), and the session lives on.
func TestRebuildRaceServesTheOneSession(t *testing.T) {
	rs, err := testutil.StartRedis(testutil.NeedBinary(t, "redis-server", "redis-server"))
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(rs.Close)
	prefix := "rebuild:"
	_, url1 := sharedReplica(t, rs, prefix, func(s *redisstore.Sessions) session.Store { return s })
	park := &parkedHold{held: make(chan struct{}), release: make(chan struct{})}
	h2, url2 := sharedReplica(t, rs, prefix, func(s *redisstore.Sessions) session.Store {
		park.Sessions = s
		return park
	})
	waiting := make(chan string, 1)
	h2.endpoint.sessions.waiting = func(id string) { waiting <- id }

	c1 := testutil.NewClient(url1, nil)
	c1.Initialize(t)
	if c1.SessionID == "" {
		t.Fatal("initialize returned no session id")
	}
	if rep := c1.Post(t, testutil.Notification("notifications/initialized", nil)); rep.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d: %s", rep.Status, rep.Body)
	}
	c2 := *c1
	c2.URL = url2

	first := postAsync(&c2, testutil.Request(1, "ping", nil))
	<-park.held // the first request's session is the store's, not the endpoint's yet
	second := postAsync(&c2, testutil.Request(2, "ping", nil))
	var early *testutil.Reply
	select {
	case id := <-waiting:
		if id != c1.SessionID {
			t.Errorf("waited for session %q, want %q", id, c1.SessionID)
		}
	case rep := <-second: // the second request did not wait: the race
		early = &rep
	}
	close(park.release)
	for i, answers := range []<-chan testutil.Reply{first, second} {
		var rep testutil.Reply
		if i == 1 && early != nil {
			rep = *early
		} else {
			rep = <-answers
		}
		if rep.Status != http.StatusOK {
			t.Errorf("concurrent first request on the other replica: status %d: %s", rep.Status, rep.Body)
			continue
		}
		if w := rep.Message(t); w.Error != nil {
			t.Errorf("concurrent first request on the other replica: %s", rep.Body)
		}
	}
	if early != nil {
		t.Error("the second request did not wait for the session the first was making")
	}
	o := h2.endpoint.sessions
	o.mu.Lock()
	n := len(o.live)
	o.mu.Unlock()
	if n != 1 {
		t.Errorf("the replica serves %d sessions, want 1", n)
	}
	// A fresh id each: the release of a finished request's id reaches the other replica only
	// after its response (docs/replicas.md), so a reused id could meet it still on its way.
	for i, c := range []*testutil.Client{&c2, c1} {
		if w := c.Call(t, 3+i, "ping", nil); w.Error != nil {
			t.Errorf("ping after the race on %s: %v", c.URL, w.Error)
		}
	}
}

// A request of a session on the replica creating it, in the window between the store's Hold and
// the endpoint knowing the session (the record is found, with no state to build from): it waits
// for the session initialize is making instead of answering 503.
func TestCreateRaceServesTheNewSession(t *testing.T) {
	rs, err := testutil.StartRedis(testutil.NeedBinary(t, "redis-server", "redis-server"))
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(rs.Close)
	park := &parkedHold{held: make(chan struct{}), release: make(chan struct{})}
	h, url := sharedReplica(t, rs, "create:", func(s *redisstore.Sessions) session.Store {
		park.Sessions = s
		return park
	})
	waiting := make(chan string, 1)
	h.endpoint.sessions.waiting = func(id string) { waiting <- id }

	c := testutil.NewClient(url, nil)
	initialized := postAsync(c, testutil.Initialize(0, "2025-11-25"))
	<-park.held
	c.SessionID = park.id
	pinged := postAsync(c, testutil.Request(1, "ping", nil))
	var early *testutil.Reply
	select {
	case <-waiting:
	case rep := <-pinged:
		early = &rep
	}
	close(park.release)
	if rep := <-initialized; rep.Status != http.StatusOK || rep.Header.Get("Mcp-Session-Id") != park.id {
		t.Fatalf("initialize: status %d, session %q (want %q): %s", rep.Status, rep.Header.Get("Mcp-Session-Id"), park.id, rep.Body)
	}
	if early != nil {
		t.Fatalf("the request did not wait for the session being created: status %d: %s", early.Status, early.Body)
	}
	if rep := <-pinged; rep.Status != http.StatusOK || rep.Message(t).Error != nil {
		t.Fatalf("ping in the window: status %d: %s", rep.Status, rep.Body)
	}
}
