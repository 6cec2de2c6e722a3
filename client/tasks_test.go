package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// taskServer offers the tasks extension: job runs only as a task and asks for a name first; slow
// waits until cancelled.
func taskServer(cancelled chan<- struct{}) *core.Server {
	s := core.NewServer(core.Implementation{Name: "tasks", Version: "1"}, core.Options{
		Extensions: []core.Extension{tasks.New(tasks.Options{PollInterval: 10 * time.Millisecond})},
	})
	s.AddTool(&core.Tool{Name: "job", Description: "A task.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution: &core.ToolExecution{TaskSupport: tasks.SupportRequired}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			res, err := req.Elicit(ctx, &core.ElicitParams{Message: "Name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer"}}}`)})
			if err != nil {
				return nil, err
			}
			return core.TextResult(fmt.Sprintf("job done for %v (task %v)", res.Content["name"], tasks.ID(ctx) != "")), nil
		})
	s.AddTool(&core.Tool{Name: "slow", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execution: &core.ToolExecution{TaskSupport: tasks.SupportRequired}},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		})
	return s
}

func TestTasks(t *testing.T) {
	for _, name := range []string{"memory", "http"} {
		t.Run(name, func(t *testing.T) {
			cancelled := make(chan struct{}, 1)
			s := taskServer(cancelled)
			var tr client.Transport = &client.InMemoryTransport{Server: s}
			if name == "http" {
				srv := httptest.NewServer(mcphttp.New(s, mcphttp.Options{}))
				defer srv.Close()
				tr = &client.HTTPTransport{URL: srv.URL}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, tr, *handlers(&client.Options{Lifecycle: client.Modern}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			// CallTool hides the task: it polls, answers the elicitation with tasks/update, and
			// returns the final result.
			res, err := c.CallTool(ctx, "job", nil)
			if err != nil || res.Content[0].Text != "job done for Ada (task true)" {
				t.Fatalf("CallTool through a task: %+v, %v", res, err)
			}

			// CallToolTask hands the task over.
			task, res, err := c.CallToolTask(ctx, "job", nil)
			if err != nil || task == nil || res != nil {
				t.Fatalf("CallToolTask: %v, %v, %v", task, res, err)
			}
			if task.ID() == "" {
				t.Error("no task id")
			}
			res, err = task.Result(ctx)
			if err != nil || res.Content[0].Text != "job done for Ada (task true)" {
				t.Fatalf("Task.Result: %+v, %v", res, err)
			}
			if st := task.State(); st.Status != tasks.Completed {
				t.Errorf("final status %q", st.Status)
			}

			// A call whose context ends cancels its task.
			cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer ccancel()
			_, err = c.CallTool(cctx, "slow", nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("slow task: %v", err)
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the task was not cancelled")
			}
		})
	}
}

// TestTasksNotDeclaredWithoutServerOffer checks that a legacy session or a server without the
// extension never gets the capability.
func TestTasksNotDeclaredWithoutServerOffer(t *testing.T) {
	f := newFixture(t)
	var caps core.ClientCapabilities
	f.server.AddTool(&core.Tool{Name: "caps", Description: "Echoes capabilities.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			caps = req.ClientCapabilities()
			return core.TextResult("ok"), nil
		})
	c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: f.server}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), "caps", nil); err != nil {
		t.Fatal(err)
	}
	if caps.Has("extensions", tasks.ExtensionID) {
		t.Errorf("tasks declared to a server without them: %v", caps)
	}
}
