package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/coretest"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// taskTools registers the tools the task tests drive:
//
//   - plain: never a task; answers "plain";
//   - work: optional; waits for release (or its context, whose cause goes to causes), then
//     answers "worked";
//   - must: required; answers a tool error;
//   - boom: optional; panics;
//   - fail: optional; returns a protocol error -32602 "bad input";
//   - ask: optional; elicits twice at once and answers with both names;
//   - need: optional; returns InputRequiredError until the retry brings "color", then answers it;
//   - later: optional and deferred; returns InputRequiredError until it has "name", then becomes a
//     task and answers "hello <name>".
type taskTools struct {
	release chan struct{}
	causes  chan error
	started chan string // the task id, as each work call starts
}

func addTaskTools(s *core.Server) *taskTools {
	tt := &taskTools{release: make(chan struct{}), causes: make(chan error, 16), started: make(chan string, 16)}
	optional := &core.ToolExecution{TaskSupport: tasks.SupportOptional}
	s.AddTool(&core.Tool{Name: "plain"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("plain"), nil
	})
	s.AddTool(&core.Tool{Name: "work", Execution: optional}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_ = req.Progress(1, 2, "ignored inside a task")
		tt.started <- tasks.ID(ctx)
		select {
		case <-tt.release:
			return core.TextResult("worked"), nil
		case <-ctx.Done():
			tt.causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}
	})
	s.AddTool(&core.Tool{Name: "must", Execution: &core.ToolExecution{TaskSupport: tasks.SupportRequired}},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.ErrorResult("tool failed"), nil
		})
	s.AddTool(&core.Tool{Name: "boom", Execution: optional}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		panic("boom")
	})
	s.AddTool(&core.Tool{Name: "fail", Execution: optional}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad input")
	})
	s.AddTool(&core.Tool{Name: "ask", Execution: optional}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		type answer struct {
			r   *core.ElicitResult
			err error
		}
		ch := make(chan answer, 2)
		for i := range 2 {
			go func() {
				r, err := req.Elicit(ctx, &core.ElicitParams{Message: fmt.Sprintf("name %d?", i), RequestedSchema: nameForm})
				ch <- answer{r, err}
			}()
		}
		var names []string
		for range 2 {
			a := <-ch
			if a.err != nil {
				return nil, a.err
			}
			names = append(names, fmt.Sprint(a.r.Content["name"]))
		}
		return core.TextResult(strings.Join(sortedPair(names), "+")), nil
	})
	s.AddTool(&core.Tool{Name: "need", Execution: optional}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		r, ok := req.ElicitResponse("color")
		if !ok {
			return nil, core.NeedInput(map[string]core.InputRequest{"color": core.ElicitInput(core.ElicitParams{Message: "color?", RequestedSchema: []byte(`{"type":"object","properties":{"color":{"type":"string"}}}`)})}, "st")
		}
		st, _ := req.RequestState()
		return core.TextResult(fmt.Sprintf("%v/%s", r.Content["color"], st)), nil
	})
	s.AddTool(&core.Tool{Name: "later", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			r, ok := req.ElicitResponse("name")
			if !ok {
				if tasks.ID(ctx) != "" {
					return nil, errors.New("a deferred call is a task before it asked to be one")
				}
				return nil, core.NeedInput(map[string]core.InputRequest{"name": core.ElicitInput(core.ElicitParams{Message: "name?", RequestedSchema: nameForm})}, "")
			}
			if tasks.RunAsTask(ctx) != (tasks.ID(ctx) != "") {
				return nil, errors.New("RunAsTask and TaskID disagree")
			}
			return core.TextResult(fmt.Sprintf("hello %v", r.Content["name"])), nil
		})
	return tt
}

var nameForm = []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)

func sortedPair(s []string) []string {
	if len(s) == 2 && s[0] > s[1] {
		s[0], s[1] = s[1], s[0]
	}
	return s
}

// taskClient sends 2026-07-28 requests to one server as a given principal (empty for none),
// declaring the tasks extension unless plain is set.
type taskClient struct {
	t         *testing.T
	srv       *core.Server
	principal string
	plain     bool
}

var taskCaps = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}

func (c *taskClient) send(method string, params map[string]any) *coretest.Wire {
	c.t.Helper()
	caps := taskCaps
	if c.plain {
		caps = map[string]any{"elicitation": map[string]any{}}
	}
	return coretest.Send(c.t, c.srv, c.principal, caps, method, params)
}

// ok sends a request that must succeed and decodes its result.
func (c *taskClient) ok(method string, params map[string]any) map[string]any {
	c.t.Helper()
	w := c.send(method, params)
	if w.Error != nil {
		c.t.Fatalf("%s failed: %s", method, w)
	}
	var out map[string]any
	if err := json.Unmarshal(w.Result, &out); err != nil {
		c.t.Fatal(err)
	}
	return out
}

func (c *taskClient) create(tool string) string {
	c.t.Helper()
	r := c.ok("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
	if r["resultType"] != "task" {
		c.t.Fatalf("tools/call %s = %v, want a task", tool, r)
	}
	return r["taskId"].(string)
}

func (c *taskClient) get(id string) map[string]any {
	c.t.Helper()
	return c.ok("tasks/get", map[string]any{"taskId": id})
}

// waitStatus polls tasks/get until the task has status (or is terminal); the tasks here settle
// within milliseconds, so the loop is bounded by attempts that yield to the handler.
func (c *taskClient) waitStatus(id, status string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := c.get(id)
		st := g["status"].(string)
		if st == status || (st == "completed" || st == "failed" || st == "cancelled") {
			return g
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s stayed %s, want %s", id, st, status)
		}
		time.Sleep(time.Millisecond) // polling is the protocol: the client cannot be told otherwise
	}
}

// newTaskServer serves the task tools with the tasks extension configured by opts ("later" is
// its deferred tool).
func newTaskServer(t *testing.T, opts tasks.Options) (*core.Server, *taskTools) {
	t.Helper()
	opts.Deferred = append(opts.Deferred, "later")
	s := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(opts)}})
	return s, addTaskTools(s)
}

func TestTaskCreateAndComplete(t *testing.T) {
	s, tt := newTaskServer(t, tasks.Options{})
	c := &taskClient{t: t, srv: s}
	created := c.ok("tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "task": map[string]any{"ttl": 5}})
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if _, ok := created[k]; !ok {
			t.Errorf("CreateTaskResult lacks %s: %v", k, created)
		}
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState", "task", "ttl", "content"} {
		if _, ok := created[k]; ok {
			t.Errorf("CreateTaskResult carries %s: %v", k, created)
		}
	}
	if created["resultType"] != "task" || created["status"] != "working" || created["ttlMs"] != float64(time.Hour.Milliseconds()) || created["pollIntervalMs"] != float64(1000) {
		t.Errorf("CreateTaskResult = %v", created)
	}
	id := created["taskId"].(string)
	if got := <-tt.started; got != id {
		t.Errorf("TaskID() in the handler = %q, want %q", got, id)
	}
	// Found at once, working, with no result yet.
	g := c.get(id)
	if g["status"] != "working" || g["resultType"] != "complete" || g["result"] != nil {
		t.Errorf("tasks/get while working = %v", g)
	}
	close(tt.release)
	done := c.waitStatus(id, "completed")
	res, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || res == nil || res["isError"] != false {
		t.Fatalf("completed task = %v", done)
	}
	if content := res["content"].([]any); content[0].(map[string]any)["text"] != "worked" {
		t.Errorf("result content = %v", content)
	}
	if res["resultType"] != "complete" {
		t.Errorf("the inlined result is not what tools/call would have answered: %v", res)
	}
	if _, ok := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"]; ok {
		t.Errorf("related-task _meta on the inlined result: %v", res)
	}
}

func TestTaskDispatchRules(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	with := &taskClient{t: t, srv: s}
	without := &taskClient{t: t, srv: s, plain: true}

	// A plain tool is never a task, and a legacy `task` param changes nothing.
	r := with.ok("tools/call", map[string]any{"name": "plain", "task": map[string]any{"ttl": 100}})
	if r["resultType"] != "complete" || r["taskId"] != nil {
		t.Errorf("plain tool = %v", r)
	}
	// Without the extension an optional tool runs as an ordinary call.
	w := without.send("tools/call", map[string]any{"name": "fail"})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "bad input", "bad input")
	// A required tool is refused with -32021 naming the extension.
	w = without.send("tools/call", map[string]any{"name": "must"})
	coretest.WantError(t, w, jsonrpc.CodeMissingRequiredClientCapability, "Missing required client capability",
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}})

	// tasks/* without the extension: -32021 before the id is even looked at.
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		w := without.send(m, map[string]any{"taskId": "nope", "inputResponses": map[string]any{}})
		if w.Error == nil || w.Error.Code != jsonrpc.CodeMissingRequiredClientCapability {
			t.Errorf("%s without the extension = %s, want -32021", m, w)
		}
		w = with.send(m, map[string]any{"taskId": "nope", "inputResponses": map[string]any{}})
		coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found", "Failed to retrieve task: Task not found")
	}
	w = with.send("tasks/get", map[string]any{"taskId": 7})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Invalid params", "Missing or invalid taskId")
	for _, m := range []string{"tasks/result", "tasks/list"} {
		w := with.send(m, map[string]any{"taskId": "x"})
		if w.Error == nil || w.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s = %s, want -32601", m, w)
		}
	}
	// server/discover names the extension under extensions, never a tasks capability.
	d := with.ok("server/discover", nil)
	caps := d["capabilities"].(map[string]any)
	if _, ok := caps["tasks"]; ok {
		t.Errorf("capabilities.tasks advertised: %v", caps)
	}
	if _, ok := caps["extensions"].(map[string]any)[tasks.ExtensionID]; !ok {
		t.Errorf("capabilities.extensions lacks tasks: %v", caps)
	}
	// tools/list shows the task support of each tool.
	l := with.ok("tools/list", nil)
	for _, tool := range l["tools"].([]any) {
		m := tool.(map[string]any)
		x, _ := m["execution"].(map[string]any)
		switch m["name"] {
		case "plain":
			if x != nil {
				t.Errorf("plain tool has execution %v", x)
			}
		case "must":
			if x["taskSupport"] != "required" {
				t.Errorf("must tool execution = %v", x)
			}
		}
	}
	testutil.ValidateDef(t, "2025-11-25", "Tool", mustJSON(t, l["tools"].([]any)[1]))
}

func TestTaskNotOfferedWithoutTaskTools(t *testing.T) {
	bare := core.NewServer(core.Implementation{Name: "x", Version: "1"}, core.Options{})
	w := (&taskClient{t: t, srv: bare}).send("tasks/get", map[string]any{"taskId": "x"})
	coretest.WantError(t, w, jsonrpc.CodeMethodNotFound, "Method not found", "tasks/get")
	s := core.NewServer(core.Implementation{Name: "x", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{})}})
	s.AddTool(&core.Tool{Name: "plain"}, okTool)
	c := &taskClient{t: t, srv: s}
	w = c.send("tasks/get", map[string]any{"taskId": "x"})
	if w.Error == nil || w.Error.Code != jsonrpc.CodeInternalError {
		t.Errorf("tasks/get on a server without task tools = %s, want the capability refusal", w)
	}
	if caps := s.Capabilities(); caps.Extensions != nil {
		t.Errorf("extensions advertised without task tools: %v", caps.Extensions)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddTool accepted an unknown task support")
			}
		}()
		s.AddTool(&core.Tool{Name: "bad", Execution: &core.ToolExecution{TaskSupport: "sometimes"}}, okTool)
	}()
}

func TestTaskOutcomes(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	c := &taskClient{t: t, srv: s}
	// A tool error is a completed task with isError.
	g := c.waitStatus(c.create("must"), "completed")
	if g["status"] != "completed" || g["result"].(map[string]any)["isError"] != true {
		t.Errorf("tool error task = %v", g)
	}
	// A panic and a protocol error are failed tasks with the JSON-RPC error and no result.
	// Each carries a statusMessage with the diagnostic (SEP-2663).
	for tool, want := range map[string]struct {
		code float64
		msg  string
	}{
		"boom": {-32603, "The tool call failed: jsonrpc error -32603: Internal error"},
		"fail": {-32602, "The tool call failed: jsonrpc error -32602: bad input"},
	} {
		g := c.waitStatus(c.create(tool), "failed")
		e, _ := g["error"].(map[string]any)
		if g["status"] != "failed" || e == nil || e["code"] != want.code || g["result"] != nil {
			t.Errorf("%s task = %v, want failed with %v", tool, g, want.code)
		}
		if msg, _ := g["statusMessage"].(string); !strings.HasPrefix(msg, want.msg) {
			t.Errorf("%s task statusMessage = %q, want %q", tool, msg, want.msg)
		}
	}
}

func TestTaskCancel(t *testing.T) {
	s, tt := newTaskServer(t, tasks.Options{})
	c := &taskClient{t: t, srv: s}
	id := c.create("work")
	<-tt.started
	ack := c.ok("tasks/cancel", map[string]any{"taskId": id})
	if len(ack) != 2 || ack["resultType"] != "complete" || ack["_meta"] == nil {
		t.Errorf("cancel ack = %v, want only resultType and _meta", ack)
	}
	if cause := <-tt.causes; !errors.Is(cause, tasks.ErrCancelled) {
		t.Errorf("handler context cause = %v, want ErrTaskCancelled", cause)
	}
	if g := c.get(id); g["status"] != "cancelled" {
		t.Errorf("after cancel = %v", g)
	}
	// Idempotent on a terminal task; the outcome the handler reported later changes nothing.
	ack = c.ok("tasks/cancel", map[string]any{"taskId": id})
	if ack["resultType"] != "complete" {
		t.Errorf("second cancel = %v", ack)
	}
	done := c.waitStatus(c.create("must"), "completed")
	c.ok("tasks/cancel", map[string]any{"taskId": done["taskId"].(string)})
	if g := c.get(done["taskId"].(string)); g["status"] != "completed" {
		t.Errorf("cancel of a completed task changed it: %v", g)
	}
}

func TestTaskElicitationInput(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	c := &taskClient{t: t, srv: s}
	id := c.create("ask")
	var g map[string]any
	for {
		g = c.waitStatus(id, "input_required")
		if len(g["inputRequests"].(map[string]any)) == 2 {
			break
		}
	}
	reqs := g["inputRequests"].(map[string]any)
	var keys []string
	for k, v := range reqs {
		keys = append(keys, k)
		if v.(map[string]any)["method"] != "elicitation/create" {
			t.Errorf("input request %s = %v", k, v)
		}
	}
	// Unknown keys are ignored; a bad answer to an outstanding key is -32602 and changes nothing.
	ack := c.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"nope": map[string]any{"x": 1}}})
	if ack["resultType"] != "complete" || ack["taskId"] != nil {
		t.Errorf("update ack = %v", ack)
	}
	w := c.send("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: map[string]any{"x": 1}}})
	if w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("bad input response = %s, want -32602", w)
	}
	// A partial answer: the answered key is gone before the ack, the task still waits.
	c.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: map[string]any{"action": "accept", "content": map[string]any{"name": "a"}}}})
	g = c.get(id)
	left := g["inputRequests"].(map[string]any)
	if g["status"] != "input_required" || len(left) != 1 || left[keys[1]] == nil {
		t.Errorf("after a partial answer = %v", g)
	}
	// Answering again an answered key is ignored.
	c.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: map[string]any{"action": "accept", "content": map[string]any{"name": "z"}}}})
	c.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[1]: map[string]any{"action": "accept", "content": map[string]any{"name": "b"}}}})
	g = c.waitStatus(id, "completed")
	if text := g["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "a+b" {
		t.Errorf("result = %v, want a+b", text)
	}
}

func TestTaskInputRequiredInside(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	c := &taskClient{t: t, srv: s}
	id := c.create("need")
	g := c.waitStatus(id, "input_required")
	reqs := g["inputRequests"].(map[string]any)
	if len(reqs) != 1 || g["requestState"] != nil {
		t.Fatalf("input_required task = %v", g)
	}
	var key string
	for k := range reqs {
		key = k
	}
	c.ok("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"color": "red"}}}})
	g = c.waitStatus(id, "completed")
	if text := g["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "red/st" {
		t.Errorf("result = %v, want red/st", text)
	}
}

func TestTaskDeferredAfterRoundTrip(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	c := &taskClient{t: t, srv: s}
	r1 := c.ok("tools/call", map[string]any{"name": "later"})
	if r1["resultType"] != "input_required" || r1["taskId"] != nil {
		t.Fatalf("round 1 = %v", r1)
	}
	r2 := c.ok("tools/call", map[string]any{"name": "later", "inputResponses": map[string]any{
		"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}})
	if r2["resultType"] != "task" || r2["requestState"] != nil || r2["inputRequests"] != nil {
		t.Fatalf("round 2 = %v", r2)
	}
	g := c.waitStatus(r2["taskId"].(string), "completed")
	if text := g["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "hello Alice" {
		t.Errorf("result = %v", text)
	}
	// Without the extension the same tool is an ordinary call all the way.
	plain := &taskClient{t: t, srv: s, plain: true}
	r := plain.ok("tools/call", map[string]any{"name": "later", "inputResponses": map[string]any{
		"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Bob"}}}})
	if r["resultType"] != "complete" {
		t.Errorf("deferred tool without the extension = %v", r)
	}
}

func TestTaskOwnership(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	alice := &taskClient{t: t, srv: s, principal: "alice"}
	bob := &taskClient{t: t, srv: s, principal: "bob"}
	anon := &taskClient{t: t, srv: s}
	id := alice.create("must")
	alice.get(id)
	for name, c := range map[string]*taskClient{"bob": bob, "anonymous": anon} {
		for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			w := c.send(m, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
			if w.Error == nil || w.Error.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("%s %s of alice's task = %s, want -32602", name, m, w)
			}
		}
	}
	anonID := anon.create("must")
	anon.get(anonID)
	if w := alice.send("tasks/get", map[string]any{"taskId": anonID}); w.Error == nil {
		t.Errorf("alice read an anonymous task: %s", w)
	}
}

func TestTaskExpiryAndLimits(t *testing.T) {
	clock := testutil.NewClock()
	s, tt := newTaskServer(t, tasks.Options{Now: clock.Now, TTL: time.Minute, MaxTasksPerPrincipal: 1, MaxTasks: 2, PollInterval: -1})
	c := &taskClient{t: t, srv: s, principal: "p"}
	created := c.ok("tools/call", map[string]any{"name": "work"})
	if _, ok := created["pollIntervalMs"]; ok || created["ttlMs"] != float64(60000) {
		t.Errorf("CreateTaskResult = %v", created)
	}
	id := created["taskId"].(string)
	<-tt.started
	// One live task per principal.
	w := c.send("tools/call", map[string]any{"name": "work"})
	if w.Error == nil || w.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(string(w.Error.Data), "too many live tasks") {
		t.Errorf("second task of the principal = %s, want the limit error", w)
	}
	other := &taskClient{t: t, srv: s, principal: "q"}
	other.waitStatus(other.create("must"), "completed")
	// The store is full (two tasks) even though q's is terminal.
	w = (&taskClient{t: t, srv: s, principal: "r"}).send("tools/call", map[string]any{"name": "must"})
	if w.Error == nil {
		t.Errorf("third task = %s, want the total limit", w)
	}
	// Past the TTL the tasks are gone, and their room is free again.
	clock.Advance(time.Minute)
	w = c.send("tasks/get", map[string]any{"taskId": id})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found", "Failed to retrieve task: Task not found")
	other.waitStatus(other.create("must"), "completed")
	close(tt.release)
}

// TestTaskFloodStaysInShare: one principal creating finished tasks in a loop stays within its
// own share (its oldest finished task is evicted), and callers who never made a task still get
// one. Before, finished tasks did not count against the share and the flood filled MaxTasks.
func TestTaskFloodStaysInShare(t *testing.T) {
	s, tt := newTaskServer(t, tasks.Options{MaxTasks: 20, MaxTasksPerPrincipal: 5})
	defer close(tt.release)
	flood := &taskClient{t: t, srv: s, principal: "flood"}
	var first, last string
	for i := range 60 {
		last = flood.create("must")
		flood.waitStatus(last, "failed")
		if i == 0 {
			first = last
		}
	}
	if w := flood.send("tasks/get", map[string]any{"taskId": first}); w.Error == nil {
		t.Errorf("the flood's oldest finished task was kept past its share: %s", w)
	}
	flood.get(last)
	for _, p := range []string{"a", "b", "c"} {
		c := &taskClient{t: t, srv: s, principal: p}
		c.waitStatus(c.create("must"), "failed")
	}
	// An owner with its share of unfinished tasks is refused, and only that owner.
	busy := &taskClient{t: t, srv: s, principal: "busy"}
	for range 5 {
		busy.create("work")
		<-tt.started
	}
	w := busy.send("tools/call", map[string]any{"name": "work"})
	if w.Error == nil || !strings.Contains(string(w.Error.Data), "too many live tasks") {
		t.Errorf("sixth unfinished task = %s, want the limit error", w)
	}
	flood.waitStatus(flood.create("must"), "failed")
}

func TestMemoryTaskStoreEviction(t *testing.T) {
	clock := testutil.NewClock()
	st := tasks.NewMemoryStore(clock.Now)
	ctx := context.Background()
	limits := tasks.Limits{MaxTasks: 3, MaxPerOwner: 2}
	mk := func(id, owner string, status tasks.Status) error {
		clock.Advance(time.Second)
		return st.Create(ctx, &tasks.Task{ID: id, Owner: owner, Status: status, CreatedAt: clock.Now(), TTL: time.Hour}, limits)
	}
	for _, id := range []string{"d1", "d2", "d3"} {
		if err := mk(id, "o", tasks.Completed); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Get(ctx, "d1"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("the oldest finished task was not evicted: %v", err)
	}
	if _, err := st.Get(ctx, "d2"); err != nil {
		t.Errorf("a newer finished task was evicted: %v", err)
	}
	if err := mk("w1", "p", tasks.Working); err != nil {
		t.Fatal(err)
	}
	// The store is full (o's two, p's one): q has nothing to evict and o's tasks are not q's.
	if err := mk("q1", "q", tasks.Working); !errors.Is(err, tasks.ErrLimit) {
		t.Errorf("a full store took q's task: %v", err)
	}
	if err := mk("w2", "p", tasks.Working); !errors.Is(err, tasks.ErrLimit) {
		t.Errorf("p past the total cap with nothing finished: %v", err)
	}
	if st.Len() != 3 {
		t.Errorf("Len = %d, want 3", st.Len())
	}
}

func TestMemoryTaskStore(t *testing.T) {
	clock := testutil.NewClock()
	st := tasks.NewMemoryStore(clock.Now)
	ctx := context.Background()
	limits := tasks.Limits{MaxTasks: -1, MaxPerOwner: -1}
	if err := st.Create(ctx, &tasks.Task{ID: "a", Owner: "o", Status: tasks.Working, CreatedAt: clock.Now(), TTL: time.Second}, limits); err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &tasks.Task{ID: "a"}, limits); err == nil {
		t.Error("a duplicate id was stored")
	}
	boom := errors.New("boom")
	if _, err := st.Update(ctx, "a", func(t *tasks.Task) error { t.Status = tasks.Failed; return boom }); !errors.Is(err, boom) {
		t.Errorf("Update = %v, want the callback's error", err)
	}
	if got, _ := st.Get(ctx, "a"); got.Status != tasks.Working {
		t.Errorf("a failed Update changed the task: %v", got.Status)
	}
	got, err := st.Update(ctx, "a", func(t *tasks.Task) error { t.Status, t.ID, t.Owner = tasks.Completed, "b", "x"; return nil })
	if err != nil || got.ID != "a" || got.Owner != "o" || got.Status != tasks.Completed {
		t.Errorf("Update = %+v, %v", got, err)
	}
	got, _ = st.Update(ctx, "a", func(t *tasks.Task) error { t.Status = tasks.Working; return nil })
	if got.Status != tasks.Completed {
		t.Errorf("a terminal status changed to %s", got.Status)
	}
	got.InputRequests = map[string]json.RawMessage{"k": nil} // a copy: the store is not affected
	if again, _ := st.Get(ctx, "a"); again.InputRequests != nil {
		t.Error("Get returned the stored task itself")
	}
	clock.Advance(time.Second)
	if _, err := st.Get(ctx, "a"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("expired Get = %v", err)
	}
	if _, err := st.Update(ctx, "a", func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("expired Update = %v", err)
	}
	if st.Len() != 0 {
		t.Errorf("expired task kept: %d", st.Len())
	}
}

func TestHonorListenTasks(t *testing.T) {
	s, _ := newTaskServer(t, tasks.Options{})
	alice := &taskClient{t: t, srv: s, principal: "alice"}
	id := alice.create("must")
	env := &core.Envelope{ClientCapabilities: core.ClientCapabilities{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	f := core.SubscriptionFilter{Extensions: map[string][]string{"taskIds": {id, id, "nope"}}}
	got, err := transport.Core.HonorListen(s, core.WithPrincipal(context.Background(), "alice"), env, f)
	if ids := got.Extensions["taskIds"]; err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("alice's listen = %+v, %v", got, err)
	}
	if !transport.Core.Wants(got, core.Change{Method: tasks.StatusNotification, Key: id}) {
		t.Error("Wants ignores the task ids")
	}
	if transport.Core.Wants(got, core.Change{Method: tasks.StatusNotification, Key: "other"}) {
		t.Error("Wants took another task's notification")
	}
	if transport.Core.Wants(got, core.Change{Method: "notifications/other", Key: id}) {
		t.Error("Wants took another extension's notification")
	}
	bob, err := transport.Core.HonorListen(s, core.WithPrincipal(context.Background(), "bob"), env, f)
	if err != nil || len(bob.Extensions["taskIds"]) != 0 || transport.Core.Wants(bob, core.Change{Method: tasks.StatusNotification, Key: id}) {
		t.Errorf("bob's listen kept alice's task: %+v, %v", bob, err)
	}
	var missing *jsonrpc.Error
	if _, err := transport.Core.HonorListen(s, context.Background(), &core.Envelope{ClientCapabilities: core.ClientCapabilities{}}, f); !errors.As(err, &missing) || missing.Code != jsonrpc.CodeMissingRequiredClientCapability {
		t.Errorf("taskIds without the extension: %v, want -32021", err)
	}
	if transport.Core.Wants((core.SubscriptionFilter{Extensions: map[string][]string{"taskIds": {id}}}), core.Change{Method: tasks.StatusNotification, Key: id}) {
		t.Error("Wants took ids HonorListen did not admit")
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func okTool(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
	return core.TextResult("ok"), nil
}

// countingStore counts the reads of the store it wraps.
type countingStore struct {
	tasks.Store
	gets, batches atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, id)
}

func (c *countingStore) GetMany(ctx context.Context, ids []string) (map[string]*tasks.Task, error) {
	c.batches.Add(1)
	return c.Store.GetMany(ctx, ids)
}

// TestListenIDsCappedAndBatched: a listen filter naming more than MaxListenIDs distinct task ids
// is refused with -32602 before any is read; one within the cap (repeats do not count) is read
// in one batch. Before, every id was one Get, without bound.
func TestListenIDsCappedAndBatched(t *testing.T) {
	st := &countingStore{Store: tasks.NewMemoryStore(nil)}
	s, _ := newTaskServer(t, tasks.Options{Store: st, MaxListenIDs: 3})
	alice := &taskClient{t: t, srv: s, principal: "alice"}
	id := alice.create("must")
	st.gets.Store(0)
	env := &core.Envelope{ClientCapabilities: core.ClientCapabilities{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	ctx := core.WithPrincipal(context.Background(), "alice")
	f := core.SubscriptionFilter{Extensions: map[string][]string{"taskIds": {id, "x", id, "y", "x"}}}
	got, err := transport.Core.HonorListen(s, ctx, env, f)
	if err != nil || len(got.Extensions["taskIds"]) != 1 {
		t.Fatalf("listen within the cap = %+v, %v", got, err)
	}
	if st.gets.Load() != 0 || st.batches.Load() != 1 {
		t.Errorf("reads: %d gets, %d batches; want 0 and 1", st.gets.Load(), st.batches.Load())
	}
	f.Extensions["taskIds"] = []string{id, "x", "y", "z"}
	_, err = transport.Core.HonorListen(s, ctx, env, f)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(fmt.Sprint(e.Data), "more than 3") {
		t.Errorf("listen past the cap = %v, want -32602 naming the cap", err)
	}
	if st.gets.Load() != 0 || st.batches.Load() != 1 {
		t.Errorf("a refused listen read the store: %d gets, %d batches", st.gets.Load(), st.batches.Load())
	}
}
