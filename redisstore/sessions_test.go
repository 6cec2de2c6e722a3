package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/session"
)

// coreSession returns the in-process protocol session a replica holds for id.
func coreSession(t *testing.T, r *replica, id string) *core.Session {
	t.Helper()
	s, err := r.handler.Endpoint().Lookup(context.Background(), id, false, nil)
	if err != nil {
		t.Fatalf("the replica cannot find session %s: %v", id, err)
	}
	return s.Session()
}

// TestSessionOnAnotherReplica: a session initialized on one replica serves requests on another,
// changes made on either are written through and seen by the other, and DELETE on one ends the
// session everywhere.
func TestSessionOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())

	ca := a.initialize(t)
	cb := b.client(ca)
	if w := cb.Call(t, 1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"x": 1}}); w.Error != nil || !strings.Contains(string(w.Result), `echo {\"x\":1}`) {
		t.Fatalf("tools/call on the other replica: %+v %s", w.Error, w.Result)
	}
	// The rebuilt session is the initialized one: same version and capabilities.
	bs := coreSession(t, b, ca.SessionID)
	if !bs.Initialized() || bs.ProtocolVersion() != "2025-11-25" || !bs.ClientCapabilities().Has("sampling") || bs.ClientInfo().Name != "test" {
		t.Fatalf("rebuilt session: initialized %v, version %q", bs.Initialized(), bs.ProtocolVersion())
	}
	// A change on b reaches a's copy.
	if w := cb.Call(t, 2, "logging/setLevel", map[string]any{"level": "critical"}); w.Error != nil {
		t.Fatalf("setLevel: %+v", w.Error)
	}
	if w := cb.Call(t, 3, "resources/subscribe", map[string]any{"uri": "test://doc"}); w.Error != nil {
		t.Fatalf("subscribe: %+v", w.Error)
	}
	as := coreSession(t, a, ca.SessionID)
	if as.LogLevel() != core.LevelCritical || !as.Subscribed("test://doc") {
		t.Fatalf("the creating replica sees level %q, subscribed %v", as.LogLevel(), as.Subscribed("test://doc"))
	}
	// A second initialize naming the session is refused on either replica.
	rep := cb.Post(t, testutil.Initialize(4, "2025-11-25"))
	rep.WantError(t, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Invalid Request: Server already initialized", "4")

	// DELETE on b: gone on both, and a's copy ends.
	if rep := cb.Do(t, cb.NewRequest(context.Background(), http.MethodDelete)); rep.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", rep.Status, rep.Body)
	}
	await(t, chanOf(as.Done()), "the creating replica to end its copy")
	for _, c := range []*testutil.Client{ca, cb} {
		c.Post(t, testutil.Request(5, "ping", nil)).WantError(t, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Session not found", "5")
	}
}

// chanOf turns a close-only channel into one a generic await can read.
func chanOf(done <-chan struct{}) <-chan struct{} { return done }

// TestSessionCapAcrossReplicas: the cap counts the sessions of every replica, atomically.
func TestSessionCapAcrossReplicas(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	so := redisstore.SessionsOptions{MaxSessions: 2}
	a := newReplica(t, rs, prefix, so, newProbe())
	b := newReplica(t, rs, prefix, so, newProbe())
	a.initialize(t)
	cb := b.initialize(t)
	rep := a.client(nil).Post(t, testutil.Initialize(1, "2025-11-25"))
	rep.WantError(t, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service unavailable: maximum concurrent sessions (2) reached", "1")
	if n := a.sessions.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	cb.Do(t, cb.NewRequest(context.Background(), http.MethodDelete))
	a.initialize(t) // room again
}

// TestSessionCapIsAtomic: replicas racing for the last places never exceed the cap.
func TestSessionCapIsAtomic(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	so := redisstore.SessionsOptions{MaxSessions: 5}
	reps := []*replica{newReplica(t, rs, prefix, so, newProbe()), newReplica(t, rs, prefix, so, newProbe()), newReplica(t, rs, prefix, so, newProbe())}
	codes := make(chan int, 30)
	for i := range 30 {
		go func() {
			rep := reps[i%3].client(nil).Do(t, reps[i%3].client(nil).NewPost(context.Background(), testutil.Initialize(1, "2025-11-25")))
			codes <- rep.Status
		}()
	}
	ok := 0
	for range 30 {
		switch c := await(t, codes, "an initialize"); c {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("initialize answered %d", c)
		}
	}
	if ok != 5 {
		t.Fatalf("%d sessions were created under a cap of 5", ok)
	}
}

// TestSessionIdleExpiry: the record's TTL is the idle timeout, renewed by requests on any
// replica (not by refused ones); a record that expired is a 404 everywhere and the replicas let
// go of their copies.
func TestSessionIdleExpiry(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	so := redisstore.SessionsOptions{IdleTimeout: time.Hour}
	a := newReplica(t, rs, prefix, so, newProbe())
	b := newReplica(t, rs, prefix, so, newProbe())
	ca := a.initialize(t)
	rdb := newClient(t, rs)
	key := prefix + "s:{" + ca.SessionID + "}"
	ttl := func() time.Duration {
		d, err := rdb.PTTL(context.Background(), key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Initialized and not used yet: the record lives UnusedIdleTimeout (2 minutes by default).
	if d := ttl(); d <= 110*time.Second || d > 2*time.Minute {
		t.Fatalf("TTL after initialize %v, want about two minutes", d)
	}
	rdb.PExpire(context.Background(), key, time.Minute)
	cb := b.client(ca)
	cb.Call(t, 1, "ping", nil)
	if d := ttl(); d <= 59*time.Minute {
		t.Fatalf("TTL after a request on the other replica %v, want it renewed", d)
	}
	// A request refused for its Origin does not renew.
	rdb.PExpire(context.Background(), key, time.Minute)
	bad := b.client(ca)
	bad.Header.Set("Origin", "http://evil.example")
	if rep := bad.Post(t, testutil.Request(2, "ping", nil)); rep.Status != http.StatusForbidden {
		t.Fatalf("a foreign Origin got %d", rep.Status)
	}
	if d := ttl(); d > time.Minute {
		t.Fatalf("a refused request renewed the session (TTL %v)", d)
	}
	// Expiry, as Redis does it: the record disappears.
	as := coreSession(t, a, ca.SessionID)
	rdb.Del(context.Background(), key)
	cb.Post(t, testutil.Request(3, "ping", nil)).WantError(t, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Session not found", "3")
	if n := a.sessions.Reap(context.Background()); n != 1 {
		t.Fatalf("the reaper let go of %d sessions, want 1", n)
	}
	await(t, as.Done(), "the expired copy to end")
}

// TestUnusedIdleTimeoutOff: a negative UnusedIdleTimeout gives a new session the whole idle
// timeout from initialize on.
func TestUnusedIdleTimeoutOff(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{IdleTimeout: time.Hour, UnusedIdleTimeout: -1}, newProbe())
	ca := a.initialize(t)
	d, err := newClient(t, rs).PTTL(context.Background(), prefix+"s:{"+ca.SessionID+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	if d <= 59*time.Minute || d > time.Hour {
		t.Fatalf("TTL after initialize %v, want about an hour", d)
	}
}

// TestSamplingAnswerOnAnotherReplica: a tools/call on one replica asks the client for a
// sampling result; the client's answer is POSTed to another replica and reaches the handler.
func TestSamplingAnswerOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	cb := b.client(ca)
	cb.Call(t, 1, "ping", nil) // b holds the session too now

	resp := ca.Open(t, ca.NewPost(context.Background(), testutil.CallTool(2, "ask", map[string]any{}, nil)))
	defer resp.Body.Close()
	sr := testutil.NewSSEReader(resp.Body)
	ev := nextMessage(t, sr)
	req := testutil.DecodeWire(t, []byte(ev.Data))
	if req.Method != "sampling/createMessage" {
		t.Fatalf("the stream carried %s first", ev.Data)
	}
	answer := testutil.Result(req.ID, map[string]any{"role": "assistant", "model": "m-42", "content": map[string]any{"type": "text", "text": "ok"}})
	if rep := cb.Post(t, answer); rep.Status != http.StatusAccepted {
		t.Fatalf("the answer got %d %s", rep.Status, rep.Body)
	}
	for {
		ev := nextMessage(t, sr)
		w := testutil.DecodeWire(t, []byte(ev.Data))
		if w.Method != "" {
			continue
		}
		if w.Error != nil || !strings.Contains(string(w.Result), "model m-42") {
			t.Fatalf("tools/call answered %s", ev.Data)
		}
		return
	}
}

// TestCancelOnAnotherReplica: notifications/cancelled that lands on another replica cancels the
// call where it runs.
func TestCancelOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	pa := newProbe()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, pa)
	b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	cb := b.client(ca)
	cb.Call(t, 1, "ping", nil)

	done := make(chan testutil.Reply, 1)
	go func() { done <- ca.Post(t, testutil.CallTool(7, "block", map[string]any{}, nil)) }()
	await(t, pa.running, "the call to run")
	if rep := cb.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": 7, "reason": "user"})); rep.Status != http.StatusAccepted {
		t.Fatalf("the cancel got %d", rep.Status)
	}
	if err := await(t, pa.cancelled, "the call to be cancelled"); err == nil {
		t.Fatal("the call ended without a cause")
	}
	await(t, done, "the cancelled request to end")
}

// TestStreamMessagesOnAnotherReplica: a session-level message sent on a replica that does not
// hold the GET stream reaches the stream on the replica that does, and a broadcast change made
// through another replica reaches that stream once.
func TestStreamMessagesOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	cb := b.client(ca)
	cb.Call(t, 1, "ping", nil)

	get := ca.Open(t, ca.NewRequest(context.Background(), http.MethodGet))
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", get.StatusCode)
	}
	sr := testutil.NewSSEReader(get.Body)
	// The GET handler installs its path before the 200 goes out: b's message finds it.
	bs := coreSession(t, b, ca.SessionID)
	if err := bs.Notify(context.Background(), "notifications/message", map[string]any{"level": "info", "data": "from b"}); err != nil {
		t.Fatalf("a session-level message from the other replica: %v", err)
	}
	if ev := nextMessage(t, sr); !strings.Contains(ev.Data, "from b") {
		t.Fatalf("the GET stream got %q", ev.Data)
	}
	if w := cb.Call(t, 2, "tools/call", map[string]any{"name": "change"}); w.Error != nil {
		t.Fatalf("change: %+v", w.Error)
	}
	if ev := nextMessage(t, sr); !strings.Contains(ev.Data, core.ToolsListChanged) {
		t.Fatalf("the GET stream got %q", ev.Data)
	}
	// Exactly once: the next message is a marker sent after the change.
	_ = bs.Notify(context.Background(), "notifications/message", map[string]any{"level": "info", "data": "marker"})
	if ev := nextMessage(t, sr); !strings.Contains(ev.Data, "marker") {
		t.Fatalf("after the change the GET stream got %q (a duplicate?)", ev.Data)
	}
}

// roundTrips counts the round trips a Redis client makes (a command, a script, a pipeline or a
// transaction each count one; a new connection's handshake, HELLO and CLIENT SETINFO, does
// not): path those made with the context of an HTTP request (the request waits for them),
// off the others (the pipe's release-only round trips, the lease's).
type roundTrips struct{ path, off atomic.Int64 }

func (h *roundTrips) count(ctx context.Context, first redis.Cmder) {
	switch {
	case first.Name() == "hello" || first.Name() == "client" && fmt.Sprint(first.Args()[1]) == "setinfo":
	case ctx.Value(http.LocalAddrContextKey) != nil:
		h.path.Add(1)
	default:
		h.off.Add(1)
	}
}

// total is every round trip counted.
func (h *roundTrips) total() int64 { return h.path.Load() + h.off.Load() }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(ctx, cmd)
		return next(ctx, cmd)
	}
}
func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 {
			h.count(ctx, cmds[0])
		}
		return next(ctx, cmds)
	}
}

// TestOneRoundTripPerRequest: a request on a session the replica holds makes one Redis round trip
// on its path, the script that checks, renews, compares revisions and claims the request's id,
// and at most one after its response, the claim's release (which rides the next lookup of the
// session instead when one comes first); on the replica that created the session and on one that
// rebuilt it (two in all before releases left the request's path, three before request ids were
// claimed across replicas). A resumable SSE stream adds on its path its first event (which records
// the replica running it, for a GET resuming it elsewhere), the stored response, forgetting it
// once delivered, and the take of the caller's unit of resumable calls (the replicas share the
// caps), and its give back after; on a Redis Cluster each of its two stored events also wakes the
// stream's followers after its script (the PUBLISH cannot run inside a script of the stream's
// slot there).
func TestOneRoundTripPerRequest(t *testing.T) {
	rs := needRedis(t)
	for _, c := range []struct {
		name      string
		resumable bool
		path, off int64 // round trips per request: on its path, and at most after it
	}{{"json", false, 1, 1}, {"sse", false, 1, 1}, {"resumable sse", true, 5, 2}} {
		t.Run(c.name, func(t *testing.T) {
			prefix := testPrefix()
			adjust := func(o *mcphttp.Options) {
				o.JSONResponse = c.name == "json"
				o.Resumability.Enabled = c.resumable
			}
			a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe(), adjust)
			b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe(), adjust)
			ca := a.initialize(t)
			cb := b.client(ca)
			cb.Call(t, 1, "ping", nil) // b builds its copy
			rdb := newClient(t, rs)
			for i, r := range []*replica{a, b} {
				cl := []*testutil.Client{ca, cb}[i]
				cl.Call(t, 2, "tools/call", map[string]any{"name": "echo"}) // scripts loaded
				released(t, rdb, prefix, cl.SessionID, 2)
				h := &roundTrips{}
				r.router.Client().AddHook(h)
				const n = 10
				for j := range n {
					if w := cl.Call(t, 10+j, "tools/call", map[string]any{"name": "echo"}); w.Error != nil {
						t.Fatal(w.Error)
					}
				}
				released(t, rdb, prefix, cl.SessionID, 10+n-1) // the last release follows its response
				path := c.path
				if c.resumable && rs == onCluster {
					path += 2
				}
				if got := h.path.Load(); got != path*n {
					t.Errorf("replica %d: %d round trips on the path of %d requests, want %d each", i+1, got, n, path)
				}
				if got := h.off.Load(); got > c.off*n {
					t.Errorf("replica %d: %d round trips after %d requests, want at most %d each", i+1, got, n, c.off)
				}
			}
		})
	}
}

// released waits until the claim of request id of a session is released (the session layer
// releases it after the response, so a client may see the response first).
func released(t *testing.T, rdb redis.UniversalClient, prefix, sessionID string, id int) {
	t.Helper()
	redisstore.Released(t, rdb, prefix+"s:{"+sessionID+"}", "q:"+strconv.Itoa(id))
}

// A replica's store never builds sessions: for one it does not serve yet it returns the record
// (State set), and Hold adopts the live session the transport built from it, once (a second Hold
// returns the held session and leaves the new one alone).
func TestSessionRecordAndHold(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	other := redisstore.NewSessions(newRouter(t, rs, prefix), redisstore.SessionsOptions{})
	t.Cleanup(func() { _ = other.Close() })
	ctx := context.Background()
	rec, err := other.GetChecked(ctx, ca.SessionID, true, nil)
	if err != nil || rec.State == nil || rec.State.ProtocolVersion != "2025-11-25" {
		t.Fatalf("record of a session served elsewhere: %+v, %v", rec, err)
	}
	build := func() *testLive {
		return &testLive{rec: &session.Entry{ID: rec.ID, Origin: rec.Origin, Owner: rec.Owner},
			cs: transport.NewSession(a.server, transport.SessionOptions{ID: rec.ID, State: rec.State})}
	}
	l := build()
	first, err := other.Hold(ctx, l)
	if err != nil || first != session.Live(l) {
		t.Fatalf("Hold: %+v, %v", first, err)
	}
	again, err := other.Hold(ctx, build())
	if err != nil || again != first {
		t.Fatalf("second Hold: same %v, %v", again == first, err)
	}
	if got, err := other.GetChecked(ctx, rec.ID, false, nil); err != nil || got != l.rec {
		t.Fatalf("the held session is not what the store serves now: %v", err)
	}
	if other.Held() != 1 {
		t.Fatalf("Held = %d", other.Held())
	}
}

// testLive is a live session as a transport would hand it to Hold.
type testLive struct {
	rec *session.Entry
	cs  *core.Session
}

func (l *testLive) Entry() *session.Entry  { return l.rec }
func (l *testLive) Session() *core.Session { return l.cs }
func (l *testLive) End()                   { l.cs.Close(); l.rec.End() }

// A repeated initialize naming a session another replica created is refused (400, already
// initialized) without this replica rebuilding, holding or renewing the session: answering it
// needs the record only.
func TestRepeatedInitializeOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	rep := b.client(ca).Post(t, testutil.Request(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"},
	}))
	if rep.Status != http.StatusBadRequest || !strings.Contains(string(rep.Body), "Server already initialized") {
		t.Fatalf("repeated initialize on the other replica: %d %s", rep.Status, rep.Body)
	}
	if n := b.sessions.Held(); n != 0 {
		t.Fatalf("the other replica holds %d sessions after refusing a repeated initialize, want 0", n)
	}
	// The session is still served there once a real request needs it.
	if w := b.client(ca).Call(t, 2, "ping", nil); w.Error != nil {
		t.Fatalf("ping on the other replica: %+v", w.Error)
	}
	if n := b.sessions.Held(); n != 1 {
		t.Fatalf("the other replica holds %d sessions after serving one, want 1", n)
	}
}
