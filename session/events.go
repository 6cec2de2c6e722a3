package session

import (
	"context"
	"sync"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// StoredEvent is one event of a resumable stream as an EventStore keeps it: its place in the
// stream and the JSON-RPC message it carries.
type StoredEvent struct {
	// Seq is the event's number on its stream: 1 for the first message, then one more for each.
	Seq uint64
	// Data is the encoded message. The endpoint never modifies it after Append, and neither may
	// the store.
	Data []byte
}

// EventStore keeps the events of resumable SSE streams so a client that lost a stream's
// connection can get what it missed (see mcphttp.ResumabilityOptions). Streams are named by the session
// they belong to and an id the endpoint chose, unique within that session; the endpoint numbers
// each stream's events itself and calls Append in that order. Live delivery to a reconnected
// client stays with the endpoint: a store only keeps and returns bytes.
//
// Implementations must be safe for concurrent use, must bound what they keep, and must not
// block for long: the endpoint calls Append while it holds the lock of that one stream.
type EventStore interface {
	// Append keeps ev as the next event of a stream of a session, dropping older events of the
	// stream when its bounds require it.
	Append(ctx context.Context, sessionID, streamID string, ev StoredEvent) error
	// After returns the events of the stream that are still kept and come after seq, oldest
	// first (none for a stream the store does not know).
	After(ctx context.Context, sessionID, streamID string, seq uint64) ([]StoredEvent, error)
	// DropStream forgets a stream.
	DropStream(ctx context.Context, sessionID, streamID string)
	// DropSession forgets every stream of a session; the endpoint calls it when the session ends.
	DropSession(ctx context.Context, sessionID string)
}

// SharedEventStore is an EventStore that several replicas share (for example one on Redis). With
// it, a GET whose Last-Event-ID names a stream of its session that this process does not hold
// (the stream runs, or ran, on another replica) replays what the store keeps of it and ends (the
// client comes back after the retry interval); a FollowedEventStore also follows the stream live.
// A stream whose connection is cut before it stored anything stores an empty event 0, so that
// the other replicas know it. Stream ids start at a random point per session and replica, so
// that two replicas never share one.
type SharedEventStore interface {
	EventStore
	// Has reports whether the store keeps the stream.
	Has(ctx context.Context, sessionID, streamID string) (bool, error)
}

// FollowedEventStore is a SharedEventStore that knows which replica runs each stream and wakes
// the replicas following it. A GET resuming a stream of another replica replays what is stored,
// then writes each event as it is stored (woken by the store, never polling), until the
// response; when the replica running the stream is gone, the GET ends with a JSON-RPC error for
// the stream's request, so that the client sends it again.
type FollowedEventStore interface {
	SharedEventStore
	// Own tells the store that this process runs the stream, which answers request: the store
	// records it with the stream's events from the next Append on. It makes no call of its own.
	Own(sessionID, streamID string, request jsonrpc.ID)
	// Owner returns the request of a stream and whether the replica running it is alive; known
	// is false when the store has no owner recorded for the stream.
	Owner(ctx context.Context, sessionID, streamID string) (request jsonrpc.ID, alive, known bool, err error)
	// Follow calls wake each time an event of the stream is stored, and with lapsed set when a
	// replica was found dead (its streams' owners may be gone), until stop is called. wake must
	// return quickly.
	Follow(ctx context.Context, sessionID, streamID string, wake func(lapsed bool)) (stop func(), err error)
}

// Defaults of MemoryEventStoreOptions.
const (
	DefaultMaxStreamEvents = 256
	DefaultMaxStreamBytes  = 1 << 20
)

// MemoryEventStoreOptions bound what the in-memory store keeps per stream. The zero value means
// the defaults.
type MemoryEventStoreOptions struct {
	// MaxEvents is how many events a stream keeps; past it the oldest are dropped first. Zero
	// means DefaultMaxStreamEvents (256); NewMemoryEventStore panics on a negative value.
	MaxEvents int
	// MaxBytes is how many bytes of message data a stream keeps; past it the oldest events are
	// dropped first. The newest event is always kept, even alone above the bound, so the
	// response of a request is never lost to the bound. Zero means DefaultMaxStreamBytes (1 MiB);
	// NewMemoryEventStore panics on a negative value.
	MaxBytes int
}

// MemoryEventStore is the in-process EventStore: per stream at most MaxEvents events and
// MaxBytes bytes, the oldest dropped first, everything of a session released when it ends.
// Create it with NewMemoryEventStore.
type MemoryEventStore struct {
	maxEvents int
	maxBytes  int

	mu       sync.Mutex // guards the sessions map only
	sessions map[string]*memSessionEvents
}

type memSessionEvents struct {
	mu      sync.Mutex
	streams map[string]*memStream
}

type memStream struct {
	events []StoredEvent
	bytes  int
}

// NewMemoryEventStore returns an empty in-memory store.
func NewMemoryEventStore(opts MemoryEventStoreOptions) *MemoryEventStore {
	if opts.MaxEvents < 0 {
		panic("session: MemoryEventStoreOptions.MaxEvents must be >= 0")
	}
	if opts.MaxBytes < 0 {
		panic("session: MemoryEventStoreOptions.MaxBytes must be >= 0")
	}
	m := &MemoryEventStore{maxEvents: opts.MaxEvents, maxBytes: opts.MaxBytes, sessions: map[string]*memSessionEvents{}}
	if m.maxEvents == 0 {
		m.maxEvents = DefaultMaxStreamEvents
	}
	if m.maxBytes == 0 {
		m.maxBytes = DefaultMaxStreamBytes
	}
	return m
}

func (m *MemoryEventStore) session(id string, create bool) *memSessionEvents {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[id]
	if s == nil && create {
		s = &memSessionEvents{streams: map[string]*memStream{}}
		m.sessions[id] = s
	}
	return s
}

// Append implements EventStore.
func (m *MemoryEventStore) Append(_ context.Context, sessionID, streamID string, ev StoredEvent) error {
	s := m.session(sessionID, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams[streamID]
	if st == nil {
		st = &memStream{}
		s.streams[streamID] = st
	}
	st.events = append(st.events, ev)
	st.bytes += len(ev.Data)
	drop := 0
	for len(st.events)-drop > 1 && (len(st.events)-drop > m.maxEvents || st.bytes > m.maxBytes) {
		st.bytes -= len(st.events[drop].Data)
		st.events[drop] = StoredEvent{} // release the data
		drop++
	}
	if drop > 0 {
		st.events = st.events[drop:]
	}
	return nil
}

// After implements EventStore.
func (m *MemoryEventStore) After(_ context.Context, sessionID, streamID string, seq uint64) ([]StoredEvent, error) {
	s := m.session(sessionID, false)
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams[streamID]
	if st == nil {
		return nil, nil
	}
	var out []StoredEvent
	for _, ev := range st.events {
		if ev.Seq > seq {
			out = append(out, ev)
		}
	}
	return out, nil
}

// DropStream implements EventStore.
func (m *MemoryEventStore) DropStream(_ context.Context, sessionID, streamID string) {
	s := m.session(sessionID, false)
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.streams, streamID)
	s.mu.Unlock()
}

// DropSession implements EventStore.
func (m *MemoryEventStore) DropSession(_ context.Context, sessionID string) {
	m.mu.Lock()
	delete(m.sessions, sessionID)
	m.mu.Unlock()
}

// Usage reports what the store holds: sessions and streams with events kept, the events, and
// the bytes of their data.
func (m *MemoryEventStore) Usage() (sessions, streams, events, bytes int) {
	m.mu.Lock()
	all := make([]*memSessionEvents, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		if len(s.streams) > 0 {
			sessions++
		}
		for _, st := range s.streams {
			streams++
			events += len(st.events)
			bytes += st.bytes
		}
		s.mu.Unlock()
	}
	return sessions, streams, events, bytes
}
