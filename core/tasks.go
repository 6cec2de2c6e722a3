package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
)

// The tasks extension (SEP-2663). A tool declares its task support in Tool.Execution; when a
// 2026-07-28 request to such a tool names the extension in its _meta client capabilities, the
// server answers with a task handle (resultType "task") and runs the same handler in the
// background. The client polls tasks/get, answers input requests with tasks/update and may
// cancel with tasks/cancel. Inside a task, Elicit, CreateMessage and ListRoots (and an
// InputRequiredError returned by the handler) move the task to input_required until the client
// answers through tasks/update; progress and log messages are not sent.

// TasksExtension is the extension identifier of tasks.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task support values of ToolExecution.TaskSupport.
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// ToolExecution describes how a tool runs.
type ToolExecution struct {
	// TaskSupport is "forbidden" (the default when empty: always a plain call), "optional" (a
	// task for clients that declare the tasks extension, a plain call otherwise) or "required"
	// (clients without the extension get -32021). AddTool panics on any other value.
	TaskSupport string `json:"taskSupport,omitzero"`
	// Deferred, for a tool that supports tasks, runs a call as an ordinary request until its
	// handler calls Call.RunAsTask: the handler may first answer synchronously (a result, or an
	// input_required round trip) and become a task only once it has what it needs. Without it
	// the task is created before the handler runs.
	Deferred bool `json:"-"`
}

// TaskOptions configure the tasks extension. The zero value is the secure default.
type TaskOptions struct {
	// Store keeps the tasks. Nil means an in-memory store (NewMemoryTaskStore).
	Store TaskStore
	// TTL is how long a task (and its result) stays readable after its creation. Zero means
	// DefaultTaskTTL (one hour); a negative value keeps tasks without limit (ttlMs null).
	TTL time.Duration
	// PollInterval is the pollIntervalMs suggested to clients. Zero means
	// DefaultTaskPollInterval (one second); a negative value suggests none.
	PollInterval time.Duration
	// MaxTasks caps the tasks stored at once. Zero means DefaultMaxTasks (10000); negative
	// removes the cap. Past it, a call that would become a task is refused with -32603.
	MaxTasks int
	// MaxTasksPerPrincipal caps the tasks of one principal that are not yet terminal. Zero means
	// DefaultMaxTasksPerPrincipal (100); negative removes the cap.
	MaxTasksPerPrincipal int
	// Now, when set, replaces time.Now for task timestamps and for the default store's expiry
	// (for tests).
	Now func() time.Time
}

// Defaults of TaskOptions.
const (
	DefaultTaskTTL              = time.Hour
	DefaultTaskPollInterval     = time.Second
	DefaultMaxTasks             = 10000
	DefaultMaxTasksPerPrincipal = 100
)

// maxTaskInputRounds bounds how often a task's handler may return InputRequiredError.
const maxTaskInputRounds = 64

// ErrTaskCancelled is the cause of a task's context cancelled by tasks/cancel.
var ErrTaskCancelled = errors.New("mcpkit: task cancelled by the client")

// errTaskExpired is the cause of a task's context at its TTL.
var errTaskExpired = errors.New("mcpkit: task expired")

func (o *TaskOptions) normalize() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Store == nil {
		o.Store = NewMemoryTaskStore(o.Now)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTaskTTL
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultTaskPollInterval
	}
	if o.MaxTasks == 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.MaxTasksPerPrincipal == 0 {
		o.MaxTasksPerPrincipal = DefaultMaxTasksPerPrincipal
	}
}

// taskManager holds the handlers of the tasks running in this process.
type taskManager struct {
	server *Server
	opts   TaskOptions

	mu      sync.Mutex
	running map[string]*taskRun
}

func newTaskManager(s *Server, opts TaskOptions) *taskManager {
	opts.normalize()
	return &taskManager{server: s, opts: opts, running: map[string]*taskRun{}}
}

// Tasks returns the server's task store.
func (s *Server) Tasks() TaskStore { return s.tasks.opts.Store }

// offersTasks reports whether any tool supports tasks (the extension is then advertised).
func (s *Server) offersTasks() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.taskTools > 0
}

// taskRun is a task whose handler runs in this process.
type taskRun struct {
	m    *taskManager
	call *Call // the detached call the handler sees
	id   string

	startReq chan chan error // deferred mode: the handler asks to become a task
	started  bool            // guarded by mu

	mu      sync.Mutex
	seq     int
	waiting map[string]chan json.RawMessage // outstanding input requests, by key

	stopWatch func() // ends the TaskSignaler watch, when the store has one
	stopOnce  sync.Once
}

// detach makes the call a task's handler sees: the same request (params, envelope, retry
// responses), a context that outlives the request (ended by tasks/cancel, the TTL or the end of
// the handler) and a path that takes no notifications.
func (c *Call) detach(run *taskRun) {
	c.Meta("") // read _meta once, so the copy shares it
	tc := &Call{session: c.session, msg: c.msg, id: c.id, method: c.method, params: c.params,
		out: discardSender{}, handler: c.handler, modern: c.modern, inputResponses: c.inputResponses,
		requestState: c.requestState, hasState: c.hasState, meta: c.meta, task: run}
	tc.metaOnce.Do(func() {})
	base := context.WithoutCancel(c.ctx)
	tc.ctx, tc.cancelFn = context.WithCancelCause(base)
	if ttl := run.m.opts.TTL; ttl > 0 {
		var cancelT context.CancelFunc
		tc.ctx, cancelT = context.WithDeadlineCause(tc.ctx, time.Now().Add(ttl), errTaskExpired)
		inner := tc.cancelFn
		tc.cancelFn = func(cause error) { inner(cause); cancelT() }
	}
	tc.ctx = context.WithValue(tc.ctx, callKey{}, tc)
	run.call = tc
}

// discardSender drops what a task's handler sends: tasks carry no progress or log messages.
type discardSender struct{}

func (discardSender) Send(context.Context, []byte) error { return nil }

// RunAsTask turns the call into a task now, when it can be one: a tools/call of a tool declared
// with ToolExecution.Deferred, from a 2026-07-28 client that declared the tasks extension. The
// client is answered with the task handle and the handler goes on in the background. It reports
// whether the call is a task (true at once for a task created before the handler ran); false
// means the call goes on as an ordinary request (or, when the task could not be stored, that the
// client was answered with the error and the handler should return).
func (c *Call) RunAsTask() bool {
	run := c.task
	if run == nil {
		return false
	}
	run.mu.Lock()
	started := run.started
	run.mu.Unlock()
	if started {
		return true
	}
	if run.startReq == nil {
		return false
	}
	reply := make(chan error, 1)
	select {
	case run.startReq <- reply:
	case <-c.ctx.Done():
		return false
	}
	return <-reply == nil
}

// TaskID returns the id of the task the call runs as, or "" when it is not a task.
func (c *Call) TaskID() string {
	if c.task == nil {
		return ""
	}
	c.task.mu.Lock()
	defer c.task.mu.Unlock()
	if !c.task.started {
		return ""
	}
	return c.task.id
}

// taskEligible reports whether a tools/call of e may become a task, or the error refusing a tool
// that requires one.
func (c *Call) taskEligible(e *toolEntry) (bool, error) {
	support := ""
	if e.tool.Execution != nil {
		support = e.tool.Execution.TaskSupport
	}
	if support == "" || support == TaskSupportForbidden {
		return false, nil
	}
	if c.modern != nil && c.ClientCapabilities().Has("extensions", TasksExtension) {
		return true, nil
	}
	if support == TaskSupportRequired {
		return false, MissingCapabilities(map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}})
	}
	return false, nil
}

// callAsTask serves a tools/call that may become a task.
func (c *Call) callAsTask(e *toolEntry, name string, args json.RawMessage) (any, error) {
	m := c.session.server.tasks
	run := &taskRun{m: m, id: uuid.NewString(), waiting: map[string]chan json.RawMessage{}}
	c.detach(run)
	exec := func() (any, error) {
		res, err := runTool(run.call, e, name, args)
		if err != nil {
			return nil, err
		}
		return finishToolResult(c.session.server, e, name, res)
	}
	if !e.tool.Execution.Deferred {
		t, err := m.create(c, run)
		if err != nil {
			run.call.cancelFn(err)
			return nil, err
		}
		go run.execute(exec)
		return createTaskResult(t), nil
	}
	// Deferred: the handler runs as an ordinary request until it asks to become a task.
	run.startReq = make(chan chan error)
	type outcome struct {
		res any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := exec()
		run.mu.Lock()
		started := run.started
		run.mu.Unlock()
		if started {
			run.settleFrom(exec, res, err)
			return
		}
		done <- outcome{res, err}
	}()
	for {
		select {
		case o := <-done:
			run.call.cancelFn(nil)
			run.call.over.Store(true)
			// An InputRequiredError goes back to the client as the request's own round trip; the
			// retry will bring the answers to a fresh call.
			return o.res, o.err
		case reply := <-run.startReq:
			t, err := m.create(c, run)
			reply <- err
			if err != nil {
				run.call.cancelFn(err)
				return nil, err
			}
			return createTaskResult(t), nil
		case <-c.ctx.Done():
			run.call.cancelFn(context.Cause(c.ctx))
			o := <-done // the handler sees its context end and returns
			return o.res, o.err
		}
	}
}

// create stores the task of run (owned by the request's principal) and registers its handler.
func (m *taskManager) create(c *Call, run *taskRun) (*Task, error) {
	owner, _ := PrincipalFrom(c.ctx)
	now := m.stamp()
	t := &Task{ID: run.id, Owner: owner, Status: TaskWorking, CreatedAt: now, LastUpdatedAt: now}
	if m.opts.TTL > 0 {
		t.TTL = m.opts.TTL
	}
	if m.opts.PollInterval > 0 {
		t.PollInterval = m.opts.PollInterval
	}
	m.mu.Lock()
	m.running[run.id] = run
	m.mu.Unlock()
	if sg, ok := m.opts.Store.(TaskSignaler); ok {
		// Watch before the task exists anywhere: a cancel or an answer from another replica
		// can come as soon as the client has the id.
		stop, err := sg.Watch(c.ctx, run.id, run.signal)
		if err != nil {
			m.forget(run)
			m.server.logError(fmt.Errorf("mcpkit: watching a task: %w", err))
			return nil, InternalError("Internal error creating a task")
		}
		run.stopWatch = stop
	}
	err := m.opts.Store.Create(c.ctx, t, TaskLimits{MaxTasks: m.opts.MaxTasks, MaxPerOwner: m.opts.MaxTasksPerPrincipal})
	if err != nil {
		m.forget(run)
		if errors.Is(err, ErrTaskLimit) {
			return nil, InternalError("Server busy: too many live tasks; try again later")
		}
		m.server.logError(fmt.Errorf("mcpkit: storing a task: %w", err))
		return nil, InternalError("Internal error creating a task")
	}
	run.mu.Lock()
	run.started = true
	run.mu.Unlock()
	m.notify(t)
	return t, nil
}

func (m *taskManager) forget(run *taskRun) {
	run.stopOnce.Do(func() {
		if run.stopWatch != nil {
			run.stopWatch()
		}
	})
	m.mu.Lock()
	if m.running[run.id] == run {
		delete(m.running, run.id)
	}
	m.mu.Unlock()
}

func (m *taskManager) local(id string) *taskRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running[id]
}

// execute runs the handler of a task created before it ran, and settles the task.
func (run *taskRun) execute(exec func() (any, error)) {
	res, err := exec()
	run.settleFrom(exec, res, err)
}

// settleFrom takes the handler's outcome: an InputRequiredError becomes input requests of the task and
// the handler runs again with the answers; anything else is the task's final state.
func (run *taskRun) settleFrom(exec func() (any, error), res any, err error) {
	tc := run.call
	for round := 0; ; round++ {
		var ir *InputRequiredError
		if !errors.As(err, &ir) {
			break
		}
		if round == maxTaskInputRounds {
			res, err = nil, InternalError(fmt.Sprintf("Handler still returned input_required after %d rounds", maxTaskInputRounds))
			break
		}
		if verr := ir.validate(); verr != nil {
			run.m.server.logError(fmt.Errorf("mcpkit: task %s: invalid input_required result: %w", run.id, verr))
			res, err = nil, InternalError("Internal error calling tool")
			break
		}
		responses, werr := run.askAll(tc.ctx, ir.Requests)
		if werr != nil {
			res, err = nil, werr
			break
		}
		tc.inputResponses = responses
		tc.requestState, tc.hasState = ir.State, ir.State != ""
		res, err = exec()
	}
	run.finish(res, err)
}

// finish records the final state of the task (unless it already has one, such as cancelled).
func (run *taskRun) finish(res any, err error) {
	m, tc := run.m, run.call
	defer func() {
		tc.over.Store(true)
		tc.cancelFn(nil)
		m.forget(run)
	}()
	cause := context.Cause(tc.ctx)
	status, payload := TaskCompleted, json.RawMessage(nil)
	var werr *Error
	switch {
	case errors.Is(cause, ErrTaskCancelled):
		status = TaskCancelled
	case errors.Is(cause, errTaskExpired):
		return // the task is gone
	case err != nil:
		status, werr = TaskFailed, asWireError(err, "Internal error calling tool")
	default:
		b := []byte("{}")
		if res != nil {
			var merr error
			if b, merr = marshal(res); merr != nil {
				m.server.logError(fmt.Errorf("mcpkit: task %s: encoding the result: %w", run.id, merr))
				status, werr = TaskFailed, InternalError("Internal error calling tool")
				break
			}
		}
		payload = tc.stampModern(b)
	}
	t, uerr := m.opts.Store.Update(context.WithoutCancel(tc.ctx), run.id, func(t *Task) error {
		if t.Status.Terminal() {
			return errTaskSettled
		}
		t.Status, t.Result, t.Error, t.InputRequests = status, payload, werr, nil
		t.LastUpdatedAt = m.stamp()
		return nil
	})
	switch {
	case uerr == nil:
		m.notify(t)
	case errors.Is(uerr, errTaskSettled), errors.Is(uerr, ErrTaskNotFound):
	default:
		m.server.logError(fmt.Errorf("mcpkit: task %s: recording its outcome: %w", run.id, uerr))
	}
}

var errTaskSettled = errors.New("mcpkit: task already settled")

// ask is a server-to-client request made by a task's handler: it becomes an input request of
// the task, and the answer comes through tasks/update.
func (run *taskRun) ask(ctx context.Context, method string, params any, result any) error {
	got, err := run.askAll(ctx, map[string]InputRequest{"": {Method: method, Params: params}})
	if err != nil {
		return err
	}
	return decodeAnswer(method, &Message{Result: json.RawMessage(got[""])}, result)
}

// askAll adds requests to the task's input requests under keys unique over the task's life,
// and waits for the answers to all of them. The answers come back under the caller's keys.
func (run *taskRun) askAll(ctx context.Context, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	tc := run.call
	keyOf := make(map[string]string, len(reqs)) // task key -> caller key
	encoded := make(map[string]json.RawMessage, len(reqs))
	chans := make(map[string]chan json.RawMessage, len(reqs))
	run.mu.Lock()
	for k, r := range reqs {
		run.seq++
		tk := inputKey(r.Method, k, run.seq)
		b, err := marshal(r)
		if err != nil {
			run.mu.Unlock()
			return nil, fmt.Errorf("mcpkit: encoding the %s input request: %w", r.Method, err)
		}
		keyOf[tk], encoded[tk] = k, b
		ch := make(chan json.RawMessage, 1)
		chans[tk] = ch
		run.waiting[tk] = ch
	}
	run.mu.Unlock()
	defer func() {
		run.mu.Lock()
		for tk := range chans {
			delete(run.waiting, tk)
		}
		run.mu.Unlock()
	}()
	if miss := missingCapabilities(requiredCapabilities(reqs), tc.ClientCapabilities()); miss != nil {
		b, _ := marshal(miss)
		return nil, &CapabilityError{msg: "the client did not declare the capabilities these input requests need: " + string(b)}
	}
	m := run.m
	t, err := m.opts.Store.Update(tc.ctx, run.id, func(t *Task) error {
		if t.Status.Terminal() {
			return errTaskSettled
		}
		if t.InputRequests == nil {
			t.InputRequests = map[string]json.RawMessage{}
		}
		for tk, b := range encoded {
			t.InputRequests[tk] = b
		}
		t.Status = TaskInputRequired
		t.LastUpdatedAt = m.stamp()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mcpkit: task %s: asking for input: %w", run.id, err)
	}
	m.notify(t)
	out := make(map[string]json.RawMessage, len(reqs))
	for tk, ch := range chans {
		select {
		case v := <-ch:
			out[keyOf[tk]] = json.RawMessage(v)
		case <-tc.ctx.Done():
			return nil, fmt.Errorf("input request of task %s ended: %w", run.id, context.Cause(tc.ctx))
		case <-ctx.Done():
			return nil, fmt.Errorf("input request of task %s ended: %w", run.id, context.Cause(ctx))
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

// deliver hands accepted answers to the task's handler, when it runs in this process.
func (m *taskManager) deliver(ctx context.Context, id string, answers map[string]json.RawMessage) {
	if run := m.local(id); run != nil {
		run.signal(TaskSignal{Answers: answers})
		return
	}
	m.relay(ctx, id, TaskSignal{Answers: answers})
}

// cancel ends the context of the task's handler, wherever it runs.
func (m *taskManager) cancel(ctx context.Context, id string) {
	if run := m.local(id); run != nil {
		run.signal(TaskSignal{Cancel: true})
		return
	}
	m.relay(ctx, id, TaskSignal{Cancel: true})
}

// relay sends a signal to the replica running the task, when the store is shared.
func (m *taskManager) relay(ctx context.Context, id string, sig TaskSignal) {
	sg, ok := m.opts.Store.(TaskSignaler)
	if !ok {
		return
	}
	if err := sg.Signal(ctx, id, sig); err != nil {
		m.server.logError(fmt.Errorf("mcpkit: task %s: signalling the replica that runs it: %w", id, err))
	}
}

// signal applies a signal to the task's handler: answers go to the input requests waiting for
// them, a cancellation ends its context.
func (run *taskRun) signal(sig TaskSignal) {
	if sig.Cancel {
		run.call.cancelFn(ErrTaskCancelled)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	for k, v := range sig.Answers {
		if ch, ok := run.waiting[k]; ok {
			select {
			case ch <- v:
			default:
			}
		}
	}
}

// TaskSignal is what a tasks/update or tasks/cancel served by one replica tells the replica that
// runs the task's handler.
type TaskSignal struct {
	// Cancel asks the handler to stop (its context ends with ErrTaskCancelled).
	Cancel bool `json:"cancel,omitzero"`
	// Answers are input responses the store accepted, by input request key.
	Answers map[string]json.RawMessage `json:"answers,omitzero"`
}

// TaskSignaler is implemented by a TaskStore shared between replicas: it carries signals to
// the replica running a task's handler. The server watches each task whose handler it runs, from
// before the task is announced until the handler ends, and signals a task it does not run.
// Delivery may be at most once: a lost answer leaves the task waiting until its TTL.
type TaskSignaler interface {
	// Watch calls f with every signal sent for task id until stop is called. f must return
	// quickly.
	Watch(ctx context.Context, id string, f func(TaskSignal)) (stop func(), err error)
	// Signal sends sig to the replicas watching task id (none is not an error).
	Signal(ctx context.Context, id string, sig TaskSignal) error
}

// notify publishes the task's state for notifications/tasks listeners.
func (m *taskManager) notify(t *Task) {
	m.server.publishTask(t)
}

// stamp is the time of a task change, in milliseconds.
func (m *taskManager) stamp() time.Time { return m.opts.Now().UTC().Truncate(time.Millisecond) }

// taskTime formats a task timestamp (ISO 8601, UTC, milliseconds).
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// taskWire is a task on the wire: CreateTaskResult, the result of tasks/get and the params of
// notifications/tasks (DetailedTask).
type taskWire struct {
	ResultType     string                     `json:"resultType,omitzero"`
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitzero"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          *int64                     `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitzero"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitzero"`
	Result         json.RawMessage            `json:"result,omitzero"`
	Error          *Error                     `json:"error,omitzero"`
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
	case TaskInputRequired:
		w.InputRequests = make(map[string]json.RawMessage, len(t.InputRequests))
		for k, v := range t.InputRequests {
			w.InputRequests[k] = json.RawMessage(v)
		}
	case TaskCompleted:
		w.Result = json.RawMessage(t.Result)
	case TaskFailed:
		w.Error = t.Error
	}
	return w
}

func createTaskResult(t *Task) taskWire {
	w := wireTask(t, false)
	w.ResultType = "task"
	return w
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	TaskID         json.RawMessage `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses"`
}

// lookupTask reads the params of a tasks/* request and finds its task: -32021 first when the
// client did not declare the extension, then -32602 for a malformed, unknown, expired or
// foreign task id.
func lookupTask(c *Call) (*Task, *taskParams, error) {
	if c.modern == nil || !c.ClientCapabilities().Has("extensions", TasksExtension) {
		return nil, nil, MissingCapabilities(map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}})
	}
	var p taskParams
	if !rawObject(c.params) || unmarshal(c.params, &p) != nil {
		return nil, nil, InvalidParams("Invalid params")
	}
	var id string
	if jsontext.Value(p.TaskID).Kind() != '"' || unmarshal(p.TaskID, &id) != nil || id == "" {
		return nil, nil, InvalidParams("Missing or invalid taskId")
	}
	t, err := c.session.server.tasks.opts.Store.Get(c.ctx, id)
	if err == nil && !sameOwner(c, t) {
		err = ErrTaskNotFound // another principal's task does not exist for this caller
	}
	if err != nil {
		if errors.Is(err, ErrTaskNotFound) {
			return nil, nil, NewError(CodeInvalidParams, "Failed to retrieve task: Task not found")
		}
		c.session.server.logError(fmt.Errorf("mcpkit: reading task: %w", err))
		return nil, nil, InternalError("Internal error reading the task")
	}
	return t, &p, nil
}

// sameOwner reports whether the request's principal owns t. A task created without a principal
// belongs to callers without one (its id is the only key); it is never another principal's.
func sameOwner(c *Call, t *Task) bool {
	p, _ := PrincipalFrom(c.ctx)
	return p == t.Owner
}

func handleGetTask(c *Call) (any, error) {
	t, _, err := lookupTask(c)
	if err != nil {
		return nil, err
	}
	return wireTask(t, true), nil
}

func handleUpdateTask(c *Call) (any, error) {
	t, p, err := lookupTask(c)
	if err != nil {
		return nil, err
	}
	var responses map[string]json.RawMessage
	if p.InputResponses != nil && (!rawObject(p.InputResponses) || unmarshal(p.InputResponses, &responses) != nil) {
		return nil, InvalidParams("inputResponses must be an object")
	}
	if len(responses) == 0 || t.Status != TaskInputRequired {
		return emptyResult{}, nil
	}
	m := c.session.server.tasks
	accepted := map[string]json.RawMessage{}
	updated, uerr := m.opts.Store.Update(c.ctx, t.ID, func(t *Task) error {
		clear(accepted)
		for k, v := range responses {
			if _, outstanding := t.InputRequests[k]; !outstanding {
				continue // unknown, already answered or superseded: ignored
			}
			if !validInputResponse(v) {
				return InvalidParams(fmt.Sprintf("inputResponses[%q] is not a result of elicitation/create, sampling/createMessage or roots/list", k))
			}
			accepted[k] = json.RawMessage(v)
		}
		if len(accepted) == 0 {
			return errNothingAccepted
		}
		for k := range accepted {
			delete(t.InputRequests, k)
		}
		if len(t.InputRequests) == 0 && t.Status == TaskInputRequired {
			t.Status = TaskWorking
		}
		t.LastUpdatedAt = m.stamp()
		return nil
	})
	var we *Error
	switch {
	case uerr == nil:
		m.deliver(c.ctx, t.ID, accepted)
		m.notify(updated)
	case errors.As(uerr, &we):
		return nil, we
	case errors.Is(uerr, errNothingAccepted), errors.Is(uerr, ErrTaskNotFound):
	default:
		c.session.server.logError(fmt.Errorf("mcpkit: updating task: %w", uerr))
		return nil, InternalError("Internal error updating the task")
	}
	return emptyResult{}, nil
}

var errNothingAccepted = errors.New("mcpkit: no outstanding input request answered")

func handleCancelTask(c *Call) (any, error) {
	t, _, err := lookupTask(c)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return emptyResult{}, nil // idempotent
	}
	m := c.session.server.tasks
	updated, uerr := m.opts.Store.Update(c.ctx, t.ID, func(t *Task) error {
		if t.Status.Terminal() {
			return errTaskSettled
		}
		t.Status, t.InputRequests = TaskCancelled, nil
		t.StatusMessage = "Cancelled by the client"
		t.LastUpdatedAt = m.stamp()
		return nil
	})
	switch {
	case uerr == nil:
		m.cancel(c.ctx, t.ID)
		m.notify(updated)
	case errors.Is(uerr, errTaskSettled), errors.Is(uerr, ErrTaskNotFound):
	default:
		c.session.server.logError(fmt.Errorf("mcpkit: cancelling task: %w", uerr))
		return nil, InternalError("Internal error cancelling the task")
	}
	return emptyResult{}, nil
}

// inTask reports whether the call runs as a task now.
func (c *Call) inTask() bool {
	if c.task == nil {
		return false
	}
	c.task.mu.Lock()
	defer c.task.mu.Unlock()
	return c.task.started
}

// legacyCapabilities are the capabilities an initialize result announces: tasks are an extension
// of the 2026-07-28 lifecycle only (SEP-2663), so it is left out there.
func legacyCapabilities(caps ServerCapabilities) ServerCapabilities {
	if _, ok := caps.Extensions[TasksExtension]; !ok {
		return caps
	}
	ext := make(map[string]any, len(caps.Extensions))
	for k, v := range caps.Extensions {
		if k != TasksExtension {
			ext[k] = v
		}
	}
	caps.Extensions = nil
	if len(ext) > 0 {
		caps.Extensions = ext
	}
	return caps
}
