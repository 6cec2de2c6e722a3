package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// marshal encodes v as core does: map members sorted.
func marshal(v any) ([]byte, error) { return jsonv2.Marshal(v, jsonv2.Deterministic(true)) }

// taskTime formats a task timestamp (ISO 8601, UTC, milliseconds).
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// taskWire is a task on the wire: CreateTaskResult, the result of tasks/get and the params of
// notifications/tasks (DetailedTask).
type taskWire struct {
	ResultType     string                     `json:"resultType,omitzero"`
	TaskID         string                     `json:"taskId"`
	Status         Status                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitzero"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          *int64                     `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitzero"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitzero"`
	Result         json.RawMessage            `json:"result,omitzero"`
	Error          *jsonrpc.Error             `json:"error,omitzero"`
	Meta           map[string]json.RawMessage `json:"_meta,omitzero"`
}

func wireTask(t *Task, detailed bool) taskWire {
	w := taskWire{TaskID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: taskTime(t.CreatedAt), LastUpdatedAt: taskTime(t.LastUpdatedAt)}
	if t.TTL > 0 {
		ms := t.TTL.Milliseconds()
		w.TTLMs = &ms
	}
	if t.PollInterval > 0 {
		w.PollIntervalMs = max(t.PollInterval.Milliseconds(), 1)
	}
	if !detailed {
		return w
	}
	switch t.Status {
	case InputRequired:
		w.InputRequests = make(map[string]json.RawMessage, len(t.InputRequests))
		for k, v := range t.InputRequests {
			w.InputRequests[k] = v
		}
	case Completed:
		w.Result = t.Result
	case Failed:
		w.Error = t.Error
	}
	return w
}

func createResult(t *Task) taskWire {
	w := wireTask(t, false)
	w.ResultType = "task"
	return w
}

// emptyResult is the {} result of tasks/update and tasks/cancel.
type emptyResult struct{}

// params are the params of tasks/get, tasks/update and tasks/cancel.
type params struct {
	TaskID         jsontext.Value `json:"taskId"`
	InputResponses jsontext.Value `json:"inputResponses"`
}

// object reports whether v is a JSON object.
func object(v []byte) bool { return len(v) > 0 && jsontext.Value(v).Kind() == '{' }

// lookup reads the params of a tasks/* request and finds its task: -32021 first when the client
// did not declare the extension, then -32602 for a malformed, unknown, expired or foreign task
// id.
func (x *Extension) lookup(ctx context.Context, c *core.Call) (*Task, *params, error) {
	if !declared(c) {
		return nil, nil, missingExtension()
	}
	var p params
	if !object(c.Params()) || jsonv2.Unmarshal(c.Params(), &p) != nil {
		return nil, nil, jsonrpc.InvalidParams("Invalid params")
	}
	var id string
	if p.TaskID.Kind() != '"' || jsonv2.Unmarshal(p.TaskID, &id) != nil || id == "" {
		return nil, nil, jsonrpc.InvalidParams("Missing or invalid taskId")
	}
	t, err := x.opts.Store.Get(ctx, id)
	if err == nil && !sameOwner(ctx, t) {
		err = ErrNotFound // another principal's task does not exist for this caller
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
		}
		x.logError(fmt.Errorf("mcpkit: reading task: %w", err))
		return nil, nil, core.WireError(err, "Internal error reading the task")
	}
	return t, &p, nil
}

// sameOwner reports whether the request's principal owns t. A task created without a principal
// belongs to callers without one (its id is the only key); it is never another principal's.
func sameOwner(ctx context.Context, t *Task) bool {
	p, _ := core.PrincipalFrom(ctx)
	return p == t.Owner
}

func (x *Extension) handleGet(ctx context.Context, c *core.Call) (any, error) {
	t, _, err := x.lookup(ctx, c)
	if err != nil {
		return nil, err
	}
	return wireTask(t, true), nil
}

var errNothingAccepted = errors.New("mcpkit: no outstanding input request answered")

func (x *Extension) handleUpdate(ctx context.Context, c *core.Call) (any, error) {
	t, p, err := x.lookup(ctx, c)
	if err != nil {
		return nil, err
	}
	var responses map[string]json.RawMessage
	if p.InputResponses != nil && (!object(p.InputResponses) || jsonv2.Unmarshal(p.InputResponses, &responses) != nil) {
		return nil, jsonrpc.InvalidParams("inputResponses must be an object")
	}
	if len(responses) == 0 || t.Status != InputRequired {
		return emptyResult{}, nil
	}
	accepted := map[string]json.RawMessage{}
	updated, uerr := x.opts.Store.Update(ctx, t.ID, func(t *Task) error {
		clear(accepted)
		for k, v := range responses {
			if _, outstanding := t.InputRequests[k]; !outstanding {
				continue // unknown, already answered or superseded: ignored
			}
			if !core.ValidInputResponse(v) {
				return jsonrpc.InvalidParams(fmt.Sprintf("inputResponses[%q] is not a result of elicitation/create, sampling/createMessage or roots/list", k))
			}
			accepted[k] = v
		}
		if len(accepted) == 0 {
			return errNothingAccepted
		}
		for k := range accepted {
			delete(t.InputRequests, k)
		}
		if len(t.InputRequests) == 0 && t.Status == InputRequired {
			t.Status = Working
		}
		t.LastUpdatedAt = x.stamp()
		return nil
	})
	var we *jsonrpc.Error
	switch {
	case uerr == nil:
		if derr := x.deliver(ctx, t.ID, accepted); derr != nil {
			return nil, x.undelivered(ctx, t, accepted, derr)
		}
		x.notify(updated)
	case errors.As(uerr, &we):
		return nil, we
	case errors.Is(uerr, errNothingAccepted), errors.Is(uerr, ErrNotFound):
	default:
		x.logError(fmt.Errorf("mcpkit: updating task: %w", uerr))
		return nil, core.WireError(uerr, "Internal error updating the task")
	}
	return emptyResult{}, nil
}

func (x *Extension) handleCancel(ctx context.Context, c *core.Call) (any, error) {
	t, _, err := x.lookup(ctx, c)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return emptyResult{}, nil // idempotent
	}
	updated, uerr := x.opts.Store.Update(ctx, t.ID, func(t *Task) error {
		if t.Status.Terminal() {
			return errSettled
		}
		t.Status, t.InputRequests = Cancelled, nil
		t.StatusMessage = "Cancelled by the client"
		t.LastUpdatedAt = x.stamp()
		return nil
	})
	switch {
	case uerr == nil:
		x.cancel(ctx, t.ID)
		x.notify(updated)
	case errors.Is(uerr, errSettled), errors.Is(uerr, ErrNotFound):
	default:
		x.logError(fmt.Errorf("mcpkit: cancelling task: %w", uerr))
		return nil, core.WireError(uerr, "Internal error cancelling the task")
	}
	return emptyResult{}, nil
}
