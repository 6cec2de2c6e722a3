package tasks_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/coretest"
)

// TestTaskShutdownFailsRunningTasks: Shutdown cancels the handlers of the tasks running in the
// process (their context ends with ErrShutdown), records each as failed with a status message
// that says why, and refuses tasks created afterwards.
func TestTaskShutdownFailsRunningTasks(t *testing.T) {
	x := tasks.New(tasks.Options{})
	s := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{Extensions: []core.Extension{x}})
	tt := addTaskTools(s)
	c := &taskClient{t: t, srv: s}
	ids := []string{c.create("work"), c.create("work")}
	for range ids {
		<-tt.started
	}
	if err := x.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range ids {
		if cause := <-tt.causes; !errors.Is(cause, tasks.ErrShutdown) {
			t.Errorf("the handler's context ended with %v, want ErrShutdown", cause)
		}
	}
	for _, id := range ids {
		g := c.get(id)
		e, _ := g["error"].(map[string]any)
		if g["status"] != "failed" || g["statusMessage"] != "The task failed: the server running it shut down before it finished" ||
			e == nil || e["code"] != float64(jsonrpc.CodeInternalError) || e["data"] != g["statusMessage"] {
			t.Errorf("task after Shutdown = %v", g)
		}
	}
	w := c.send("tools/call", map[string]any{"name": "work", "arguments": map[string]any{}})
	coretest.WantError(t, w, jsonrpc.CodeInternalError, "Internal error", "Server shutting down: no task can start; try again later")
	// A second Shutdown has nothing left to end.
	if err := x.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestTaskUpdateReachingNoHandlerRefused: two servers share a store that carries no signals, so
// answers given to the one that does not run a task reach no handler: they are refused (the
// task, which nobody can resume, becomes failed saying why), never accepted and lost.
func TestTaskUpdateReachingNoHandlerRefused(t *testing.T) {
	store := tasks.NewMemoryStore(nil)
	runs, _ := newTaskServer(t, tasks.Options{Store: store})
	other, _ := newTaskServer(t, tasks.Options{Store: store})
	id := (&taskClient{t: t, srv: runs}).create("ask")
	c := &taskClient{t: t, srv: other}
	g := c.waitStatus(id, "input_required")
	var key string
	for k := range g["inputRequests"].(map[string]any) {
		key = k
	}
	w := c.send("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"name": "x"}}}})
	coretest.WantError(t, w, jsonrpc.CodeInternalError, "Internal error",
		"The task failed: the replica running it stopped before it finished; the input responses were not delivered")
	if g := c.get(id); g["status"] != "failed" {
		t.Fatalf("after the refused update: %v", g)
	}
}
