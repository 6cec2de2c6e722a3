package redisstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/session"
)

// Wire messages of the conflicts one process refuses, which replicas refuse alike.
const (
	msgInFlight  = "Conflict: Request id is already in flight for this session"
	msgOneStream = "Conflict: Only one SSE stream is allowed per session"
)

// fleet is three replicas on one Redis (or one Redis Cluster) behind a per-connection round-robin
// proxy, and a client of the proxy that opens a connection per request, so that consecutive
// requests of a session land on different replicas.
type fleet struct {
	replicas []*replica
	proxy    *testutil.RoundRobin
	probe    *probe
	prefix   string
}

func newFleet(t *testing.T, adjust ...func(*mcphttp.Options)) *fleet {
	t.Helper()
	rs := needRedis(t)
	f := &fleet{probe: newProbe(), prefix: testPrefix()}
	var addrs []string
	for range 3 {
		r := newReplica(t, rs, f.prefix, redisstore.SessionsOptions{}, f.probe, adjust...)
		f.replicas = append(f.replicas, r)
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, u.Host)
	}
	f.proxy = testutil.NewRoundRobin(t, addrs...)
	return f
}

// oneShot is an HTTP client that opens a new connection for every request.
var oneShot = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

// initialize opens a session through the proxy.
func (f *fleet) initialize(t *testing.T) *testutil.Client {
	t.Helper()
	c := testutil.NewClient(f.proxy.URL(), oneShot)
	rep := c.Post(t, testutil.Initialize(0, "2025-11-25"))
	if rep.Status != http.StatusOK {
		t.Fatalf("initialize through the proxy: %d %s", rep.Status, rep.Body)
	}
	c.SessionID, c.ProtocolVersion = rep.Header.Get("Mcp-Session-Id"), "2025-11-25"
	c.Post(t, testutil.Notification("notifications/initialized", nil))
	return c
}

// wantResult checks a response to request id has a result.
func wantResult(t *testing.T, w testutil.Wire, id string) {
	t.Helper()
	if w.Error != nil || string(w.ID) != id {
		t.Fatalf("response %s: error %+v", w.ID, w.Error)
	}
}

// TestReplicasRequestIDInFlight is the wire case of a request id already in flight on the
// session (one process answers the duplicate 409), through a round robin over three replicas:
// the duplicate lands on another replica than the request it duplicates, and is refused alike.
func TestReplicasRequestIDInFlight(t *testing.T) {
	for _, mode := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newFleet(t, func(o *mcphttp.Options) { o.JSONResponse = mode.json })
			c := f.initialize(t)
			done := make(chan testutil.Reply, 1)
			go func() { done <- c.Post(t, testutil.CallTool(5, "block", nil, nil)) }()
			await(t, f.probe.running, "the first request to start")

			// Each of these lands on the next replica: two of them are not the one running 5.
			c.Post(t, testutil.Request(5, "ping", nil)).WantError(t, http.StatusConflict, -32600, msgInFlight, "5")
			c.Post(t, testutil.CallTool(5, "echo", map[string]any{"text": "x"}, nil)).WantError(t, http.StatusConflict, -32600, msgInFlight, "5")
			c.Post(t, testutil.Request(5, "ping", nil)).WantError(t, http.StatusConflict, -32600, msgInFlight, "5")
			// Another id, and the same id on another session, are fine meanwhile.
			wantResult(t, c.Call(t, 6, "ping", nil), "6")
			other := f.initialize(t)
			wantResult(t, other.Call(t, 5, "ping", nil), "5")

			close(f.probe.release)
			rep := await(t, done, "the first request to finish")
			if rep.Status != http.StatusOK || !strings.Contains(string(rep.Body), "released") {
				t.Fatalf("first request: %d %s", rep.Status, rep.Body)
			}
			// The id is free again on every replica once its release (sent after the response)
			// landed.
			released(t, newClient(t, needRedis(t)), f.prefix, c.SessionID, 5)
			for range 3 {
				wantResult(t, c.Call(t, 5, "ping", nil), "5")
				released(t, newClient(t, needRedis(t)), f.prefix, c.SessionID, 5)
			}
		})
	}
}

// TestReplicasOneGetStream is the wire case of a second standalone GET stream for a session (one
// process answers it 409) through the round robin: the second and third GET land on the other
// replicas and are refused alike; once the first one closed, a GET opens on any replica.
func TestReplicasOneGetStream(t *testing.T) {
	f := newFleet(t)
	c := f.initialize(t)
	ctx, cancel := context.WithCancel(context.Background())
	first := c.Open(t, c.NewRequest(ctx, http.MethodGet))
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first GET: %d", first.StatusCode)
	}
	for range 3 {
		wantSecondStream(t, c, c.NewRequest(context.Background(), http.MethodGet))
	}
	cancel()
	first.Body.Close()
	streamReleased(t, f.prefix, c.SessionID)
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		resp := c.Open(t, c.NewRequest(ctx, http.MethodGet))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET after the first closed: %d", resp.StatusCode)
		}
		cancel()
		resp.Body.Close()
		streamReleased(t, f.prefix, c.SessionID)
	}
}

// streamReleased waits until the standalone stream of a session is no longer claimed.
func streamReleased(t *testing.T, prefix, sessionID string) {
	t.Helper()
	rdb := newClient(t, needRedis(t))
	key := prefix + "s:{" + sessionID + "}"
	for deadline := time.Now().Add(10 * time.Second); ; {
		held, err := rdb.HExists(context.Background(), key, "g").Result()
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the GET stream is still claimed")
		}
		time.Sleep(5 * time.Millisecond) // polling Redis: nothing here to await
	}
}

// TestReplicaClaimLapses: the claims of a replica that stops renewing its lease without letting go
// (killed) block the other replicas only until its lease lapses; a claim this replica's own
// finished request failed to release is taken over at once.
func TestReplicaClaimLapses(t *testing.T) {
	srv := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, srv, prefix, redisstore.SessionsOptions{}, newProbe())
	sid := a.initialize(t).SessionID

	deadRouter, deadRDB := leaseRouter(t, srv, prefix)
	dead := redisstore.NewSessions(deadRouter, redisstore.SessionsOptions{})
	liveRouter := newRouter(t, srv, prefix)
	live := redisstore.NewSessions(liveRouter, redisstore.SessionsOptions{})
	t.Cleanup(func() { _ = dead.Close(); _ = live.Close() })

	claim := func(s *redisstore.Sessions, c *session.Claim) error {
		_, err := s.GetChecked(session.WithClaim(context.Background(), c), sid, true, nil)
		return err
	}
	held := &session.Claim{Stream: true}
	if err := claim(dead, held); err != nil || !held.Held() {
		t.Fatalf("claiming the stream: %v (held %v)", err, held.Held())
	}
	if err := claim(live, &session.Claim{Stream: true}); !errors.Is(err, session.ErrClaimed) {
		t.Fatalf("a second stream on another replica: %v, want ErrClaimed", err)
	}
	_ = deadRDB.Close() // killed: its lease is no longer renewed, its claim never released
	for ok := true; ok; {
		var err error
		if ok, err = liveRouter.Alive(context.Background(), deadRouter.ID()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testLease / 10) // the lease lapses with time alone
	}
	took := &session.Claim{Stream: true}
	if err := claim(live, took); err != nil || !took.Held() {
		t.Fatalf("the stream of a dead replica, taken over: %v", err)
	}
	// A claim of this replica whose request is done but whose release was lost (Redis failed
	// then) is free at once; one its request still holds is not.
	rdb := newClient(t, srv)
	if err := rdb.HSet(context.Background(), prefix+"s:{"+sid+"}", "q:7", liveRouter.ID()+" lost").Err(); err != nil {
		t.Fatal(err)
	}
	if err := claim(live, &session.Claim{Request: jsonrpc.IntID(7)}); err != nil {
		t.Fatalf("a claim of this replica no request holds: %v", err)
	}
	if err := claim(live, &session.Claim{Request: jsonrpc.IntID(7)}); !errors.Is(err, session.ErrClaimed) {
		t.Fatalf("a duplicate id while the first is held: %v", err)
	}
	took.Release(context.Background())
	streamReleased(t, prefix, sid) // the release is sent after it returned
}

// TestReplicasOneGetStreamStaleResume: a GET whose Last-Event-ID names no stored stream is served
// as an ordinary standalone stream, and so it counts against the session's one GET stream on
// every replica, as on one process: refused 409 while another replica holds the stream, and, once
// open itself, releasing its claim when it ends.
func TestReplicasOneGetStreamStaleResume(t *testing.T) {
	f := newFleet(t)
	c := f.initialize(t)
	stale := func(ctx context.Context) *http.Request {
		req := c.NewRequest(ctx, http.MethodGet)
		req.Header.Set("Last-Event-ID", "no-such-stream-1")
		return req
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := c.Open(t, c.NewRequest(ctx, http.MethodGet))
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first GET: %d", first.StatusCode)
	}
	for range 3 {
		wantSecondStream(t, c, stale(context.Background()))
	}
	cancel()
	first.Body.Close()
	streamReleased(t, f.prefix, c.SessionID)

	ctx, cancel = context.WithCancel(context.Background())
	resumed := c.Open(t, stale(ctx))
	if resumed.StatusCode != http.StatusOK {
		t.Fatalf("a stale resume once the first stream closed: %d", resumed.StatusCode)
	}
	wantSecondStream(t, c, c.NewRequest(context.Background(), http.MethodGet)) // another replica
	cancel()
	resumed.Body.Close()
	streamReleased(t, f.prefix, c.SessionID)
}

// wantSecondStream sends req, a GET of c's session while another GET stream of it is open, and
// wants it refused as one process refuses a second stream: 409 -32600.
func wantSecondStream(t *testing.T, c *testutil.Client, req *http.Request) {
	t.Helper()
	resp := c.Open(t, req)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	testutil.Reply{Status: resp.StatusCode, Header: resp.Header, Body: body}.
		WantError(t, http.StatusConflict, -32600, msgOneStream, "null")
}
