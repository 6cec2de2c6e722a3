// Package tasks is the tasks extension (SEP-2663) of an MCP server: a tool declares its task
// support in Tool.Execution; when a 2026-07-28 request to such a tool names the extension in its
// _meta client capabilities, the server answers with a task handle (resultType "task") and runs
// the same handler in the background. The client polls tasks/get, answers input requests with
// tasks/update and may cancel with tasks/cancel; subscriptions/listen streams that name a task
// in their taskIds filter get its notifications/tasks. Inside a task, Elicit, CreateMessage and
// ListRoots (and an InputRequiredError returned by the handler) move the task to input_required
// until the client answers through tasks/update; progress and log messages are not sent.
//
// Give the extension to the server, then register tools that support tasks:
//
//	srv := core.NewServer(impl, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{})}})
//	srv.AddTool(&core.Tool{Name: "reindex", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
//		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
//			return core.TextResult("reindexed"), nil // runs as a task when the client asks for one
//		})
//
// The extension is offered (capabilities.extensions of server/discover) once a tool supports
// tasks, whoever asks: capabilities are the server's, the same for every caller (core's Offered
// has no request to judge by), so a caller from whom every task-capable tool is hidden (see
// core.Visibility) still sees the extension offered, though no tool it may call runs as a task.
// Tasks are kept in a Store: in memory by default, shared between replicas with
// redisstore.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ExtensionID is the extension identifier of tasks, its key in capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/tasks"

// StatusNotification is the notification carrying a task's state to the subscriptions/listen
// streams that named the task.
const StatusNotification = "notifications/tasks"

// Task support values of core.ToolExecution.TaskSupport.
const (
	SupportForbidden = "forbidden"
	SupportOptional  = "optional"
	SupportRequired  = "required"
)

// Options configure the tasks extension. The zero value is the secure default.
type Options struct {
	// Store keeps the tasks. Nil means an in-memory store (NewMemoryStore).
	Store Store
	// TTL is how long a task (and its result) stays readable after its creation. Zero means
	// DefaultTTL (one hour); a negative value keeps tasks without limit (ttlMs null).
	TTL time.Duration
	// PollInterval is the pollIntervalMs suggested to clients. Zero means DefaultPollInterval
	// (one second); a negative value suggests none.
	PollInterval time.Duration
	// MaxTasks caps the tasks stored at once, finished ones included. Zero means
	// DefaultMaxTasks (10000); negative removes the cap. At it, the caller's own finished task
	// that expires first is evicted; a caller with none is refused with -32603 "Server busy".
	MaxTasks int
	// MaxTasksPerPrincipal caps the tasks one principal has stored at once, finished ones
	// included (its share: no caller can use up MaxTasks). Zero means
	// DefaultMaxTasksPerPrincipal (100); negative removes the cap. At it, the principal's
	// finished task that expires first is evicted (its result is gone, as after its TTL); only a
	// principal with that many unfinished tasks is refused with -32603 "Server busy".
	MaxTasksPerPrincipal int
	// MaxListenIDs caps the taskIds one subscriptions/listen filter may name: a filter naming
	// more is refused with -32602 before any is looked up, and the ids of one that does not are
	// read in one batch (Store.GetMany). Zero means DefaultMaxListenIDs (1000); New panics on a
	// negative value.
	MaxListenIDs int
	// Deferred names tools (supporting tasks) whose calls run as ordinary requests until their
	// handler calls RunAsTask: the handler may first answer synchronously (a result, or an
	// input_required round trip) and become a task only once it has what it needs. The calls of
	// other tools become tasks before their handler runs. Nil defers none.
	Deferred []string
	// Now, when set, replaces time.Now for task timestamps and for the default store's expiry
	// (for tests).
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultTTL                  = time.Hour
	DefaultPollInterval         = time.Second
	DefaultMaxTasks             = 10000
	DefaultMaxTasksPerPrincipal = 100
	DefaultMaxListenIDs         = 1000
)

// ErrCancelled is the cause of a task's context cancelled by tasks/cancel.
var ErrCancelled = errors.New("mcpkit: task cancelled by the client")

// errExpired is the cause of a task's context at its TTL.
var errExpired = errors.New("mcpkit: task expired")

// Extension is the tasks extension of one server (New): give it to core.Options.Extensions.
type Extension struct {
	opts     Options
	deferred map[string]bool

	server atomic.Pointer[core.Server]

	toolsMu   sync.Mutex
	taskTools map[string]bool // tools that may run as tasks
	offered   atomic.Bool

	mu      sync.Mutex
	running map[string]*run // tasks whose handler runs in this process
	closed  bool            // Shutdown ran: no task starts any more
}

// New returns the tasks extension configured by opts (the zero Options is the documented
// default).
func New(opts Options) *Extension {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Store == nil {
		opts.Store = NewMemoryStore(opts.Now)
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxTasks == 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.MaxTasksPerPrincipal == 0 {
		opts.MaxTasksPerPrincipal = DefaultMaxTasksPerPrincipal
	}
	if opts.MaxListenIDs < 0 {
		panic("tasks: Options.MaxListenIDs must be >= 0")
	}
	if opts.MaxListenIDs == 0 {
		opts.MaxListenIDs = DefaultMaxListenIDs
	}
	x := &Extension{opts: opts, deferred: map[string]bool{}, taskTools: map[string]bool{}, running: map[string]*run{}}
	for _, name := range opts.Deferred {
		x.deferred[name] = true
	}
	if sup, ok := opts.Store.(Supervisor); ok {
		sup.OnOrphaned(x.orphaned)
	}
	return x
}

// Store returns the extension's task store (Options.Store, or the in-memory one).
func (x *Extension) Store() Store { return x.opts.Store }

// Bind implements core.Extension. It panics when the extension is bound to a second server.
func (x *Extension) Bind(s *core.Server) core.ExtensionSpec {
	if !x.server.CompareAndSwap(nil, s) {
		panic("tasks: the extension is bound to a server already: give each server its own tasks.New")
	}
	return core.ExtensionSpec{
		ID:         ExtensionID,
		Name:       "tasks",
		Offered:    x.offered.Load,
		ModernOnly: true, // SEP-2663: an extension of the 2026-07-28 lifecycle only
		Methods: []core.ExtensionMethod{
			{Method: "tasks/get", Handle: x.handleGet},
			{Method: "tasks/update", Handle: x.handleUpdate},
			{Method: "tasks/cancel", Handle: x.handleCancel},
		},
		Tools:    x.toolChanged,
		CallTool: x.callTool,
		Listen:   &core.ListenMember{Name: "taskIds", Method: StatusNotification, Admit: x.admit},
	}
}

// support returns a tool's task support ("" when it declares none).
func support(t *core.Tool) string {
	if t.Execution == nil {
		return ""
	}
	return t.Execution.TaskSupport
}

// toolChanged checks a tool's task support and keeps count of the tools that may run as tasks,
// hidden ones included: offered is the server's, not one caller's (see the package doc).
func (x *Extension) toolChanged(t *core.Tool, removed bool) error {
	sup := support(t)
	switch sup {
	case "", SupportForbidden, SupportOptional, SupportRequired:
	default:
		return fmt.Errorf("Execution.TaskSupport %q must be %q, %q or %q", sup, SupportForbidden, SupportOptional, SupportRequired)
	}
	x.toolsMu.Lock()
	defer x.toolsMu.Unlock()
	if removed || (sup != SupportOptional && sup != SupportRequired) {
		delete(x.taskTools, t.Name)
	} else {
		x.taskTools[t.Name] = true
	}
	x.offered.Store(len(x.taskTools) > 0)
	return nil
}

// missingExtension is -32021 naming the tasks extension.
func missingExtension() *jsonrpc.Error {
	return core.MissingCapabilities(map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}})
}

// declared reports whether the request is a 2026-07-28 one that declares the extension.
func declared(c *core.Call) bool {
	return c.Modern() != nil && c.ClientCapabilities().Has("extensions", ExtensionID)
}

// callTool is the tools/call hook: a call of a tool that supports tasks, from a client that
// declared the extension, becomes a task; one of a tool that requires a task, from a client that
// did not, is -32021.
func (x *Extension) callTool(tc *core.ToolCall) (any, bool, error) {
	sup := support(tc.Tool)
	if sup == "" || sup == SupportForbidden {
		return nil, false, nil
	}
	if !declared(tc.Call) {
		if sup == SupportRequired {
			return nil, true, missingExtension()
		}
		return nil, false, nil
	}
	if bad := tc.Check(); bad != nil {
		return bad, true, nil
	}
	res, err := x.callAsTask(tc)
	return res, true, err
}

// runKey finds the task a handler's context belongs to.
type runKey struct{}

func runFrom(ctx context.Context) *run {
	r, _ := ctx.Value(runKey{}).(*run)
	return r
}

// RunAsTask turns the call whose handler has ctx into a task now, when it can be one: a
// tools/call of a tool named in Options.Deferred, from a 2026-07-28 client that declared the
// tasks extension. The client is answered with the task handle and the handler goes on in the
// background. It reports whether the call is a task (true at once for a task created before the
// handler ran); false means the call goes on as an ordinary request (or, when the task could not
// be stored, that the client was answered with the error and the handler should return).
func RunAsTask(ctx context.Context) bool {
	r := runFrom(ctx)
	if r == nil {
		return false
	}
	if r.Asking() {
		return true
	}
	if r.startReq == nil {
		return false
	}
	reply := make(chan error, 1)
	select {
	case r.startReq <- reply:
	case <-ctx.Done():
		return false
	}
	return <-reply == nil
}

// ID returns the id of the task the handler whose context is ctx runs as, or "" when it is not
// a task.
func ID(ctx context.Context) string {
	r := runFrom(ctx)
	if r == nil || !r.Asking() {
		return ""
	}
	return r.id
}

// callAsTask serves a tools/call that may become a task.
func (x *Extension) callAsTask(tc *core.ToolCall) (any, error) {
	c := tc.Call
	r := x.newRun(c)
	exec := func() (any, error) { return tc.Run(r.call) }
	if !x.deferred[tc.Tool.Name] {
		t, err := x.create(c, r)
		if err != nil {
			r.end(err)
			return nil, err
		}
		go r.execute(exec)
		return createResult(t), nil
	}
	// Deferred: the handler runs as an ordinary request until it asks to become a task.
	r.startReq = make(chan chan error)
	type outcome struct {
		res any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := exec()
		if r.Asking() {
			r.settle(exec, res, err)
			return
		}
		done <- outcome{res, err}
	}()
	for {
		select {
		case o := <-done:
			r.end(nil)
			// An InputRequiredError goes back to the client as the request's own round trip; the
			// retry will bring the answers to a fresh call.
			return o.res, o.err
		case reply := <-r.startReq:
			t, err := x.create(c, r)
			reply <- err
			if err != nil {
				r.end(err)
				return nil, err
			}
			return createResult(t), nil
		case <-c.Context().Done():
			r.end(context.Cause(c.Context()))
			o := <-done // the handler sees its context end and returns
			return o.res, o.err
		}
	}
}

// create stores the task of r (owned by the request's principal) and registers its handler.
func (x *Extension) create(c *core.Call, r *run) (*Task, error) {
	ctx := c.Context()
	owner, _ := core.PrincipalFrom(ctx)
	now := x.stamp()
	t := &Task{ID: r.id, Owner: owner, Status: Working, CreatedAt: now, LastUpdatedAt: now}
	if x.opts.TTL > 0 {
		t.TTL = x.opts.TTL
	}
	if x.opts.PollInterval > 0 {
		t.PollInterval = x.opts.PollInterval
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil, jsonrpc.InternalError("Server shutting down: no task can start; try again later")
	}
	x.running[r.id] = r
	x.mu.Unlock()
	if sg, ok := x.opts.Store.(Signaler); ok {
		// Watch before the task exists anywhere: a cancel or an answer from another replica
		// can come as soon as the client has the id.
		stop, err := sg.Watch(ctx, r.id, r.signal)
		if err != nil {
			x.forget(r)
			x.logError(fmt.Errorf("mcpkit: watching a task: %w", err))
			return nil, core.WireError(err, "Internal error creating a task")
		}
		r.stopWatch = stop
	}
	err := x.opts.Store.Create(ctx, t, Limits{MaxTasks: x.opts.MaxTasks, MaxPerOwner: x.opts.MaxTasksPerPrincipal})
	if err != nil {
		x.forget(r)
		if errors.Is(err, ErrLimit) {
			return nil, jsonrpc.InternalError("Server busy: too many live tasks; try again later")
		}
		x.logError(fmt.Errorf("mcpkit: storing a task: %w", err))
		return nil, core.WireError(err, "Internal error creating a task")
	}
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	x.notify(t)
	return t, nil
}

func (x *Extension) forget(r *run) {
	r.stopOnce.Do(func() {
		if r.stopWatch != nil {
			r.stopWatch()
		}
	})
	x.mu.Lock()
	if x.running[r.id] == r {
		delete(x.running, r.id)
	}
	x.mu.Unlock()
}

func (x *Extension) local(id string) *run {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.running[id]
}

// logError logs on the server's logger.
func (x *Extension) logError(err error) {
	if s := x.server.Load(); s != nil {
		s.LogError(err)
	}
}

// notify publishes the task's new state to the subscriptions/listen streams that asked for it
// (through the broadcaster, so streams on every replica get it): notifications/tasks with the
// complete DetailedTask, as tasks/get would answer at that moment.
func (x *Extension) notify(t *Task) {
	s := x.server.Load()
	if s == nil {
		return // not bound to a server yet: no listen stream can follow the task
	}
	b, err := marshal(wireTask(t, true))
	if err != nil {
		s.LogError(fmt.Errorf("mcpkit: encoding the notification of task %s: %w", t.ID, err))
		return
	}
	c := core.Change{Method: StatusNotification, Key: t.ID, Params: json.RawMessage(b)}
	if err := s.Broadcaster().Publish(context.Background(), c); err != nil {
		s.LogError(fmt.Errorf("mcpkit: publishing the notification of task %s: %w", t.ID, err))
	}
}

// stamp is the time of a task change, in milliseconds.
func (x *Extension) stamp() time.Time { return x.opts.Now().UTC().Truncate(time.Millisecond) }

// admit is the listen hook: the requested taskIds that name tasks of the request's principal
// (unknown, expired and other principals' ids are left out, as if they did not exist), read in
// one batch. Asking for taskIds without declaring the extension is -32021; naming more than
// MaxListenIDs distinct ids is -32602.
func (x *Extension) admit(ctx context.Context, env *core.Envelope, ids []string) ([]string, error) {
	if env == nil || !env.ClientCapabilities.Has("extensions", ExtensionID) {
		return nil, missingExtension()
	}
	if !x.offered.Load() {
		return nil, nil
	}
	owner, _ := core.PrincipalFrom(ctx)
	n := min(len(ids), x.opts.MaxListenIDs+1)
	seen := make(map[string]bool, n)
	unique := make([]string, 0, n)
	for _, id := range ids {
		if seen[id] {
			continue
		}
		if len(unique) == x.opts.MaxListenIDs {
			return nil, jsonrpc.InvalidParams(fmt.Sprintf("taskIds names more than %d tasks (tasks.Options.MaxListenIDs)", x.opts.MaxListenIDs))
		}
		seen[id] = true
		unique = append(unique, id)
	}
	found, err := x.opts.Store.GetMany(ctx, unique)
	if err != nil {
		x.logError(fmt.Errorf("mcpkit: reading listened tasks: %w", err))
		return nil, core.WireError(err, "Internal error reading the tasks")
	}
	var out []string
	for _, id := range unique {
		if t := found[id]; t != nil && t.Owner == owner {
			out = append(out, id)
		}
	}
	return out, nil
}
