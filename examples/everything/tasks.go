package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/tasks"
)

// The tools of this file serve the tasks extension scenarios (SEP-2663): greet is a plain call;
// the others may run as tasks for clients that declare the extension. They are ordinary
// handlers: the kit decides when a call becomes a task, and inside a task Elicit waits for the
// client's tasks/update instead of sending a request.

// failingJobDelay is how long failing_job works before it reports its tool error.
var failingJobDelay = 500 * time.Millisecond

var (
	optionalTask = &core.ToolExecution{TaskSupport: tasks.SupportOptional}
	requiredTask = &core.ToolExecution{TaskSupport: tasks.SupportRequired}
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type slowIn struct {
	Seconds float64 `json:"seconds" jsonschema:"how long to work, in seconds"`
	Label   string  `json:"label,omitempty" jsonschema:"a label echoed in the result"`
}

type deleteIn struct {
	Filename string `json:"filename" jsonschema:"the file to delete"`
}

type noIn struct{}

var (
	confirmDeleteSchema = schemaOf(`"confirm":{"type":"boolean","description":"Delete the file?"}`, "confirm")
	// questionSchema is the form of multi_input: a name, and an optional confirmation.
	questionSchema = schemaOf(`"name":{"type":"string"},"confirm":{"type":"boolean"}`, "name")
)

func addTaskTools(s *core.Server) {
	core.AddTool(s, &core.Tool{Name: "greet", Description: "Greets someone, at once (never a task)."},
		func(_ context.Context, _ *core.ToolRequest, in greetIn) (*core.CallToolResult, any, error) {
			return core.TextResult("Hello, " + in.Name + "!"), nil, nil
		})

	core.AddTool(s, &core.Tool{Name: "slow_compute", Description: "Works for the given number of seconds, then reports; cancellable.", Execution: optionalTask},
		func(ctx context.Context, _ *core.ToolRequest, in slowIn) (*core.CallToolResult, any, error) {
			if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				return nil, nil, err
			}
			return core.TextResult(fmt.Sprintf("Computed %q in %gs", in.Label, in.Seconds)), nil, nil
		})

	core.AddTool(s, &core.Tool{Name: "failing_job", Description: "Works briefly, then reports a tool error. Runs only as a task.", Execution: requiredTask},
		func(ctx context.Context, _ *core.ToolRequest, _ noIn) (*core.CallToolResult, any, error) {
			if err := pause(ctx, failingJobDelay); err != nil {
				return nil, nil, err
			}
			return core.ErrorResult("The job failed: the input could not be processed"), nil, nil
		})

	core.AddTool(s, &core.Tool{Name: "protocol_error_job", Description: "Fails with a protocol error (the handler panics).", Execution: optionalTask},
		func(context.Context, *core.ToolRequest, noIn) (*core.CallToolResult, any, error) {
			panic("protocol_error_job always fails")
		})

	core.AddTool(s, &core.Tool{Name: "confirm_delete", Description: "Asks the user to confirm, then deletes (pretends to) the file.", Execution: optionalTask},
		func(ctx context.Context, req *core.ToolRequest, in deleteIn) (*core.CallToolResult, any, error) {
			ok, err := confirm(ctx, req, "Delete "+in.Filename+"?")
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return core.TextResult("Kept " + in.Filename), nil, nil
			}
			return core.TextResult("Deleted " + in.Filename), nil, nil
		})

	core.AddTool(s, &core.Tool{Name: "multi_input", Description: "Asks two questions at once and reports both answers.", Execution: optionalTask},
		func(ctx context.Context, req *core.ToolRequest, _ noIn) (*core.CallToolResult, any, error) {
			var wg sync.WaitGroup
			answers, errs := make([]string, 2), make([]error, 2)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := req.Elicit(ctx, &core.ElicitParams{Message: fmt.Sprintf("Question %d: your name?", i+1), RequestedSchema: questionSchema})
					if err != nil {
						errs[i] = err
						return
					}
					answers[i], _ = field(r, "name")
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return nil, nil, err
				}
			}
			return core.TextResult(fmt.Sprintf("First: %s; second: %s", answers[0], answers[1])), nil, nil
		})

	// test_tool_with_task asks for the user's name through input_required first (before any
	// task exists) and becomes a task once it has it (SEP-2322 composed with SEP-2663): it is
	// one of the extension's Deferred tools (see newServerWith).
	core.AddTool(s, &core.Tool{Name: "test_tool_with_task", Description: "Asks for a name, then greets in a task.",
		Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest, _ noIn) (*core.CallToolResult, any, error) {
			r, ok := req.ElicitResponse("user_name")
			if !ok {
				return nil, nil, core.NeedInput(map[string]core.InputRequest{"user_name": askName("What is your name?")}, "")
			}
			name, _ := field(r, "name")
			tasks.RunAsTask(ctx)
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return nil, nil, err
			}
			return core.TextResult("Hello, " + name + "!"), nil, nil
		})
}

// confirm asks the user a yes/no question: an elicitation, which inside a task waits for the
// client's tasks/update.
func confirm(ctx context.Context, req *core.ToolRequest, message string) (bool, error) {
	r, err := req.Elicit(ctx, &core.ElicitParams{Message: message, RequestedSchema: confirmDeleteSchema})
	if err != nil {
		return false, err
	}
	if r.Action != "accept" {
		return false, nil
	}
	v, _ := r.Content["confirm"].(bool)
	return v, nil
}
