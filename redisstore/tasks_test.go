package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/redis/go-redis/v9"
)

// taskReplica is one replica of a server whose tasks live in Redis: its own router and task
// store on the shared Redis, its own HTTP endpoint. Its tool "confirm" asks for a confirmation
// (an input request of the task) and reports on started and ended which replica runs it.
type taskReplica struct {
	name   string
	client *testutil.Client
}

type taskEvents struct {
	started chan string // replica name
	ended   chan error  // the handler's context cause, or nil
}

func newTaskReplica(t *testing.T, rs *testutil.RedisServer, prefix, name string, ev *taskEvents) *taskReplica {
	t.Helper()
	return newTaskReplicaOn(t, newRouter(t, rs, prefix), name, ev)
}

// newTaskReplicaOn is newTaskReplica on a router of the test's. Its tool "slow" runs until its
// context ends.
func newTaskReplicaOn(t *testing.T, r *redisstore.Router, name string, ev *taskEvents) *taskReplica {
	t.Helper()
	nop := quietLogger()
	s := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{
		Logger:     &nop,
		Extensions: []core.Extension{tasks.New(tasks.Options{Store: redisstore.NewTaskStore(r, redisstore.TaskStoreOptions{})})},
	})
	s.AddTool(&core.Tool{Name: "confirm", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			ev.started <- name
			res, err := req.Elicit(ctx, &core.ElicitParams{Message: "sure?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)})
			if err != nil {
				ev.ended <- context.Cause(ctx)
				return nil, err
			}
			ev.ended <- nil
			return core.TextResult(name + ": " + res.Action), nil
		})
	s.AddTool(&core.Tool{Name: "slow", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
			ev.started <- name
			<-ctx.Done()
			return nil, ctx.Err()
		})
	h := mcphttp.New(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	return &taskReplica{name: name, client: testutil.NewClient(srv.URL, srv.Client())}
}

// call sends a 2026-07-28 request declaring the tasks extension and returns its result.
func (r *taskReplica) call(t *testing.T, method string, params map[string]any) (map[string]any, *testutil.WireError) {
	t.Helper()
	params["_meta"] = testutil.Envelope(testutil.ModernVersion, map[string]any{
		"elicitation": map[string]any{}, "extensions": map[string]any{tasks.ExtensionID: map[string]any{}}})
	req := r.client.NewModernPost(context.Background(), testutil.ModernRequest(1, method, params))
	w := r.client.Do(t, req).Message(t)
	if w.Error != nil {
		return nil, w.Error
	}
	var m map[string]any
	if err := json.Unmarshal(w.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func (r *taskReplica) ok(t *testing.T, method string, params map[string]any) map[string]any {
	t.Helper()
	m, e := r.call(t, method, params)
	if e != nil {
		t.Fatalf("%s on %s: %d %s", method, r.name, e.Code, e.Message)
	}
	return m
}

// until polls tasks/get on r until the task has status.
func (r *taskReplica) until(t *testing.T, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := r.ok(t, "tasks/get", map[string]any{"taskId": id})
		if g["status"] == status {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s stayed %v on %s, want %s", id, g["status"], r.name, status)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestTasksAcrossReplicas: a task created on replica A is read, answered and cancelled through
// replica B; the handler keeps running on A and gets the answer and the cancellation there.
func TestTasksAcrossReplicas(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	ev := &taskEvents{started: make(chan string, 4), ended: make(chan error, 4)}
	a := newTaskReplica(t, rs, prefix, "a", ev)
	b := newTaskReplica(t, rs, prefix, "b", ev)

	created := a.ok(t, "tools/call", map[string]any{"name": "confirm"})
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call = %v", created)
	}
	// Strongly consistent: the other replica finds it at once.
	if g := b.ok(t, "tasks/get", map[string]any{"taskId": id}); g["taskId"] != id {
		t.Fatalf("tasks/get on b = %v", g)
	}
	if got := await(t, ev.started, "the handler to start"); got != "a" {
		t.Fatalf("the handler runs on %s", got)
	}
	g := b.until(t, id, "input_required")
	var key string
	for k := range g["inputRequests"].(map[string]any) {
		key = k
	}
	b.ok(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "decline"}}})
	if err := await(t, ev.ended, "the handler to get the answer"); err != nil {
		t.Fatalf("handler ended with %v", err)
	}
	done := b.until(t, id, "completed")
	if text := done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "a: decline" {
		t.Errorf("result = %v", text)
	}

	// A cancel through b ends the handler running on a.
	id2 := a.ok(t, "tools/call", map[string]any{"name": "confirm"})["taskId"].(string)
	await(t, ev.started, "the second handler to start")
	b.until(t, id2, "input_required")
	b.ok(t, "tasks/cancel", map[string]any{"taskId": id2})
	if err := await(t, ev.ended, "the handler to be cancelled"); !errors.Is(err, tasks.ErrCancelled) {
		t.Errorf("handler context cause = %v, want ErrTaskCancelled", err)
	}
	if g := a.ok(t, "tasks/get", map[string]any{"taskId": id2}); g["status"] != "cancelled" {
		t.Errorf("after cancel = %v", g)
	}
	// Unknown ids are unknown everywhere.
	if _, e := b.call(t, "tasks/get", map[string]any{"taskId": "nope"}); e == nil || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown task = %v", e)
	}
}

// TestTaskStoreOnRedis: the store's own rules on a real Redis: limits under concurrent creates,
// atomic updates, terminal statuses, expiry.
func TestTaskStoreOnRedis(t *testing.T) {
	rs := needRedis(t)
	r := newRouter(t, rs, testPrefix())
	clock := testutil.NewClock()
	clock.Advance(time.Since(clock.Now())) // the real time, so the keys live for their real TTL
	st := redisstore.NewTaskStore(r, redisstore.TaskStoreOptions{Now: clock.Now})
	ctx := context.Background()
	task := func(id, owner string) *tasks.Task {
		return &tasks.Task{ID: id, Owner: owner, Status: tasks.Working, CreatedAt: clock.Now(), LastUpdatedAt: clock.Now(), TTL: time.Hour}
	}
	// Ten concurrent creates against a cap of four per owner: exactly four succeed.
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.Create(ctx, task("p"+string(rune('a'+i)), "alice"), tasks.Limits{MaxTasks: -1, MaxPerOwner: 4})
		}()
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, tasks.ErrLimit):
			limited++
		default:
			t.Fatal(err)
		}
	}
	if ok != 4 || limited != 6 {
		t.Errorf("created %d, limited %d; want 4 and 6", ok, limited)
	}
	if err := st.Create(ctx, task("x", "alice"), tasks.Limits{MaxTasks: 4, MaxPerOwner: -1}); !errors.Is(err, tasks.ErrLimit) {
		t.Errorf("total cap: %v", err)
	}
	if err := st.Create(ctx, task("q", "bob"), tasks.Limits{MaxTasks: -1, MaxPerOwner: 4}); err != nil {
		t.Fatal(err)
	}
	// Concurrent updates never lose one another.
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.Update(ctx, "q", func(t *tasks.Task) error {
				if t.InputRequests == nil {
					t.InputRequests = map[string]json.RawMessage{}
				}
				t.InputRequests[string(rune('a'+i))] = json.RawMessage(`{}`)
				return nil
			})
			if err != nil {
				errs[0] = err
			}
		}()
	}
	wg.Wait()
	got, err := st.Get(ctx, "q")
	if err != nil || len(got.InputRequests) != 20 || got.Owner != "bob" {
		t.Fatalf("after 20 updates: %+v, %v", got, err)
	}
	boom := errors.New("boom")
	if _, err := st.Update(ctx, "q", func(*tasks.Task) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Update = %v, want the callback's error", err)
	}
	// A terminal status is final and frees the owner's room.
	if _, err := st.Update(ctx, "q", func(t *tasks.Task) error { t.Status = tasks.Completed; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Update(ctx, "q", func(t *tasks.Task) error { t.Status = tasks.Working; return nil }); got.Status != tasks.Completed {
		t.Errorf("a terminal status changed to %s", got.Status)
	}
	for i := range 4 {
		if err := st.Create(ctx, task("b"+string(rune('a'+i)), "bob"), tasks.Limits{MaxTasks: -1, MaxPerOwner: 4}); err != nil {
			t.Fatalf("bob's room after a finished task: %v", err)
		}
	}
	// Past the TTL a task is gone.
	clock.Advance(time.Hour)
	if _, err := st.Get(ctx, "q"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("expired Get = %v", err)
	}
	if _, err := st.Update(ctx, "nope", func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("unknown Update = %v", err)
	}
}

// TestTaskFloodOnRedis: one owner creating and finishing tasks in a loop stays within its own
// share on Redis (its finished task that expires first is evicted) and others still get tasks;
// an owner with its share of unfinished tasks is refused. Before, finished tasks did not count
// against the share and the flood filled MaxTasks for everyone.
func TestTaskFloodOnRedis(t *testing.T) {
	rs := needRedis(t)
	r := newRouter(t, rs, testPrefix())
	clock := testutil.NewClock()
	clock.Advance(time.Since(clock.Now()))
	st := redisstore.NewTaskStore(r, redisstore.TaskStoreOptions{Now: clock.Now})
	ctx := context.Background()
	limits := tasks.Limits{MaxTasks: 20, MaxPerOwner: 5}
	create := func(id, owner string) error {
		clock.Advance(time.Millisecond) // every task expires after the one before
		return st.Create(ctx, &tasks.Task{ID: id, Owner: owner, Status: tasks.Working, CreatedAt: clock.Now(), TTL: time.Hour}, limits)
	}
	finish := func(id string) {
		if _, err := st.Update(ctx, id, func(t *tasks.Task) error { t.Status = tasks.Completed; return nil }); err != nil {
			t.Fatalf("finishing %s: %v", id, err)
		}
	}
	for i := range 60 {
		id := fmt.Sprint("f", i)
		if err := create(id, "flood"); err != nil {
			t.Fatalf("flood task %d: %v", i, err)
		}
		finish(id)
	}
	for i, want := range map[int]bool{0: false, 54: false, 55: true, 59: true} {
		if _, err := st.Get(ctx, fmt.Sprint("f", i)); (err == nil) != want {
			t.Errorf("flood task %d kept = %v, want %v", i, err == nil, want)
		}
	}
	for _, owner := range []string{"a", "b", "c"} {
		if err := create(owner+"1", owner); err != nil {
			t.Errorf("%s after the flood: %v", owner, err)
		}
	}
	for i := range 5 {
		if err := create(fmt.Sprint("busy", i), "busy"); err != nil {
			t.Fatal(err)
		}
	}
	if err := create("busy5", "busy"); !errors.Is(err, tasks.ErrLimit) {
		t.Errorf("sixth unfinished task: %v, want ErrLimit", err)
	}
	// The store holds 5+3+5 = 13; d stays within its five (18), e fills the store to 20 and,
	// with nothing of its own to evict, is refused at the total cap.
	for i := range 9 {
		id := fmt.Sprint("d", i)
		if err := create(id, "d"); err != nil {
			t.Fatalf("d task %d: %v", i, err)
		}
		finish(id)
	}
	if _, err := st.Get(ctx, "d0"); err == nil {
		t.Error("d's oldest finished task kept past its share")
	}
	for _, id := range []string{"e1", "e2"} {
		if err := create(id, "e"); err != nil {
			t.Fatal(err)
		}
	}
	if err := create("e3", "e"); !errors.Is(err, tasks.ErrLimit) {
		t.Errorf("e at the total cap: %v, want ErrLimit", err)
	}
	if n := countKeys(ctx, r.Client(), r.Key("t:{*")); n != 20 {
		t.Errorf("%d task records in Redis, want 20 (the evicted ones deleted)", n)
	}
}

// countKeys counts the keys matching pattern: on a Redis Cluster over every primary (KEYS asks
// one node only).
func countKeys(ctx context.Context, rdb redis.UniversalClient, pattern string) int {
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return len(rdb.Keys(ctx, pattern).Val())
	}
	var n atomic.Int64
	_ = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n.Add(int64(len(m.Keys(ctx, pattern).Val())))
		return nil
	})
	return int(n.Load())
}

// TestTaskListenOnRedis: the taskIds of a listen filter are read in one round trip, and a
// filter naming 150,000 ids is refused before any Redis command. Before, each id was one
// sequential GET: 150,000 round trips.
func TestTaskListenOnRedis(t *testing.T) {
	rs := needRedis(t)
	rdb := newClient(t, rs)
	nop := quietLogger()
	r := redisstore.NewRouter(rdb, redisstore.Options{Prefix: testPrefix(), Logger: &nop})
	t.Cleanup(func() { _ = r.Close() })
	st := redisstore.NewTaskStore(r, redisstore.TaskStoreOptions{})
	s := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{Logger: &nop,
		Extensions: []core.Extension{tasks.New(tasks.Options{Store: st})}})
	s.AddTool(&core.Tool{Name: "quick", Execution: &core.ToolExecution{TaskSupport: tasks.SupportRequired}},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("ok"), nil
		})
	ctx := core.WithPrincipal(context.Background(), "alice")
	now := time.Now()
	var mine []string
	for i := range 3 {
		id := fmt.Sprint("mine", i)
		if err := st.Create(ctx, &tasks.Task{ID: id, Owner: "alice", Status: tasks.Working, CreatedAt: now, TTL: time.Hour}, tasks.Limits{MaxTasks: -1, MaxPerOwner: -1}); err != nil {
			t.Fatal(err)
		}
		mine = append(mine, id)
	}
	env := &core.Envelope{ClientCapabilities: core.ClientCapabilities{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	ids := append([]string(nil), mine...)
	for i := range tasks.DefaultMaxListenIDs - len(mine) {
		ids = append(ids, fmt.Sprint("nope", i))
	}
	if _, err := st.GetMany(ctx, mine); err != nil { // the connection is made (and counted) here
		t.Fatal(err)
	}
	hook := &roundTrips{}
	rdb.AddHook(hook)
	got, err := transport.Core.HonorListen(s, ctx, env, core.SubscriptionFilter{Extensions: map[string][]string{"taskIds": ids}})
	if err != nil || len(got.Extensions["taskIds"]) != 3 {
		t.Fatalf("listen of %d ids = %v, %v", len(ids), got.Extensions["taskIds"], err)
	}
	if hook.total() != 1 {
		t.Errorf("a listen of %d ids took %d round trips, want 1", len(ids), hook.total())
	}
	hook.path.Store(0)
	hook.off.Store(0)
	for i := range 150_000 - len(ids) {
		ids = append(ids, fmt.Sprint("more", i))
	}
	_, err = transport.Core.HonorListen(s, ctx, env, core.SubscriptionFilter{Extensions: map[string][]string{"taskIds": ids}})
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("listen of 150,000 ids = %v, want -32602", err)
	}
	if hook.total() != 0 {
		t.Errorf("a refused listen of 150,000 ids made %d Redis round trips", hook.total())
	}
}
