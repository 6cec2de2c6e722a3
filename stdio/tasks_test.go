package stdio_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/metakey"
)

// TestTaskOverStdio: a 2026-07-28 client on real pipes gets a task handle, answers the task's
// elicitation with tasks/update and reads the result with tasks/get.
func TestTaskOverStdio(t *testing.T) {
	srv := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{})}})
	srv.AddTool(&core.Tool{Name: "confirm", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			r, err := req.Elicit(ctx, &core.ElicitParams{Message: "sure?"})
			if err != nil {
				return nil, err
			}
			return core.TextResult("answer: " + r.Action), nil
		})
	p := servePipes(t, srv)
	meta := envelope(core.Version20260728)
	meta[metakey.ClientCapabilities] = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}
	p.write(frame(t, 1, "tools/call", map[string]any{"name": "confirm"}, meta))
	created := p.next()
	var task struct {
		ResultType    string                    `json:"resultType"`
		TaskID        string                    `json:"taskId"`
		Status        string                    `json:"status"`
		InputRequests map[string]map[string]any `json:"inputRequests"`
		Result        struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(created.Result, &task); err != nil || task.ResultType != "task" || task.TaskID == "" {
		t.Fatalf("tools/call answer %s (%v)", created.raw, err)
	}
	id := task.TaskID
	poll := func(n int, want string) {
		t.Helper()
		deadline := time.Now().Add(failsafe)
		for {
			p.write(frame(t, n, "tasks/get", map[string]any{"taskId": id}, meta))
			m := p.next()
			task.Status = ""
			if err := json.Unmarshal(m.Result, &task); err != nil {
				t.Fatalf("tasks/get answer %s: %v", m.raw, err)
			}
			if task.Status == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("task stayed %s, want %s", task.Status, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	poll(2, "input_required")
	var key string
	for k, r := range task.InputRequests {
		key = k
		if r["method"] != "elicitation/create" {
			t.Errorf("input request %v", r)
		}
	}
	p.write(frame(t, 3, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "decline"}}}, meta))
	if m := p.next(); m.Error != nil {
		t.Fatalf("tasks/update: %s", m.raw)
	}
	poll(4, "completed")
	if len(task.Result.Content) != 1 || task.Result.Content[0].Text != "answer: decline" {
		t.Errorf("result %+v", task.Result)
	}
}

// TestSkillsOverStdio: skills/list, skills/get and resources/directory/read on real pipes.
func TestSkillsOverStdio(t *testing.T) {
	sk := skills.New(skills.Options{})
	srv := core.NewServer(core.Implementation{Name: "skills", Version: "1"}, core.Options{Extensions: []core.Extension{sk}})
	fsys := fstest.MapFS{
		"SKILL.md":      {Data: []byte("---\nname: notes\ndescription: Take notes\n---\nBody\n")},
		"refs/STYLE.md": {Data: []byte("style")},
	}
	if err := sk.Add("notes", fsys); err != nil {
		t.Fatal(err)
	}
	p := servePipes(t, srv)
	meta := envelope(core.Version20260728)
	p.write(frame(t, 1, "skills/list", nil, meta))
	var list struct {
		Skills []struct {
			URI       string `json:"uri"`
			Resources []struct {
				URI  string `json:"uri"`
				Size int    `json:"size"`
			} `json:"resources"`
		} `json:"skills"`
		TTLMs *int64 `json:"ttlMs"`
	}
	if m := p.next(); json.Unmarshal(m.Result, &list) != nil || len(list.Skills) != 1 || len(list.Skills[0].Resources) != 2 || list.TTLMs == nil {
		t.Fatalf("skills/list: %s", m.raw)
	}
	p.write(frame(t, 2, "skills/get", map[string]any{"uri": "skill://notes/SKILL.md"}, meta))
	if m := p.next(); m.Error != nil || !strings.Contains(string(m.Result), `"skill":{"uri":"skill://notes/SKILL.md"`) {
		t.Errorf("skills/get: %s", m.raw)
	}
	p.write(frame(t, 3, "resources/directory/read", map[string]any{"uri": "skill://notes/refs"}, meta))
	if m := p.next(); m.Error != nil || !strings.Contains(string(m.Result), `"uri":"skill://notes/refs/STYLE.md"`) {
		t.Errorf("directory read: %s", m.raw)
	}
	p.write(frame(t, 4, "skills/get", map[string]any{"uri": "skill://other/SKILL.md"}, meta))
	wantErr(t, p.next(), "4", jsonrpc.CodeInvalidParams, "")
}

// TestTaskNotificationsOverStdio: a listen request naming a task gets notifications/tasks on
// its own path when the task completes.
func TestTaskNotificationsOverStdio(t *testing.T) {
	srv := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{})}})
	release := make(chan struct{})
	srv.AddTool(&core.Tool{Name: "wait", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			select {
			case <-release:
				return core.TextResult("done"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	p := servePipes(t, srv)
	meta := envelope(core.Version20260728)
	meta[metakey.ClientCapabilities] = map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}
	p.write(frame(t, 1, "tools/call", map[string]any{"name": "wait"}, meta))
	var created struct {
		TaskID string `json:"taskId"`
	}
	if m := p.next(); json.Unmarshal(m.Result, &created) != nil || created.TaskID == "" {
		t.Fatalf("tools/call: %s", m.raw)
	}
	p.write(frame(t, 2, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{created.TaskID}}}, meta))
	if ack := p.next(); ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), created.TaskID) {
		t.Fatalf("acknowledgement: %s", ack.raw)
	}
	close(release)
	n := p.next()
	if n.Method != "notifications/tasks" || !strings.Contains(string(n.Params), `"status":"completed"`) || !strings.Contains(string(n.Params), `"io.modelcontextprotocol/subscriptionId":2`) {
		t.Fatalf("notification: %s", n.raw)
	}
	p.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}` + "\n")
}
