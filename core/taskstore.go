package core

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"time"
)

// TaskStatus is the status of a task (SEP-2663).
type TaskStatus string

// The task statuses. Completed, failed and cancelled are terminal: a task never leaves them.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the status is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is a task as a TaskStore keeps it: what tasks/get and notifications/tasks report, plus its
// owner and the state of its input requests.
type Task struct {
	// ID is the task id: random, unguessable, minted by the server.
	ID string
	// Owner is the principal that created it (PrincipalFrom of the creating request; empty for
	// a caller without one). Only a request of the same principal may see or change the task.
	Owner string
	// Status is the current status.
	Status TaskStatus
	// StatusMessage optionally describes the status.
	StatusMessage string
	// CreatedAt and LastUpdatedAt are the creation time and the time of the last change.
	CreatedAt, LastUpdatedAt time.Time
	// TTL is how long the task lives after CreatedAt; zero means no limit.
	TTL time.Duration
	// PollInterval is the suggested polling interval; zero means none is suggested.
	PollInterval time.Duration
	// InputRequests are the outstanding server-to-client requests, by key (each an encoded
	// {"method", "params"} object), while the status is input_required.
	InputRequests map[string]json.RawMessage
	// Result is the encoded result of a completed task.
	Result json.RawMessage
	// Error is the JSON-RPC error of a failed task.
	Error *Error
}

// ExpiresAt returns when the task expires (the zero time when it never does).
func (t *Task) ExpiresAt() time.Time {
	if t.TTL <= 0 {
		return time.Time{}
	}
	return t.CreatedAt.Add(t.TTL)
}

// Expired reports whether the task's TTL has passed at now.
func (t *Task) Expired(now time.Time) bool {
	exp := t.ExpiresAt()
	return !exp.IsZero() && !now.Before(exp)
}

// Clone returns a deep copy of t.
func (t *Task) Clone() *Task {
	c := *t
	c.InputRequests = maps.Clone(t.InputRequests)
	c.Result = append(json.RawMessage(nil), t.Result...)
	if t.Result == nil {
		c.Result = nil
	}
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	return &c
}

// TaskLimits bound how many tasks a store keeps. A negative value removes that bound.
type TaskLimits struct {
	// MaxTasks caps the tasks stored at once (any status, until they expire).
	MaxTasks int
	// MaxPerOwner caps the tasks of one owner that are not yet terminal.
	MaxPerOwner int
}

// ErrTaskNotFound is returned by a TaskStore for an id it does not hold (never created,
// expired, or removed).
var ErrTaskNotFound = errors.New("mcpkit: task not found")

// ErrTaskLimit is returned by TaskStore.Create when a TaskLimits bound is reached.
var ErrTaskLimit = errors.New("mcpkit: too many tasks")

// TaskStore keeps tasks where every replica of a server can reach them. The default is an
// in-memory store (NewMemoryTaskStore); a shared one (Redis) lets a task created on one replica be
// read, updated and cancelled from any other. Implementations must be safe for concurrent use.
type TaskStore interface {
	// Create stores a new task, atomically checking limits. It returns only once a Get of
	// t.ID would find it (on every replica), and ErrTaskLimit when a bound is reached.
	Create(ctx context.Context, t *Task, limits TaskLimits) error
	// Get returns a copy of the task, or ErrTaskNotFound (an expired task is not found).
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies fn to a copy of the task and stores the result atomically: no other
	// update interleaves between the read fn sees and the write. When fn returns an error
	// nothing is stored and Update returns that error. It returns the stored task, or
	// ErrTaskNotFound.
	Update(ctx context.Context, id string, fn func(t *Task) error) (*Task, error)
}

// MemoryTaskStore is the in-memory TaskStore: tasks live in this process until their TTL passes.
// Expired tasks are dropped when they are looked up and by a sweep that runs, at most once a
// minute, as new tasks are created.
type MemoryTaskStore struct {
	now func() time.Time

	mu        sync.Mutex
	tasks     map[string]*Task
	open      map[string]int // owner -> tasks not yet terminal
	nextSweep time.Time
}

// NewMemoryTaskStore returns an empty in-memory store. now, when not nil, replaces time.Now (for
// tests).
func NewMemoryTaskStore(now func() time.Time) *MemoryTaskStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryTaskStore{now: now, tasks: map[string]*Task{}, open: map[string]int{}}
}

// Create implements TaskStore.
func (m *MemoryTaskStore) Create(_ context.Context, t *Task, limits TaskLimits) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !now.Before(m.nextSweep) || (limits.MaxTasks >= 0 && len(m.tasks) >= limits.MaxTasks) {
		m.sweep(now)
	}
	if limits.MaxTasks >= 0 && len(m.tasks) >= limits.MaxTasks {
		return ErrTaskLimit
	}
	if limits.MaxPerOwner >= 0 && !t.Status.Terminal() && m.open[t.Owner] >= limits.MaxPerOwner {
		return ErrTaskLimit
	}
	if _, dup := m.tasks[t.ID]; dup {
		return errors.New("mcpkit: task id already in use")
	}
	m.tasks[t.ID] = t.Clone()
	if !t.Status.Terminal() {
		m.open[t.Owner]++
	}
	return nil
}

// sweep drops expired tasks; m.mu is held.
func (m *MemoryTaskStore) sweep(now time.Time) {
	m.nextSweep = now.Add(time.Minute)
	for id, t := range m.tasks {
		if t.Expired(now) {
			m.drop(id, t)
		}
	}
}

func (m *MemoryTaskStore) drop(id string, t *Task) {
	delete(m.tasks, id)
	if !t.Status.Terminal() {
		m.close(t.Owner)
	}
}

func (m *MemoryTaskStore) close(owner string) {
	if m.open[owner]--; m.open[owner] <= 0 {
		delete(m.open, owner)
	}
}

// lookup returns the live task with id; m.mu is held.
func (m *MemoryTaskStore) lookup(id string) (*Task, bool) {
	t, ok := m.tasks[id]
	if !ok {
		return nil, false
	}
	if t.Expired(m.now()) {
		m.drop(id, t)
		return nil, false
	}
	return t, true
}

// Get implements TaskStore.
func (m *MemoryTaskStore) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lookup(id)
	if !ok {
		return nil, ErrTaskNotFound
	}
	return t.Clone(), nil
}

// Update implements TaskStore.
func (m *MemoryTaskStore) Update(_ context.Context, id string, fn func(t *Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lookup(id)
	if !ok {
		return nil, ErrTaskNotFound
	}
	next := t.Clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	next.ID, next.Owner = t.ID, t.Owner // identity never changes
	if t.Status.Terminal() {
		next.Status = t.Status // nor does a terminal status
	}
	if !t.Status.Terminal() && next.Status.Terminal() {
		m.close(t.Owner)
	}
	m.tasks[id] = next
	return next.Clone(), nil
}

// Len returns how many tasks the store holds (expired ones not yet swept included).
func (m *MemoryTaskStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tasks)
}
