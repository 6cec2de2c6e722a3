// Package session keeps the sessions of the legacy (2024-11-05 .. 2025-11-25) Streamable HTTP
// lifecycle: the Store interface and the in-memory store, with idle expiry, a cap on the number
// of sessions and a reaper; and the contract of the events resumable streams keep (EventStore,
// SharedEventStore) with its in-memory store. The contracts sit here, below both the transport
// (mcphttp) and the shared stores (redisstore), so that neither imports the other. A Store keeps
// records (Entry: id, owner, Origin, idle clock and, on a shared store, the state to rebuild the
// session from); the transport owns the live sessions of its process (Live) and implements
// Lookup, which the session layer looks a request's session up in; Holder is how a shared store
// takes a live session the transport built from one of its records, to route other replicas'
// messages to it.
//
// The 2026-07-28 lifecycle has no sessions; it never touches a Store.
package session

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/mcpkit/mcpkit/core"
)

// Errors a Store returns.
var (
	// ErrNotFound: no live session has that id (it never existed, expired or was deleted).
	ErrNotFound = errors.New("session: not found")
	// ErrFull: the store is at its cap even after reclaiming expired sessions. A store that
	// knows its cap returns a *FullError, which matches ErrFull with errors.Is.
	ErrFull = errors.New("session: maximum number of sessions reached")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("session: store closed")
	// ErrExists: Add was given a session whose id the store already holds.
	ErrExists = errors.New("session: id already in use")
)

// FullError is the error Add returns at the cap when the store knows it. errors.Is(err, ErrFull)
// holds for it.
type FullError struct {
	// Max is the cap that was reached.
	Max int
}

// Error names the cap that was reached.
func (e *FullError) Error() string {
	return "session: maximum number of sessions (" + strconv.Itoa(e.Max) + ") reached"
}

// Is makes a *FullError match ErrFull.
func (e *FullError) Is(target error) bool { return target == ErrFull }

// Entry is the record of one legacy session as a Store keeps it: its id, who opened it and from
// where, its idle clock and, on a shared store, the protocol state to rebuild the session from.
// The live session (protocol state, streams) is not part of it: the transport serving the
// session owns that (Live) and registers with OnClose to hear when the record ends.
type Entry struct {
	// ID is the session id, sent in the Mcp-Session-Id header: a random UUID.
	ID string
	// Origin is the Origin header seen at initialize ("" when there was none). Later requests
	// that carry an Origin must carry the same one.
	Origin string
	// Owner is the principal that opened the session (core.PrincipalFrom of the initialize
	// request; empty for a session opened by nobody). The session validator lets only that
	// principal use the session: a session of P answers 403 to Q and to nobody, and an anonymous
	// session answers 403 to every authenticated principal.
	Owner string
	// State is the protocol state of the session as a shared store (a Holder) keeps it: set on
	// the record such a store returns, for the transport to build the in-process session from
	// when it does not serve the session yet. Nil on an in-memory
	// store's records, and on a new session's (its state is empty until initialize).
	State *core.SessionState

	lastActive atomic.Int64 // nanoseconds since the store's epoch, on the store's clock
	used       atomic.Bool  // renewed at least once since it was added (see UnusedIdleTimeout)

	closeOnce sync.Once
	mu        sync.Mutex // guards closers and ended
	closers   []func()
	ended     bool
}

// NewID returns a fresh session id: a random UUID, visible ASCII only.
func NewID() string { return uuid.NewString() }

// OnClose registers f to run once when the session ends (deleted, expired, or the store closed):
// how the transport owning the live session hears of it. Hooks run in the order they were
// registered; if the session has already ended, f runs at once. f must not block for long: it
// runs on the goroutine that ended the session (possibly the reaper).
func (s *Entry) OnClose(f func()) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		f()
		return
	}
	s.closers = append(s.closers, f)
	s.mu.Unlock()
}

// end runs the closers. It never runs under a store lock.
func (s *Entry) end() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		closers := s.closers
		s.closers = nil
		s.ended = true
		s.mu.Unlock()
		for _, f := range closers {
			f()
		}
	})
}

// Store keeps legacy sessions. Implementations must be safe for concurrent use, and must never
// call into a session's streams while holding a lock other sessions need.
type Store interface {
	// Add stores a new session and starts its idle clock. It fails with ErrFull (or a
	// *FullError) at the cap, after reclaiming expired sessions; with ErrExists when the id is
	// taken; and with ErrClosed after Close.
	Add(ctx context.Context, s *Entry) error
	// Get returns the live session with the id, ErrNotFound when there is none, or ErrClosed
	// after Close. With touch it renews the session's idle time. An expired session found on the
	// way is ended and not returned.
	Get(ctx context.Context, id string, touch bool) (*Entry, error)
	// Delete ends and removes the session; it reports whether it existed.
	Delete(ctx context.Context, id string) bool
	// Len returns the number of sessions held.
	Len() int
	// Close ends every session and stops background work.
	Close() error
}

// Defaults of MemoryOptions.
const (
	DefaultIdleTimeout  = 30 * time.Minute
	DefaultMaxSessions  = 10000
	DefaultReapInterval = time.Minute
	// DefaultUnusedIdleTimeout is how long a session that was initialized and never used
	// since lives, when MemoryOptions.UnusedIdleTimeout is zero.
	DefaultUnusedIdleTimeout = 2 * time.Minute
)

// MemoryOptions configure the in-memory store. The zero value is the secure default.
type MemoryOptions struct {
	// IdleTimeout ends a session nobody used for this long. Zero means DefaultIdleTimeout
	// (30 minutes); a negative value turns expiry off (sessions then live until deleted).
	IdleTimeout time.Duration
	// MaxSessions caps the number of sessions. Zero means DefaultMaxSessions (10000); a
	// negative value removes the cap.
	MaxSessions int
	// UnusedIdleTimeout ends sooner a session that was never used after it was added (no
	// request and no GET stream after initialize: a lookup that renews the session counts as a
	// use), so a client that initializes sessions and drops them frees their slots quickly.
	// Zero means DefaultUnusedIdleTimeout (2 minutes); negative (or a value above IdleTimeout)
	// gives unused sessions the IdleTimeout too.
	UnusedIdleTimeout time.Duration
	// ReapInterval is how often expired sessions are swept. Zero means DefaultReapInterval (1
	// minute); NewMemory panics on a negative interval. No reaper runs when expiry is off.
	ReapInterval time.Duration
	// Now is the clock idle times are measured on. Nil means time.Now. Tests set it to expire
	// sessions without waiting.
	Now func() time.Time
}

// Memory is the in-process Store. Create it with NewMemory and stop it with Close.
type Memory struct {
	idle   time.Duration
	unused time.Duration // idle timeout of sessions never used; 0: same as idle
	max    int
	reap   time.Duration // the reaper's interval (no reaper when idle < 0)
	clock  func() time.Time
	epoch  time.Time
	// ownClock is set when MemoryOptions.Now gave the clock; without it idle times are
	// measured on the monotonic clock alone (time.Since of the epoch: one clock reading per
	// lookup, where time.Now takes two, the wall clock's and the monotonic one).
	ownClock bool

	mu       sync.Mutex
	sessions map[string]*Entry
	closed   bool

	stop chan struct{}
	done chan struct{}
}

// NewMemory returns an in-memory store and, when sessions can expire, starts its reaper goroutine
// (stopped by Close).
func NewMemory(opts MemoryOptions) *Memory {
	clock := opts.Now
	if clock == nil {
		clock = time.Now
	}
	m := &Memory{
		ownClock: opts.Now != nil,
		idle:     opts.IdleTimeout,
		max:      opts.MaxSessions,
		clock:    clock,
		epoch:    clock(),
		sessions: map[string]*Entry{},
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if m.idle == 0 {
		m.idle = DefaultIdleTimeout
	}
	switch u := opts.UnusedIdleTimeout; {
	case u == 0:
		u = DefaultUnusedIdleTimeout
		fallthrough
	case u > 0:
		if m.idle > 0 && u < m.idle {
			m.unused = u
		}
	}
	if m.max == 0 {
		m.max = DefaultMaxSessions
	}
	if opts.ReapInterval < 0 {
		panic("session: MemoryOptions.ReapInterval must not be negative")
	}
	m.reap = opts.ReapInterval
	if m.reap == 0 {
		m.reap = DefaultReapInterval
	}
	if m.idle > 0 {
		go m.reapEvery(m.reap)
	} else {
		close(m.done)
	}
	return m
}

// now is the time on the store's clock, in nanoseconds since its epoch.
func (m *Memory) now() int64 {
	if !m.ownClock {
		return int64(time.Since(m.epoch))
	}
	return int64(m.clock().Sub(m.epoch))
}

func (m *Memory) expired(s *Entry, now int64) bool {
	idle := m.idle
	if m.unused > 0 && !s.used.Load() {
		idle = m.unused
	}
	return idle > 0 && now-s.lastActive.Load() > int64(idle)
}

// Add implements Store. At the cap it first reclaims expired sessions, in line.
func (m *Memory) Add(_ context.Context, s *Entry) error {
	now := m.now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	if old, ok := m.sessions[s.ID]; ok && old != s {
		m.mu.Unlock()
		return ErrExists
	}
	var ended []*Entry
	if m.max > 0 && len(m.sessions) >= m.max {
		ended = m.sweepLocked(now)
	}
	if m.max > 0 && len(m.sessions) >= m.max {
		m.mu.Unlock()
		endAll(ended)
		return &FullError{Max: m.max}
	}
	s.lastActive.Store(now)
	m.sessions[s.ID] = s
	m.mu.Unlock()
	endAll(ended)
	return nil
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, id string, touch bool) (*Entry, error) {
	return m.GetChecked(ctx, id, touch, nil)
}

// GetChecked implements Checker: Get, with allow (when not nil) run on the session before it
// is renewed, in the same lookup under the store's lock (so allow must not call the store). A
// session allow refuses is returned with ErrRefused and not renewed.
func (m *Memory) GetChecked(_ context.Context, id string, touch bool, allow func(*Entry) bool) (*Entry, error) {
	now := m.now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	s, ok := m.sessions[id]
	if !ok {
		m.mu.Unlock()
		return nil, ErrNotFound
	}
	if m.expired(s, now) {
		delete(m.sessions, id)
		m.mu.Unlock()
		s.end()
		return nil, ErrNotFound
	}
	if allow != nil && !allow(s) {
		m.mu.Unlock()
		return s, ErrRefused
	}
	if touch {
		// Under the lock, so a sweep cannot end the session between the check and the renewal.
		s.lastActive.Store(now)
		if !s.used.Load() {
			s.used.Store(true)
		}
	}
	m.mu.Unlock()
	return s, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) bool {
	m.mu.Lock()
	s, ok := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if ok {
		s.end()
	}
	return ok
}

// Len implements Store.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// Close implements Store.
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	all := make([]*Entry, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.sessions = map[string]*Entry{}
	m.mu.Unlock()
	close(m.stop)
	<-m.done
	endAll(all)
	return nil
}

// Reap ends expired sessions now and returns how many it ended. The reaper calls it every
// ReapInterval; the sessions are ended after the store's lock is released.
func (m *Memory) Reap() int {
	now := m.now()
	m.mu.Lock()
	ended := m.sweepLocked(now)
	m.mu.Unlock()
	endAll(ended)
	return len(ended)
}

// sweepLocked removes expired sessions from the map; the caller ends them after unlocking.
func (m *Memory) sweepLocked(now int64) []*Entry {
	if m.idle <= 0 {
		return nil
	}
	var ended []*Entry
	for id, s := range m.sessions {
		if m.expired(s, now) {
			delete(m.sessions, id)
			ended = append(ended, s)
		}
	}
	return ended
}

func (m *Memory) reapEvery(interval time.Duration) {
	defer close(m.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.Reap()
		}
	}
}

func endAll(list []*Entry) {
	for _, s := range list {
		s.end()
	}
}

// End ends the session in this process: its close hooks run (the transport's hook closes the
// live session: requests in flight are cancelled, streams end). It is for Store implementations,
// which call it when a session is deleted, expires or the store closes, and for the transport
// owning the live session; it does not remove the session from a store. It is safe to call more
// than once.
func (s *Entry) End() { s.end() }

// Live is a legacy session this process serves: the protocol session the transport built (at
// initialize, or from the record of a shared store) with the record it belongs to. The transport
// owns it (mcphttp's endpoint creates, rebuilds and deletes them); the session layer hands it to
// the endpoint, and a shared store holds it to route other replicas' messages to it.
type Live interface {
	// Entry returns the session's record (ID, Origin and Owner never change).
	Entry() *Entry
	// Session returns the protocol state of the session.
	Session() *core.Session
	// End ends the session in this process (requests in flight are cancelled, streams end); it
	// does not delete the record. It is safe to call more than once.
	End()
}

// Holder is implemented by a Store that shares its sessions with other processes. For a session
// another process created and this one does not serve yet, its Get and GetChecked return the
// session's record with State set: the transport that owns the live sessions of this process
// builds the session from it and hands it over with Hold, and after Add it hands over the
// session it created. The store never builds sessions, and never calls into the transport but
// through Live.
type Holder interface {
	// Hold makes l a session this process serves: the store connects it to the other processes
	// (its state changes written through, messages for it routed here) and ends it when the
	// session is deleted anywhere. When the store already holds a session with that id (another
	// request built it first), Hold returns that one and leaves l alone: the caller ends l. It
	// fails with ErrClosed after Close.
	Hold(ctx context.Context, l Live) (Live, error)
}

// Lookup is what the session layer (middleware.SessionValidator) looks a request's session up
// in. mcphttp's endpoint implements it: the one owner of the live sessions of its process.
type Lookup interface {
	// Lookup is the one lookup of a request: GetChecked's contract (allow runs before the
	// session is renewed; a session allow refuses comes back with ErrRefused), and the session
	// returned is live in this process (rebuilt from a shared store's record on a miss).
	Lookup(ctx context.Context, id string, touch bool, allow func(*Entry) bool) (Live, error)
	// Known reports whether a session with the id exists, without building, holding or renewing
	// anything: nil, ErrNotFound, or the store's error (a repeated initialize naming a session
	// is refused on it).
	Known(ctx context.Context, id string) error
}

// Find looks a session up in store with allow checked before the renewal: in one call on a
// Checker, else with a Get that does not renew and, once allowed, a second one that does. A
// session allow refuses is returned with ErrRefused and not renewed.
func Find(ctx context.Context, store Store, id string, touch bool, allow func(*Entry) bool) (*Entry, error) {
	if c, ok := store.(Checker); ok {
		return c.GetChecked(ctx, id, touch, allow)
	}
	s, err := store.Get(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if allow != nil && !allow(s) {
		return s, ErrRefused
	}
	if touch {
		// Renew; the session may have expired or been deleted in between.
		return store.Get(ctx, id, true)
	}
	return s, nil
}

var _ Checker = (*Memory)(nil)

// ErrRefused is what Checker.GetChecked returns for a session its allow function refused.
var ErrRefused = errors.New("session: request refused for this session")

// Checker is implemented by a Store that can check a session before renewing it, in the same
// lookup (one round trip to a remote store instead of two). GetChecked is Get with a check:
// allow runs on the session (its Origin and Owner never change after Add) before it is renewed;
// when allow returns false the session is not renewed and GetChecked returns it with ErrRefused.
// The session validator uses it when the store has it. allow is called only before GetChecked
// returns; a store must not keep it.
type Checker interface {
	GetChecked(ctx context.Context, id string, touch bool, allow func(*Entry) bool) (*Entry, error)
}
