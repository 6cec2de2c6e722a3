package redisstore_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
)

const orphanMessage = "The task failed: the replica running it stopped before it finished"

// wantOrphaned checks a task that its replica's death made failed.
func wantOrphaned(t *testing.T, g map[string]any) {
	t.Helper()
	e, _ := g["error"].(map[string]any)
	if g["status"] != "failed" || g["statusMessage"] != orphanMessage || e == nil || e["code"] != float64(core.CodeInternalError) {
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
	if e == nil || e.Code != core.CodeInternalError {
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
