package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// run is a task whose handler runs in this process. It is the core.InputAsker of the detached
// call the handler sees: once the task is started, the handler's server-to-client requests
// become input requests of the task.
type run struct {
	x    *Extension
	call *core.Call // the detached call the handler sees
	end  context.CancelCauseFunc
	id   string

	startReq chan chan error // deferred mode: the handler asks to become a task

	mu      sync.Mutex
	started bool
	seq     int
	waiting map[string]chan json.RawMessage // outstanding input requests, by key

	stopWatch func() // ends the Signaler watch, when the store has one
	stopOnce  sync.Once
}

// newRun makes the run of a tools/call that may become a task: the detached call its handler
// sees has a context that outlives the request, ended by tasks/cancel, the TTL or the end of the
// handler.
func (x *Extension) newRun(c *core.Call) *run {
	r := &run{x: x, id: uuid.NewString(), waiting: map[string]chan json.RawMessage{}}
	ctx := context.WithoutCancel(c.Context())
	stopTTL := func() {}
	if ttl := x.opts.TTL; ttl > 0 {
		ctx, stopTTL = context.WithDeadlineCause(ctx, time.Now().Add(ttl), errExpired)
	}
	ctx = context.WithValue(ctx, runKey{}, r)
	call, end := c.Detach(ctx, r)
	r.call = call
	r.end = func(cause error) { end(cause); stopTTL() }
	return r
}

// Asking implements core.InputAsker: the task's requests are its own once it is started.
func (r *run) Asking() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// execute runs the handler of a task created before it ran, and settles the task.
func (r *run) execute(exec func() (any, error)) {
	res, err := exec()
	r.settle(exec, res, err)
}

// settle takes the handler's outcome: an InputRequiredError becomes input requests of the task
// and the handler runs again with the answers; anything else is the task's final state.
func (r *run) settle(exec func() (any, error), res any, err error) {
	res, err = r.call.Resolve(res, err, exec)
	r.finish(res, err)
}

// finish records the final state of the task (unless it already has one, such as cancelled).
func (r *run) finish(res any, err error) {
	x, tc := r.x, r.call
	defer func() {
		r.end(nil)
		x.forget(r)
	}()
	cause := context.Cause(tc.Context())
	status, payload := Completed, json.RawMessage(nil)
	var werr *jsonrpc.Error
	switch {
	case errors.Is(cause, ErrCancelled):
		status = Cancelled
	case errors.Is(cause, errExpired):
		return // the task is gone
	case errors.Is(cause, ErrShutdown):
		status, werr = Failed, jsonrpc.InternalError(shutdownMessage)
	case err != nil:
		status, werr = Failed, core.WireError(err, "Internal error calling tool")
	default:
		b, merr := tc.EncodeResult(res)
		if merr != nil {
			x.logError(fmt.Errorf("mcpkit: task %s: encoding the result: %w", r.id, merr))
			status, werr = Failed, jsonrpc.InternalError("Internal error calling tool")
			break
		}
		payload = b
	}
	t, uerr := x.opts.Store.Update(context.WithoutCancel(tc.Context()), r.id, func(t *Task) error {
		if t.Status.Terminal() {
			return errSettled
		}
		t.Status, t.Result, t.Error, t.InputRequests = status, payload, werr, nil
		switch {
		case errors.Is(cause, ErrShutdown):
			t.StatusMessage = shutdownMessage
		case werr != nil:
			t.StatusMessage = failedMessage(werr)
		}
		t.LastUpdatedAt = x.stamp()
		return nil
	})
	switch {
	case uerr == nil:
		x.notify(t)
	case errors.Is(uerr, errSettled), errors.Is(uerr, ErrNotFound):
	default:
		x.logError(fmt.Errorf("mcpkit: task %s: recording its outcome: %w", r.id, uerr))
	}
}

var errSettled = errors.New("mcpkit: task already settled")

// failedMessage is the statusMessage of a failed task: what went wrong, from its JSON-RPC error
// (code, message and detail), as SEP-2663 asks of a task whose execution failed.
func failedMessage(e *jsonrpc.Error) string {
	return "The tool call failed: " + e.Error()
}

// AskInput implements core.InputAsker: it adds requests to the task's input requests under keys
// unique over the task's life, and waits for the answers to all of them. The answers come back
// under the caller's keys.
func (r *run) AskInput(ctx context.Context, reqs map[string]core.InputRequest) (map[string]json.RawMessage, error) {
	tc := r.call
	keyOf := make(map[string]string, len(reqs)) // task key -> caller key
	encoded := make(map[string]json.RawMessage, len(reqs))
	chans := make(map[string]chan json.RawMessage, len(reqs))
	r.mu.Lock()
	for k, req := range reqs {
		r.seq++
		tk := inputKey(req.Method, k, r.seq)
		b, err := marshal(req)
		if err != nil {
			r.mu.Unlock()
			return nil, fmt.Errorf("mcpkit: encoding the %s input request: %w", req.Method, err)
		}
		keyOf[tk], encoded[tk] = k, b
		ch := make(chan json.RawMessage, 1)
		chans[tk] = ch
		r.waiting[tk] = ch
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		for tk := range chans {
			delete(r.waiting, tk)
		}
		r.mu.Unlock()
	}()
	x := r.x
	t, err := x.opts.Store.Update(tc.Context(), r.id, func(t *Task) error {
		if t.Status.Terminal() {
			return errSettled
		}
		if t.InputRequests == nil {
			t.InputRequests = map[string]json.RawMessage{}
		}
		for tk, b := range encoded {
			t.InputRequests[tk] = b
		}
		t.Status = InputRequired
		t.LastUpdatedAt = x.stamp()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mcpkit: task %s: asking for input: %w", r.id, err)
	}
	x.notify(t)
	out := make(map[string]json.RawMessage, len(reqs))
	for tk, ch := range chans {
		select {
		case v := <-ch:
			out[keyOf[tk]] = v
		case <-tc.Context().Done():
			return nil, fmt.Errorf("input request of task %s ended: %w", r.id, context.Cause(tc.Context()))
		case <-ctx.Done():
			return nil, fmt.Errorf("input request of task %s ended: %w", r.id, context.Cause(ctx))
		}
	}
	return out, nil
}

// inputKey names an input request of a task: the caller's key when it has one, made unique by
// the task's sequence number (keys are never reused over a task's life).
func inputKey(method, key string, seq int) string {
	if key == "" {
		switch method {
		case "elicitation/create":
			key = "elicitation"
		case "sampling/createMessage":
			key = "sampling"
		case "roots/list":
			key = "roots"
		default:
			key = "input"
		}
	}
	return key + "-" + strconv.Itoa(seq)
}

// deliver hands accepted answers to the task's handler, wherever it runs. It returns
// ErrNotRunning when no process runs the handler (none in this one, and the store carries no
// signals or none took this one), or the error of the signal.
func (x *Extension) deliver(ctx context.Context, id string, answers map[string]json.RawMessage) error {
	if r := x.local(id); r != nil {
		r.signal(Signal{Answers: answers})
		return nil
	}
	sg, ok := x.opts.Store.(Signaler)
	if !ok {
		return ErrNotRunning
	}
	return sg.Signal(ctx, id, Signal{Answers: answers})
}

// cancel ends the context of the task's handler, wherever it runs.
func (x *Extension) cancel(ctx context.Context, id string) {
	if r := x.local(id); r != nil {
		r.signal(Signal{Cancel: true})
		return
	}
	x.relay(ctx, id, Signal{Cancel: true})
}

// relay sends a signal to the replica running the task, when the store is shared (a task
// nobody runs has nothing to signal).
func (x *Extension) relay(ctx context.Context, id string, sig Signal) {
	sg, ok := x.opts.Store.(Signaler)
	if !ok {
		return
	}
	if err := sg.Signal(ctx, id, sig); err != nil && !errors.Is(err, ErrNotRunning) {
		x.logError(fmt.Errorf("mcpkit: task %s: signalling the replica that runs it: %w", id, err))
	}
}

// signal applies a signal to the task's handler: answers go to the input requests waiting for
// them, a cancellation ends its context.
func (r *run) signal(sig Signal) {
	if sig.Cancel {
		r.end(ErrCancelled)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range sig.Answers {
		if ch, ok := r.waiting[k]; ok {
			select {
			case ch <- v:
			default:
			}
		}
	}
}

// Signal is what a tasks/update or tasks/cancel served by one replica tells the replica that
// runs the task's handler.
type Signal struct {
	// Cancel asks the handler to stop (its context ends with ErrCancelled).
	Cancel bool `json:"cancel,omitzero"`
	// Answers are input responses the store accepted, by input request key.
	Answers map[string]json.RawMessage `json:"answers,omitzero"`
}

// Signaler is implemented by a Store shared between replicas: it carries signals to the replica
// running a task's handler. The extension watches each task whose handler it runs, from before
// the task is announced until the handler ends, and signals a task it does not run. Delivery may
// be at most once: a lost answer leaves the task waiting until its TTL.
type Signaler interface {
	// Watch calls f with every signal sent for task id until stop is called. f must return
	// quickly.
	Watch(ctx context.Context, id string, f func(Signal)) (stop func(), err error)
	// Signal sends sig to the replicas watching task id. It returns ErrNotRunning when none
	// received it.
	Signal(ctx context.Context, id string, sig Signal) error
}

// ErrNotRunning is returned by Signaler.Signal when no replica watches the task: nobody runs
// its handler.
var ErrNotRunning = errors.New("mcpkit: no replica runs the task")

// Supervisor is implemented by a Store shared between replicas that knows whether the replica
// running a task's handler (Task.Runner) is alive, and finds the unfinished tasks of a replica
// that died. The extension makes such tasks failed (statusMessage: the replica running it
// stopped), so that no client waits for a task nobody runs.
type Supervisor interface {
	// Alive reports whether the replica running t's handler is alive (true for a task without
	// Runner).
	Alive(ctx context.Context, t *Task) (bool, error)
	// OnOrphaned registers f, which one surviving replica calls with the id of each unfinished
	// task whose replica died (at most once per task, give or take a replica dying meanwhile:
	// f must be idempotent); when f fails for a task, the store calls it again later. New
	// registers the extension's.
	OnOrphaned(f func(ctx context.Context, id string) error)
}
