package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
)

// Bounds on the polling interval of a task.
const (
	// DefaultPollInterval is used when the server suggests none.
	DefaultPollInterval = time.Second
	// MinPollInterval is the shortest wait between two polls, whatever the server suggests.
	MinPollInterval = 10 * time.Millisecond
)

// ErrTaskCancelled is returned when a task ended in the cancelled status.
var ErrTaskCancelled = errors.New("mcpkit/client: the task was cancelled")

// TaskState is the state of a task as the server last reported it.
type TaskState struct {
	TaskID         string       `json:"taskId"`
	Status         tasks.Status `json:"status"`
	StatusMessage  string       `json:"statusMessage,omitzero"`
	CreatedAt      string       `json:"createdAt,omitzero"`
	LastUpdatedAt  string       `json:"lastUpdatedAt,omitzero"`
	TTLMs          *int64       `json:"ttlMs"`
	PollIntervalMs *int64       `json:"pollIntervalMs,omitzero"`
	// Result is the final result (completed).
	Result json.RawMessage `json:"result,omitzero"`
	// Error is the JSON-RPC error (failed).
	Error *jsonrpc.Error `json:"error,omitzero"`
	// InputRequests are the server's outstanding requests (input_required).
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests,omitzero"`
}

// Task is a handle on a task the server created for a call (the tasks extension). Wait polls it
// to the end; the client answers its input requests through the same handlers as any other.
type Task struct {
	c      *Client
	method string

	mu       sync.Mutex
	state    TaskState
	answered map[string]bool
}

// taskOpts asks for the task handle instead of the final result.
type taskOpts struct {
	out **Task
}

// CallToolTask calls a tool and, when the server makes a task of it, returns the handle instead
// of waiting: task is then non-nil and res nil. A server that answers at once gives res and a
// nil task.
func (c *Client) CallToolTask(ctx context.Context, name string, args any, opts ...CallOption) (task *Task, res *core.CallToolResult, err error) {
	opts = append(opts, func(o *callOpts) { o.task = &taskOpts{out: &task} })
	res, err = c.CallTool(ctx, name, args, opts...)
	if task != nil {
		return task, nil, err
	}
	return nil, res, err
}

// tasksDeclared reports whether both sides declared the tasks extension.
func (c *Client) tasksDeclared() bool {
	_, ok := c.serverCaps.Extensions[tasks.ExtensionID]
	return ok
}

func newTask(c *Client, method string, raw json.RawMessage) (*Task, error) {
	t := &Task{c: c, method: method, answered: map[string]bool{}}
	if err := jsonv2.Unmarshal(raw, &t.state); err != nil {
		return nil, fmt.Errorf("mcpkit/client: %s: malformed task result: %w", method, err)
	}
	if t.state.TaskID == "" {
		return nil, fmt.Errorf("mcpkit/client: %s: task result without taskId", method)
	}
	return t, nil
}

// taskHandle hands a task result to the caller that asked for it.
func (c *Client) taskHandle(_ context.Context, raw json.RawMessage, o *callOpts) error {
	t, err := newTask(c, "tools/call", raw)
	if err != nil {
		return err
	}
	*o.task.out = t
	return nil
}

// awaitTask drives a task to its end and decodes the final result into res.
func (c *Client) awaitTask(ctx context.Context, method string, raw json.RawMessage, res any, _ *callOpts) error {
	if method != "tools/call" {
		return fmt.Errorf("mcpkit/client: %s: a task result is not valid for this method", method)
	}
	t, err := newTask(c, method, raw)
	if err != nil {
		return err
	}
	final, err := t.Wait(ctx)
	if err != nil {
		return err
	}
	return decodeResult(method, final, res)
}

// ID returns the task id.
func (t *Task) ID() string { return t.state.TaskID }

// State returns the last state the server reported.
func (t *Task) State() TaskState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

// Get polls the task once (tasks/get) and answers its outstanding input requests (tasks/update).
func (t *Task) Get(ctx context.Context) (TaskState, error) {
	var st TaskState
	if err := t.c.call(ctx, "tasks/get", map[string]any{"taskId": t.state.TaskID}, &st, nil); err != nil {
		return TaskState{}, err
	}
	t.mu.Lock()
	t.state = st
	t.mu.Unlock()
	if st.Status == tasks.InputRequired {
		if err := t.answer(ctx, st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// answer fulfils the input requests not answered yet, with one tasks/update.
func (t *Task) answer(ctx context.Context, st TaskState) error {
	responses := map[string]any{}
	for key, req := range st.InputRequests {
		t.mu.Lock()
		done := t.answered[key]
		t.mu.Unlock()
		if done {
			continue
		}
		res, err := t.c.answer(ctx, req.Method, req.Params)
		if err != nil {
			return fmt.Errorf("mcpkit/client: task %s: input request %q (%s): %w", st.TaskID, key, req.Method, err)
		}
		responses[key] = res
	}
	if len(responses) == 0 {
		return nil
	}
	if err := t.c.call(ctx, "tasks/update", map[string]any{"taskId": st.TaskID, "inputResponses": responses}, nil, nil); err != nil {
		return err
	}
	t.mu.Lock()
	for key := range responses {
		t.answered[key] = true
	}
	t.mu.Unlock()
	return nil
}

// Wait polls the task until it ends, honouring the server's pollIntervalMs, and returns the raw
// final result. When ctx ends first the task is cancelled (tasks/cancel).
func (t *Task) Wait(ctx context.Context) (json.RawMessage, error) {
	st := t.State()
	for {
		switch st.Status {
		case tasks.Completed:
			if len(st.Result) == 0 {
				return nil, fmt.Errorf("mcpkit/client: task %s completed without a result", st.TaskID)
			}
			return st.Result, nil
		case tasks.Failed:
			if st.Error != nil {
				return nil, st.Error
			}
			return nil, fmt.Errorf("mcpkit/client: task %s failed: %s", st.TaskID, st.StatusMessage)
		case tasks.Cancelled:
			return nil, ErrTaskCancelled
		case tasks.InputRequired:
			if err := t.answer(ctx, st); err != nil {
				return nil, err
			}
		}
		wait := DefaultPollInterval
		if st.PollIntervalMs != nil {
			wait = max(time.Duration(*st.PollIntervalMs)*time.Millisecond, MinPollInterval)
		}
		if err := sleepCtx(ctx, wait); err != nil {
			t.cancelAfter()
			return nil, err
		}
		var err error
		if st, err = t.Get(ctx); err != nil {
			if ctx.Err() != nil {
				t.cancelAfter()
			}
			return nil, err
		}
	}
}

// cancelAfter cancels the task after the caller's context ended.
func (t *Task) cancelAfter() {
	ctx, cancel := context.WithTimeout(t.c.baseCtx, 5*time.Second)
	defer cancel()
	_ = t.Cancel(ctx)
}

// Cancel asks the server to cancel the task (tasks/cancel); cancellation is cooperative.
func (t *Task) Cancel(ctx context.Context) error {
	return t.c.call(ctx, "tasks/cancel", map[string]any{"taskId": t.state.TaskID}, nil, nil)
}

// Result waits for the end of a tool task and decodes the final CallToolResult.
func (t *Task) Result(ctx context.Context) (*core.CallToolResult, error) {
	raw, err := t.Wait(ctx)
	if err != nil {
		return nil, err
	}
	var res core.CallToolResult
	if err := decodeResult(t.method, raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
