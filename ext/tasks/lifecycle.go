package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ErrShutdown is the cause of a task's context when the extension shuts down (Shutdown): the
// process that runs the task's handler stops.
var ErrShutdown = errors.New("mcpkit: the server running the task shut down")

// Status messages of tasks that end without an outcome of their handler.
const (
	shutdownMessage = "The task failed: the server running it shut down before it finished"
	orphanMessage   = "The task failed: the replica running it stopped before it finished"
)

// Shutdown ends the tasks whose handler runs in this process: each handler's context ends with
// ErrShutdown and each task becomes failed, its statusMessage and error saying the server shut
// down (published to the listen streams that follow it), so that no client waits for work
// nobody does. From then on a call that would become a task is refused with -32603. ctx bounds
// the store writes; the errors of those that failed are returned together (such a task stays as
// it was until its TTL, or, on a shared store that watches its replicas, until this replica's
// lease lapses). Call it when the process stops serving, after the transport's Shutdown: a task's
// handler does not outlive its process. Calling it again ends nothing more.
func (x *Extension) Shutdown(ctx context.Context) error {
	x.mu.Lock()
	x.closed = true
	runs := make([]*run, 0, len(x.running))
	for _, r := range x.running {
		runs = append(runs, r)
	}
	x.mu.Unlock()
	var errs []error
	for _, r := range runs {
		r.end(ErrShutdown)
		if err := x.fail(ctx, r.id, shutdownMessage); err != nil {
			errs = append(errs, fmt.Errorf("mcpkit: task %s: recording the shutdown: %w", r.id, err))
		}
	}
	return errors.Join(errs...)
}

// fail makes an unfinished task failed with message (its statusMessage, and the detail of its
// -32603 error) and publishes the change. A task already finished, or gone, is left alone.
func (x *Extension) fail(ctx context.Context, id, message string) error {
	werr := jsonrpc.InternalError(message)
	t, err := x.opts.Store.Update(ctx, id, func(t *Task) error {
		if t.Status.Terminal() {
			return errSettled
		}
		t.Status, t.Error, t.Result, t.InputRequests = Failed, werr, nil, nil
		t.StatusMessage = message
		t.LastUpdatedAt = x.stamp()
		return nil
	})
	switch {
	case err == nil:
		x.notify(t)
	case errors.Is(err, errSettled), errors.Is(err, ErrNotFound):
	default:
		return err
	}
	return nil
}

// orphaned makes a task whose replica died failed (Supervisor.OnOrphaned).
func (x *Extension) orphaned(ctx context.Context, id string) error {
	if err := x.fail(ctx, id, orphanMessage); err != nil {
		return fmt.Errorf("mcpkit: task %s: recording that its replica stopped: %w", id, err)
	}
	return nil
}

// undelivered settles a tasks/update whose accepted answers reached no handler (err from
// deliver), so that none is lost in silence. When nobody runs the task (its replica is gone, as
// the store's Supervisor confirms, or there is no other replica to run it), the task becomes
// failed and the client is told so. When its replica lives but could not be reached, the
// answers are put back (the task asks for them again) and the client is told to send them
// again.
func (x *Extension) undelivered(ctx context.Context, before *Task, accepted map[string]json.RawMessage, err error) error {
	gone := errors.Is(err, ErrNotRunning)
	if sup, ok := x.opts.Store.(Supervisor); ok && gone {
		alive, aerr := sup.Alive(ctx, before)
		gone = aerr == nil && !alive
	}
	if gone {
		if ferr := x.fail(ctx, before.ID, orphanMessage); ferr != nil {
			x.logError(fmt.Errorf("mcpkit: task %s: recording that its replica stopped: %w", before.ID, ferr))
		}
		return jsonrpc.InternalError(orphanMessage + "; the input responses were not delivered")
	}
	if !errors.Is(err, ErrNotRunning) {
		x.logError(fmt.Errorf("mcpkit: task %s: signalling the replica that runs it: %w", before.ID, err))
	}
	t, rerr := x.opts.Store.Update(ctx, before.ID, func(t *Task) error {
		if t.Status.Terminal() {
			return errSettled
		}
		if t.InputRequests == nil {
			t.InputRequests = map[string]json.RawMessage{}
		}
		for k := range accepted {
			t.InputRequests[k] = before.InputRequests[k]
		}
		t.Status = InputRequired
		t.LastUpdatedAt = x.stamp()
		return nil
	})
	if rerr == nil {
		x.notify(t)
	}
	return core.WireError(err, "The replica running the task could not be reached: the input responses were not delivered; send them again")
}
