package redisstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

const orphanMessage = "The task failed: the replica running it stopped before it finished"

// wantOrphaned checks a task that its replica's death made failed.
func wantOrphaned(t *testing.T, g map[string]any) {
	t.Helper()
	e, _ := g["error"].(map[string]any)
	if g["status"] != "failed" || g["statusMessage"] != orphanMessage || e == nil || e["code"] != float64(jsonrpc.CodeInternalError) {
		t.Fatalf("orphaned task = %v, want failed saying its replica stopped", g)
	}
}

// TestTaskOrphanedWhenReplicaDies: a working task whose replica is cut off from Redis without
// closing anything (as SIGKILL leaves it) becomes failed, with a status message that says its
// replica stopped, once that replica's lease lapses; a surviving replica records it.
func TestTaskOrphanedWhenReplicaDies(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	ev := &taskEvents{started: make(chan string, 4), ended: make(chan error, 4)}
	ra, rdbA := leaseRouter(t, rs, prefix)
	rb, _ := leaseRouter(t, rs, prefix)
	a := newTaskReplicaOn(t, ra, "a", ev)
	b := newTaskReplicaOn(t, rb, "b", ev)

	id := a.ok(t, "tools/call", map[string]any{"name": "slow"})["taskId"].(string)
	await(t, ev.started, "the handler to start")
	_ = rdbA.Close() // replica a is gone: no lease renewal, no subscription, nothing cleaned up
	killed := time.Now()
	wantOrphaned(t, b.until(t, id, "failed"))
	t.Logf("the orphaned task was failed %v after its replica died (lease %v)", time.Since(killed).Round(time.Millisecond), testLease)
}

// TestTaskUpdateToDeadReplicaRefused: answers to the input request of a task whose replica died
// are refused, never consumed in silence: while the dead replica's lease still runs the answers
// are put back and the client is told to send them again; once it lapsed the task is failed,
// and the client is told why.
func TestTaskUpdateToDeadReplicaRefused(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	ev := &taskEvents{started: make(chan string, 4), ended: make(chan error, 4)}
	ra, rdbA := leaseRouter(t, rs, prefix)
	rb, _ := leaseRouter(t, rs, prefix)
	b := newTaskReplicaOn(t, rb, "b", ev)
	a := newTaskReplicaOn(t, ra, "a", ev)

	id := a.ok(t, "tools/call", map[string]any{"name": "confirm"})["taskId"].(string)
	await(t, ev.started, "the handler to start")
	g := b.until(t, id, "input_required")
	var key string
	for k := range g["inputRequests"].(map[string]any) {
		key = k
	}
	_ = rdbA.Close()
	update := map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}}
	_, e := b.call(t, "tasks/update", update)
	if e == nil || e.Code != jsonrpc.CodeInternalError {
		t.Fatalf("tasks/update to a task whose replica died = %v, want -32603", e)
	}
	var data string
	_ = json.Unmarshal(e.Data, &data)
	switch {
	case strings.Contains(data, "send them again"):
		// a's lease had not lapsed yet: the request is the task's again.
		t.Logf("refused while a's lease ran: %s", data)
		if g := b.ok(t, "tasks/get", map[string]any{"taskId": id}); g["status"] != "input_required" && g["status"] != "failed" {
			t.Fatalf("after a refused update: %v, want the input request back", g)
		} else if g["status"] == "input_required" && g["inputRequests"].(map[string]any)[key] == nil {
			t.Fatalf("after a refused update the input request %s is gone: %v", key, g)
		}
	case strings.Contains(data, "replica running it stopped"):
		t.Logf("refused after a's lease lapsed: %s", data)
	default:
		t.Fatalf("tasks/update refused with %v, want a reason", e)
	}
	wantOrphaned(t, b.until(t, id, "failed"))
}

// TestResumeStreamOfDeadReplica: a GET resuming, on replica b, a request stream whose replica a
// died (cut off from Redis without cleanup, as SIGKILL leaves it) replays what is stored and
// ends with a JSON-RPC error for the request's id once a's lease lapsed, instead of waiting for
// the stream's keys to expire; a later GET for it gets the same at once.
func TestResumeStreamOfDeadReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	pa := newProbe()
	ra, rdbA := leaseRouter(t, rs, prefix)
	rb, _ := leaseRouter(t, rs, prefix)
	a := newReplicaOn(t, ra, redisstore.SessionsOptions{}, pa)
	b := newReplicaOn(t, rb, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	cb := b.client(ca)

	ctx, cut := context.WithCancel(context.Background())
	resp := ca.Open(t, ca.NewPost(ctx, testutil.CallTool(9, "block", map[string]any{}, "tok")))
	sr := testutil.NewSSEReader(resp.Body)
	progress := nextMessage(t, sr)
	await(t, pa.running, "the call to run")
	stream, _, _ := strings.Cut(progress.ID, "-")
	_ = rdbA.Close() // a dies: no renewal, no cleanup, and its call can store nothing more
	killed := time.Now()
	cut()
	resp.Body.Close()

	for round := range 2 {
		gctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		req := cb.NewRequest(gctx, http.MethodGet)
		req.Header.Set("Last-Event-ID", stream+"-0")
		get := cb.Open(t, req)
		gr := testutil.NewSSEReader(get.Body)
		if ev := nextMessage(t, gr); ev.ID != progress.ID || !strings.Contains(ev.Data, "notifications/progress") {
			t.Fatalf("round %d: replayed %+v, want the progress notification %s", round, ev, progress.ID)
		}
		ev, err := gr.NextMessage()
		if err != nil {
			t.Fatalf("round %d: the resumed stream of a dead replica ended without an answer: %v", round, err)
		}
		w := testutil.DecodeWire(t, []byte(ev.Data))
		if string(w.ID) != "9" || w.Error == nil || w.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(string(w.Error.Data), "send the request again") {
			t.Fatalf("round %d: last event %s, want an error for request 9 saying to send it again", round, ev.Data)
		}
		if _, err := gr.NextMessage(); err == nil {
			t.Fatalf("round %d: the GET went on after the error", round)
		}
		get.Body.Close()
		stop()
		if round == 0 {
			t.Logf("the resumed stream got %s %v after its replica died (lease %v)", ev.Data, time.Since(killed).Round(time.Millisecond), testLease)
		}
	}
}

// TestResumeOnAnotherReplicaDoesNotPoll: a GET following, on replica b, a stream that runs on a
// makes no Redis call while no event is stored (the store wakes it); the response still reaches it.
func TestResumeOnAnotherReplicaDoesNotPoll(t *testing.T) {
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
	await(t, pa.running, "the call to run")
	stream, _, _ := strings.Cut(progress.ID, "-")
	cut()
	resp.Body.Close()

	req := cb.NewRequest(context.Background(), http.MethodGet)
	req.Header.Set("Last-Event-ID", stream+"-0")
	get := cb.Open(t, req)
	defer get.Body.Close()
	gr := testutil.NewSSEReader(get.Body)
	nextMessage(t, gr) // the progress notification, replayed
	// Count b's Redis calls from the replay on: the follower checks the stream's owner (its
	// record and its lease) and whether the stream is still kept, then waits to be woken.
	h := &roundTrips{}
	b.router.Client().AddHook(h)
	waitFor(t, time.Second) // an absence of calls: nothing to await but time
	if n := h.total(); n > 3 {
		t.Fatalf("b made %d Redis calls in 1 s while following an idle stream, want at most 3", n)
	}
	close(pa.release)
	if w := testutil.DecodeWire(t, []byte(nextMessage(t, gr).Data)); w.Error != nil || string(w.ID) != "9" {
		t.Fatalf("the followed response: %+v", w)
	}
}
