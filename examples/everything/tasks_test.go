package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// The fixture's task tools over real HTTP, as the tasks-* conformance scenarios drive them.

type taskPeer struct {
	t   *testing.T
	c   *testutil.Client
	ext bool
}

func newTaskPeer(t *testing.T) *taskPeer {
	t.Helper()
	failingJobDelay = time.Millisecond
	handler, h := newHandler(newServer())
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	return &taskPeer{t: t, c: testutil.NewClient(srv.URL+"/mcp", srv.Client()), ext: true}
}

// send posts a 2026-07-28 request and returns the answer's result or error.
func (p *taskPeer) send(method string, params map[string]any) (map[string]any, *testutil.WireError) {
	p.t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if p.ext {
		caps["extensions"] = map[string]any{tasks.ExtensionID: map[string]any{}}
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = testutil.Envelope(testutil.ModernVersion, caps)
	rep := p.c.Do(p.t, p.c.NewModernPost(context.Background(), testutil.ModernRequest(1, method, params)))
	w := rep.Message(p.t)
	if w.Error != nil {
		return nil, w.Error
	}
	if rep.Status != http.StatusOK {
		p.t.Fatalf("%s: status %d", method, rep.Status)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Result, &m); err != nil {
		p.t.Fatal(err)
	}
	return m, nil
}

func (p *taskPeer) ok(method string, params map[string]any) map[string]any {
	p.t.Helper()
	m, e := p.send(method, params)
	if e != nil {
		p.t.Fatalf("%s failed: %d %s", method, e.Code, e.Message)
	}
	return m
}

func (p *taskPeer) until(id, status string) map[string]any {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := p.ok("tasks/get", map[string]any{"taskId": id})
		if s := g["status"]; s == status || s == "completed" || s == "failed" || s == "cancelled" {
			return g
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("task %s stayed %v", id, g["status"])
		}
		time.Sleep(time.Millisecond)
	}
}

func text(m map[string]any) string {
	content, _ := m["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

func TestTaskTools(t *testing.T) {
	p := newTaskPeer(t)
	if r := p.ok("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "World"}}); text(r) != "Hello, World!" || r["taskId"] != nil {
		t.Errorf("greet = %v", r)
	}
	created := p.ok("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60, "label": "x"}})
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" {
		t.Fatalf("slow_compute = %v", created)
	}
	p.ok("tasks/cancel", map[string]any{"taskId": id})
	if g := p.until(id, "cancelled"); g["status"] != "cancelled" {
		t.Errorf("cancelled slow_compute = %v", g)
	}
	g := p.until(p.ok("tools/call", map[string]any{"name": "failing_job"})["taskId"].(string), "completed")
	if res, _ := g["result"].(map[string]any); g["status"] != "completed" || res["isError"] != true {
		t.Errorf("failing_job = %v", g)
	}
	g = p.until(p.ok("tools/call", map[string]any{"name": "protocol_error_job"})["taskId"].(string), "failed")
	if g["status"] != "failed" || g["error"] == nil {
		t.Errorf("protocol_error_job = %v", g)
	}
	id = p.ok("tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "f.txt"}})["taskId"].(string)
	g = p.until(id, "input_required")
	answers := map[string]any{}
	for k := range g["inputRequests"].(map[string]any) {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	p.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": answers})
	if g := p.until(id, "completed"); text(g["result"].(map[string]any)) != "Deleted f.txt" {
		t.Errorf("confirm_delete = %v", g)
	}
	// multi_input asks two questions at once.
	id = p.ok("tools/call", map[string]any{"name": "multi_input"})["taskId"].(string)
	for {
		g = p.until(id, "input_required")
		if len(g["inputRequests"].(map[string]any)) == 2 {
			break
		}
	}
	for k := range g["inputRequests"].(map[string]any) {
		p.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"name": "n"}}}})
	}
	if g := p.until(id, "completed"); text(g["result"].(map[string]any)) != "First: n; second: n" {
		t.Errorf("multi_input = %v", g)
	}
	// test_tool_with_task: input_required first, then a task.
	r1 := p.ok("tools/call", map[string]any{"name": "test_tool_with_task"})
	if r1["resultType"] != "input_required" {
		t.Fatalf("round 1 = %v", r1)
	}
	r2 := p.ok("tools/call", map[string]any{"name": "test_tool_with_task", "inputResponses": map[string]any{
		"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}})
	if g := p.until(r2["taskId"].(string), "completed"); !strings.Contains(text(g["result"].(map[string]any)), "Alice") {
		t.Errorf("test_tool_with_task = %v", g)
	}
	// Without the extension: failing_job needs it, slow_compute runs as a plain call.
	p.ext = false
	if _, e := p.send("tools/call", map[string]any{"name": "failing_job"}); e == nil || e.Code != jsonrpc.CodeMissingRequiredClientCapability {
		t.Errorf("failing_job without the extension = %v", e)
	}
	if r := p.ok("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0}}); r["resultType"] != "complete" {
		t.Errorf("slow_compute without the extension = %v", r)
	}
}
