package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// Status is the status of a task (SEP-2663).
type Status string

// The task statuses. Completed, failed and cancelled are terminal: a task never leaves them.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether the status is completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Task is a task as a Store keeps it: what tasks/get and notifications/tasks report, plus its
// owner and the state of its input requests.
type Task struct {
	// ID is the task id: random, unguessable, minted by the server.
	ID string
	// Owner is the principal that created it (core.PrincipalFrom of the creating request; empty for
	// a caller without one). Only a request of the same principal may see or change the task.
	Owner string
	// Runner names the replica running the task's handler, as a Store shared between replicas
	// records it at Create (redisstore: the Router's replica id); empty for a store of one
	// process. Like ID and Owner it never changes.
	Runner string
	// Status is the current status.
	Status Status
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
	Error *jsonrpc.Error
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

// Limits bound how many tasks a store keeps. A negative value removes that bound.
//
// Callers stay apart: every stored task, finished ones included, counts against its owner's
// share (MaxPerOwner). When a Create finds its owner at that share, or the store at MaxTasks,
// the owner's finished task that expires first is evicted (its result is gone, as after its
// TTL) to make room; only when the owner has no finished task left is the Create refused. A
// Create never evicts another owner's task, and no owner holds more than MaxPerOwner tasks, so
// with MaxPerOwner below MaxTasks no caller can use up the shared cap.
type Limits struct {
	// MaxTasks caps the tasks stored at once (any status, until they expire or are evicted).
	MaxTasks int
	// MaxPerOwner caps the tasks of one owner stored at once (any status).
	MaxPerOwner int
}

// ErrNotFound is returned by a Store for an id it does not hold (never created,
// expired, or removed).
var ErrNotFound = errors.New("mcpkit: task not found")

// ErrLimit is returned by Store.Create when a Limits bound is reached.
var ErrLimit = errors.New("mcpkit: too many tasks")

// Store keeps tasks where every replica of a server can reach them. The default is an
// in-memory store (NewMemoryStore); a shared one (Redis) lets a task created on one replica be
// read, updated and cancelled from any other. Implementations must be safe for concurrent use.
type Store interface {
	// Create stores a new task, atomically checking limits. It returns only once a Get of
	// t.ID would find it (on every replica), and ErrLimit when a bound is reached.
	Create(ctx context.Context, t *Task, limits Limits) error
	// Get returns a copy of the task, or ErrNotFound (an expired task is not found).
	Get(ctx context.Context, id string) (*Task, error)
	// GetMany returns copies of the tasks of ids it holds, by id, read in one batch (one round
	// trip to a shared store); ids it does not hold (never created, expired, removed) are
	// absent. The extension reads the taskIds of a listen filter with it.
	GetMany(ctx context.Context, ids []string) (map[string]*Task, error)
	// Update applies fn to a copy of the task and stores the result atomically: no other
	// update interleaves between the read fn sees and the write. When fn returns an error
	// nothing is stored and Update returns that error. It returns the stored task, or
	// ErrNotFound.
	Update(ctx context.Context, id string, fn func(t *Task) error) (*Task, error)
}

// MemoryStore is the in-memory Store: tasks live in this process until their TTL passes.
// Expired tasks are dropped when they are looked up and by a sweep that runs, at most once a
// minute, as new tasks are created.
type MemoryStore struct {
	now func() time.Time

	mu        sync.Mutex
	tasks     map[string]*Task
	owned     map[string]map[string]struct{} // owner -> ids of its stored tasks
	nextSweep time.Time
}

// NewMemoryStore returns an empty in-memory store. now, when not nil, replaces time.Now (for
// tests).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, tasks: map[string]*Task{}, owned: map[string]map[string]struct{}{}}
}

// Create implements Store.
func (m *MemoryStore) Create(_ context.Context, t *Task, limits Limits) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.tasks[t.ID]; dup {
		return errors.New("mcpkit: task id already in use")
	}
	full := func() bool {
		return (limits.MaxTasks >= 0 && len(m.tasks) >= limits.MaxTasks) ||
			(limits.MaxPerOwner >= 0 && len(m.owned[t.Owner]) >= limits.MaxPerOwner)
	}
	if !now.Before(m.nextSweep) || full() {
		m.sweep(now)
	}
	for full() {
		if !m.evict(t.Owner) {
			return ErrLimit
		}
	}
	m.tasks[t.ID] = t.Clone()
	if m.owned[t.Owner] == nil {
		m.owned[t.Owner] = map[string]struct{}{}
	}
	m.owned[t.Owner][t.ID] = struct{}{}
	return nil
}

// evict drops the owner's finished task that expires first (the oldest, as every task of a
// store has one TTL); it reports false when the owner has none. m.mu is held.
func (m *MemoryStore) evict(owner string) bool {
	var victim *Task
	for id := range m.owned[owner] {
		t := m.tasks[id]
		if t.Status.Terminal() && (victim == nil || evictsBefore(t, victim)) {
			victim = t
		}
	}
	if victim == nil {
		return false
	}
	m.drop(victim.ID, victim)
	return true
}

// evictsBefore orders finished tasks for eviction: earliest expiry first (a task without TTL
// last), then earliest creation.
func evictsBefore(a, b *Task) bool {
	ea, eb := a.ExpiresAt(), b.ExpiresAt()
	switch {
	case ea.IsZero() != eb.IsZero():
		return eb.IsZero()
	case !ea.Equal(eb):
		return ea.Before(eb)
	}
	return a.CreatedAt.Before(b.CreatedAt)
}

// sweep drops expired tasks; m.mu is held.
func (m *MemoryStore) sweep(now time.Time) {
	m.nextSweep = now.Add(time.Minute)
	for id, t := range m.tasks {
		if t.Expired(now) {
			m.drop(id, t)
		}
	}
}

func (m *MemoryStore) drop(id string, t *Task) {
	delete(m.tasks, id)
	if ids := m.owned[t.Owner]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(m.owned, t.Owner)
		}
	}
}

// lookup returns the live task with id; m.mu is held.
func (m *MemoryStore) lookup(id string) (*Task, bool) {
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

// Get implements Store.
func (m *MemoryStore) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lookup(id)
	if !ok {
		return nil, ErrNotFound
	}
	return t.Clone(), nil
}

// GetMany implements Store.
func (m *MemoryStore) GetMany(_ context.Context, ids []string) (map[string]*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*Task, len(ids))
	for _, id := range ids {
		if t, ok := m.lookup(id); ok {
			out[id] = t.Clone()
		}
	}
	return out, nil
}

// Update implements Store.
func (m *MemoryStore) Update(_ context.Context, id string, fn func(t *Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lookup(id)
	if !ok {
		return nil, ErrNotFound
	}
	next := t.Clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	next.ID, next.Owner, next.Runner = t.ID, t.Owner, t.Runner // identity never changes
	if t.Status.Terminal() {
		next.Status = t.Status // nor does a terminal status
	}
	m.tasks[id] = next
	return next.Clone(), nil
}

// Len returns how many tasks the store holds (expired ones not yet swept included).
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tasks)
}
