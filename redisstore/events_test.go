package redisstore_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/session"
)

// TestEventStoreBounds: a stream keeps at most MaxEvents events and MaxBytes bytes, the oldest
// dropped first, the newest always kept; After returns what comes after a seq; DropStream
// forgets one stream; DropSession forgets a session's streams only once its record is gone.
func TestEventStoreBounds(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	r := newRouter(t, rs, prefix)
	es := redisstore.NewEventStore(r, redisstore.EventStoreOptions{MaxEvents: 3, MaxBytes: 10})
	ctx := context.Background()
	add := func(stream string, seq uint64, data string) {
		t.Helper()
		if err := es.Append(ctx, "s1", stream, session.StoredEvent{Seq: seq, Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(stream string, after uint64) string {
		t.Helper()
		evs, err := es.After(ctx, "s1", stream, after)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ev := range evs {
			fmt.Fprintf(&b, "%d=%s ", ev.Seq, ev.Data)
		}
		return b.String()
	}
	for i := uint64(1); i <= 5; i++ {
		add("a", i, "ab")
	}
	if got := seqs("a", 0); got != "3=ab 4=ab 5=ab " {
		t.Fatalf("count bound: %q", got)
	}
	if got := seqs("a", 4); got != "5=ab " {
		t.Fatalf("after 4: %q", got)
	}
	add("b", 1, "12345")
	add("b", 2, "123456")
	if got := seqs("b", 0); got != "2=123456 " {
		t.Fatalf("byte bound: %q", got)
	}
	add("b", 3, "a message longer than the bound")
	if got := seqs("b", 0); got != "3=a message longer than the bound " {
		t.Fatalf("the newest event must stay: %q", got)
	}
	if ok, err := es.Has(ctx, "s1", "b"); !ok || err != nil {
		t.Fatalf("Has = %v, %v", ok, err)
	}
	es.DropStream(ctx, "s1", "b")
	if ok, _ := es.Has(ctx, "s1", "b"); ok || seqs("b", 0) != "" {
		t.Fatal("DropStream kept the stream")
	}
	// Another session's stream of the same name is another stream.
	if evs, _ := es.After(ctx, "s2", "a", 0); len(evs) != 0 {
		t.Fatalf("session s2 sees %d events of s1", len(evs))
	}

	// A record that still exists (another replica serves the session) keeps the events.
	rdb := newClient(t, rs)
	rdb.HSet(ctx, prefix+"s:{s1}", "rev", 1)
	es.DropSession(ctx, "s1")
	if seqs("a", 0) == "" {
		t.Fatal("DropSession forgot the events of a session that lives on")
	}
	rdb.Del(ctx, prefix+"s:{s1}")
	es.DropSession(ctx, "s1")
	if got := seqs("a", 0); got != "" {
		t.Fatalf("DropSession kept %q", got)
	}
	if n, _ := rdb.Exists(ctx, prefix+"e:{s1}:a", prefix+"eb:{s1}:a", prefix+"es:{s1}").Result(); n != 0 {
		t.Fatalf("%d keys of the session are left", n)
	}
}

// TestEventStoreTTL: every key of a stream expires TTL after its last event.
func TestEventStoreTTL(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	es := redisstore.NewEventStore(newRouter(t, rs, prefix), redisstore.EventStoreOptions{TTL: time.Hour})
	ctx := context.Background()
	if err := es.Append(ctx, "s", "1", session.StoredEvent{Seq: 1, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	rdb := newClient(t, rs)
	for _, k := range []string{"e:{s}:1", "eb:{s}:1", "es:{s}"} {
		if d := rdb.PTTL(ctx, prefix+k).Val(); d <= 59*time.Minute || d > time.Hour {
			t.Errorf("%s TTL %v, want about an hour", k, d)
		}
	}
}

// TestResumeOnAnotherReplica: a resumable request stream cut on one replica is replayed with
// Last-Event-ID on another, which ends the stream after what is stored; the client polls again
// and gets the response once the call finished, after which the stream is forgotten.
func TestResumeOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	pa := newProbe()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, pa)
	b := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	cb := b.client(ca)

	ctx, cut := context.WithCancel(context.Background())
	resp := ca.Open(t, ca.NewPost(ctx, testutil.CallTool(9, "block", map[string]any{}, "tok")))
	sr := testutil.NewSSEReader(resp.Body)
	progress := nextMessage(t, sr)
	if !strings.Contains(progress.Data, "notifications/progress") || progress.ID == "" {
		t.Fatalf("first event %+v", progress)
	}
	await(t, pa.running, "the call to run")
	stream, _, _ := strings.Cut(progress.ID, "-")
	cut() // the connection to a is lost
	resp.Body.Close()

	// b replays the progress notification, then follows the stream until its response.
	req := cb.NewRequest(context.Background(), http.MethodGet)
	req.Header.Set("Last-Event-ID", stream+"-0")
	get := cb.Open(t, req)
	defer get.Body.Close()
	gr := testutil.NewSSEReader(get.Body)
	if ev := nextMessage(t, gr); ev.ID != progress.ID || !strings.Contains(ev.Data, "notifications/progress") {
		t.Fatalf("replayed %+v, want the progress notification %s", ev, progress.ID)
	}
	close(pa.release) // the call finishes on a, with nobody attached there: its response is stored
	ev := nextMessage(t, gr)
	w := testutil.DecodeWire(t, []byte(ev.Data))
	if w.Error != nil || !strings.Contains(string(w.Result), "released") || string(w.ID) != "9" {
		t.Fatalf("the followed response: %s", ev.Data)
	}
	if _, err := gr.NextMessage(); err == nil {
		t.Fatal("the GET went on after the response")
	}
	// Delivered: the stream is forgotten, and the header is ignored from now on.
	if ok, _ := b.events.Has(context.Background(), ca.SessionID, stream); ok {
		t.Fatal("the stream is still stored after its response was replayed")
	}
}

// TestBroadcastAcrossReplicas: changes published on several replicas reach every subscriber of
// every replica once each, in publish order per publisher.
func TestBroadcastAcrossReplicas(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	ra, rb, rc := newRouter(t, rs, prefix), newRouter(t, rs, prefix), newRouter(t, rs, prefix)
	ba, bb, bc := redisstore.NewBroadcaster(ra), redisstore.NewBroadcaster(rb), redisstore.NewBroadcaster(rc)
	const n = 200
	got := make(chan core.Change, 8*n)
	for _, b := range []*redisstore.Broadcaster{ba, bb, bc} {
		unsub := b.Subscribe(func(c core.Change) { got <- c })
		t.Cleanup(unsub)
	}
	for i := range n {
		if err := ba.Publish(context.Background(), core.Change{Method: core.ResourceUpdated, URI: fmt.Sprint("a", i)}); err != nil {
			t.Fatal(err)
		}
		if err := bb.Publish(context.Background(), core.Change{Method: core.ResourceUpdated, URI: fmt.Sprint("b", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Each of the three subscribers sees each of the 2n changes once.
	seen := map[string]int{}
	for range 6 * n {
		c := await(t, got, "a change")
		seen[c.URI]++
	}
	for uri, k := range seen {
		if k != 3 {
			t.Fatalf("%s delivered %d times, want once per replica", uri, k)
		}
	}
	select {
	case c := <-got:
		t.Fatalf("an extra delivery: %+v", c)
	default:
	}

	// Order, on one remote subscriber.
	ordered := make(chan core.Change, n)
	unsub := bc.Subscribe(func(c core.Change) { ordered <- c })
	defer unsub()
	for i := range n {
		_ = ba.Publish(context.Background(), core.Change{Method: core.ResourceUpdated, URI: fmt.Sprint(i)})
	}
	for i := range n {
		if c := await(t, ordered, "an ordered change"); c.URI != fmt.Sprint(i) {
			t.Fatalf("change %d arrived as %s", i, c.URI)
		}
	}
}
