package mcphttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// taskEndpoint serves a server with two task tools over real HTTP: "wait" (optional: it runs
// until released or cancelled) and "must" (required: a tool error).
func taskEndpoint(t *testing.T) (*testutil.Client, chan struct{}) {
	t.Helper()
	s := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{})}})
	release := make(chan struct{})
	s.AddTool(&core.Tool{Name: "wait", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			select {
			case <-release:
				return core.TextResult("done"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(&core.Tool{Name: "must", Execution: &core.ToolExecution{TaskSupport: tasks.SupportRequired}},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.ErrorResult("no"), nil
		})
	h := mcphttp.New(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	return testutil.NewClient(srv.URL, srv.Client()), release
}

// taskRequest is a 2026-07-28 request that declares the tasks extension.
func taskRequest(id any, method string, params map[string]any) string {
	p := map[string]any{"_meta": testutil.Envelope(testutil.ModernVersion, map[string]any{
		"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}})}
	for k, v := range params {
		p[k] = v
	}
	return testutil.ModernRequest(id, method, p)
}

func resultOf(t *testing.T, rep testutil.Reply) map[string]any {
	t.Helper()
	w := rep.Message(t)
	if rep.Status != http.StatusOK || w.Error != nil {
		t.Fatalf("answer %d: %s", rep.Status, rep.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTasksOverHTTP(t *testing.T) {
	c, release := taskEndpoint(t)
	created := resultOf(t, c.Do(t, modernPost(c, taskRequest(1, "tools/call", map[string]any{"name": "wait"}))))
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call = %v", created)
	}
	get := taskRequest(2, "tasks/get", map[string]any{"taskId": id})
	// Mcp-Name must carry params.taskId on tasks/get, tasks/update and tasks/cancel.
	rep := c.Do(t, modernPost(c, get, "Mcp-Name", "another-task"))
	rep.WantError(t, http.StatusBadRequest, jsonrpc.CodeHeaderMismatch, "Header mismatch: Mcp-Name header value 'another-task' does not match body value '"+id+"'", "2")
	rep = c.Do(t, modernPost(c, get, "Mcp-Name", ""))
	rep.WantError(t, http.StatusBadRequest, jsonrpc.CodeHeaderMismatch, "Header mismatch: Mcp-Name header is required for `tasks/get`", "2")
	for _, m := range []string{"tasks/update", "tasks/cancel"} {
		body := taskRequest(3, m, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		c.Do(t, modernPost(c, body, "Mcp-Name", "x")).WantError(t, http.StatusBadRequest, jsonrpc.CodeHeaderMismatch,
			"Header mismatch: Mcp-Name header value 'x' does not match body value '"+id+"'", "3")
	}
	if g := resultOf(t, c.Do(t, modernPost(c, get))); g["status"] != "working" {
		t.Errorf("tasks/get = %v", g)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := resultOf(t, c.Do(t, modernPost(c, get)))
		if g["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task never completed: %v", g)
		}
		time.Sleep(time.Millisecond)
	}
	// A required tool without the extension: 400 -32021.
	plain := testutil.ModernRequest(4, "tools/call", map[string]any{"name": "must"})
	c.Do(t, modernPost(c, plain)).WantError(t, http.StatusBadRequest, jsonrpc.CodeMissingRequiredClientCapability, "Missing required client capability", "4")
	// An unknown task: -32602.
	unknown := taskRequest(5, "tasks/get", map[string]any{"taskId": "nope"})
	c.Do(t, modernPost(c, unknown)).WantError(t, http.StatusBadRequest, jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found", "5")
}

// TestTaskNotificationsOnListen: a listen stream that asks for a task's id gets
// notifications/tasks with the task's complete state as it changes; ids of no known task are
// left out of the acknowledgement, and asking without the tasks extension is -32021.
func TestTaskNotificationsOnListen(t *testing.T) {
	c, release := taskEndpoint(t)
	created := resultOf(t, c.Do(t, modernPost(c, taskRequest(1, "tools/call", map[string]any{"name": "wait"}))))
	id := created["taskId"].(string)

	plain := testutil.ModernRequest(2, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}})
	c.Do(t, modernPost(c, plain)).WantError(t, http.StatusBadRequest, jsonrpc.CodeMissingRequiredClientCapability, "Missing required client capability", "2")

	body := taskRequest(3, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id, "no-such-task"}}})
	resp := openStream(t, c, c.NewModernPost(context.Background(), body))
	defer resp.Body.Close()
	ls := &listenStream{resp: resp, sr: testutil.NewSSEReader(resp.Body)}
	ack := ls.next(t)
	var a struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(ack.Params, &a); err != nil || ack.Method != "notifications/subscriptions/acknowledged" || len(a.Notifications.TaskIDs) != 1 || a.Notifications.TaskIDs[0] != id {
		t.Fatalf("acknowledgement %s %s", ack.Method, ack.Params)
	}
	close(release)
	n := ls.next(t)
	wantChange(t, n, "notifications/tasks", "3")
	var task struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(n.Params, &task); err != nil || task.TaskID != id || task.Status != "completed" || len(task.Result.Content) != 1 || task.Result.Content[0].Text != "done" {
		t.Errorf("notifications/tasks params %s", n.Params)
	}
}
