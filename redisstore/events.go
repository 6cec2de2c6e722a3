package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/session"
)

// EventStoreOptions bound what the shared event store keeps. The zero value is the default.
type EventStoreOptions struct {
	// MaxEvents is how many events a stream keeps; past it the oldest go first. Zero means
	// session.DefaultMaxStreamEvents (256); a negative value panics.
	MaxEvents int
	// MaxBytes is how many bytes of message data a stream keeps; past it the oldest events go
	// first, but the newest is always kept. Zero means session.DefaultMaxStreamBytes (1 MiB); a
	// negative value panics.
	MaxBytes int
	// TTL is how long a stream is kept after its last event, so that nothing outlives an
	// abandoned session. Zero means session.DefaultIdleTimeout (30 minutes), the idle timeout
	// of sessions; a negative value panics.
	TTL time.Duration
}

// EventStore is the session.SharedEventStore on Redis: each stream is a list of its events
// (bounded by count and bytes in the same script that appends), expiring TTL after its last
// event, so a client cut off from one replica replays with Last-Event-ID on another. A session's
// events are forgotten when the session ends for good; a replica that merely lets go of a
// session (it shuts down, or another replica deleted it) leaves them to the others while the
// session record exists.
type EventStore struct {
	r         *Router
	maxEvents int
	maxBytes  int
	ttl       time.Duration

	mu        sync.Mutex
	owned     map[string]map[string]string  // session -> stream -> its request id (JSON), for streams this process runs
	followers map[string]map[int]func(bool) // "<session>:<stream>" -> the wakes of the GETs following it here
	next      int
}

var _ session.FollowedEventStore = (*EventStore)(nil)

// NewEventStore returns the shared event store. It panics on invalid options.
func NewEventStore(r *Router, opts EventStoreOptions) *EventStore {
	if r == nil {
		panic("redisstore: NewEventStore needs a Router")
	}
	switch {
	case opts.MaxEvents < 0:
		panic("redisstore: EventStoreOptions.MaxEvents must not be negative")
	case opts.MaxBytes < 0:
		panic("redisstore: EventStoreOptions.MaxBytes must not be negative")
	case opts.TTL < 0:
		panic("redisstore: EventStoreOptions.TTL must not be negative")
	}
	e := &EventStore{r: r, maxEvents: opts.MaxEvents, maxBytes: opts.MaxBytes, ttl: opts.TTL}
	if e.maxEvents == 0 {
		e.maxEvents = session.DefaultMaxStreamEvents
	}
	if e.maxBytes == 0 {
		e.maxBytes = session.DefaultMaxStreamBytes
	}
	if e.ttl == 0 {
		e.ttl = session.DefaultIdleTimeout
	}
	e.owned = map[string]map[string]string{}
	e.followers = map[string]map[int]func(bool){}
	e.startFollowing()
	return e
}

// Keys of a session share its hash tag, so a session's keys live in one slot.
func (e *EventStore) list(sessionID, streamID string) string {
	return e.r.prefix + "e:{" + sessionID + "}:" + streamID
}
func (e *EventStore) bytesKey(sessionID, streamID string) string {
	return e.r.prefix + "eb:{" + sessionID + "}:" + streamID
}
func (e *EventStore) streams(sessionID string) string { return e.r.prefix + "es:{" + sessionID + "}" }

// ownerKey holds "<replica>\n<request id>" of a stream a replica runs (see Own).
func (e *EventStore) ownerKey(sessionID, streamID string) string {
	return e.r.prefix + "eo:{" + sessionID + "}:" + streamID
}

// appendScript pushes "<seq>:<data>" and trims the oldest events while the stream holds more
// than one event and is over either bound. KEYS: list, bytes, the session's streams, the owner
// key. ARGV: entry, data length, max events, max bytes, TTL ms, stream id, the owner record (""
// for none), and a channel and message to PUBLISH ("" for none) that wakes the stream's
// followers.
var appendScript = redis.NewScript(`
redis.call('RPUSH', KEYS[1], ARGV[1])
local b = redis.call('INCRBY', KEYS[2], ARGV[2])
local n = redis.call('LLEN', KEYS[1])
local maxE, maxB = tonumber(ARGV[3]), tonumber(ARGV[4])
while n > 1 and (n > maxE or b > maxB) do
  local old = redis.call('LPOP', KEYS[1])
  local i = string.find(old, ':', 1, true)
  b = redis.call('DECRBY', KEYS[2], #old - i)
  n = n - 1
end
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
if ARGV[7] ~= '' then redis.call('SET', KEYS[4], ARGV[7], 'PX', ARGV[5]) end
if ARGV[8] ~= '' then redis.call('PUBLISH', ARGV[8], ARGV[9]) end
return n
`)

// dropSessionScript forgets a session's streams, unless its record still exists (this replica
// let go of a session the others still serve).
var dropSessionScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local ids = redis.call('SMEMBERS', KEYS[1])
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id, ARGV[2] .. id, ARGV[3] .. id)
end
redis.call('DEL', KEYS[1])
return #ids
`)

// Append implements session.EventStore: one round trip (two on a Cluster for a stream this
// process owns, whose followers are woken after the script).
func (e *EventStore) Append(ctx context.Context, sessionID, streamID string, ev session.StoredEvent) error {
	entry := make([]byte, 0, 21+len(ev.Data))
	entry = strconv.AppendUint(entry, ev.Seq, 10)
	entry = append(entry, ':')
	entry = append(entry, ev.Data...)
	owner, ch, wake := e.ownerRecord(sessionID, streamID)
	ctx, cancel := e.r.Bound(ctx)
	defer cancel()
	pub, msg := ch, wake
	if e.r.cluster {
		pub, msg = "", nil
	}
	err := appendScript.Run(ctx, e.r.rdb,
		[]string{e.list(sessionID, streamID), e.bytesKey(sessionID, streamID), e.streams(sessionID), e.ownerKey(sessionID, streamID)},
		entry, len(ev.Data), e.maxEvents, e.maxBytes, e.ttl.Milliseconds(), streamID, owner, pub, msg).Err()
	if err != nil {
		return fmt.Errorf("redisstore: storing an event: %w", err)
	}
	if e.r.cluster && ch != "" {
		e.wakeOnCluster(ctx, ch, wake)
	}
	return nil
}

// After implements session.EventStore.
func (e *EventStore) After(ctx context.Context, sessionID, streamID string, seq uint64) ([]session.StoredEvent, error) {
	ctx, cancel := e.r.Bound(ctx)
	defer cancel()
	items, err := e.r.rdb.LRange(ctx, e.list(sessionID, streamID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: reading events: %w", err)
	}
	var out []session.StoredEvent
	for _, it := range items {
		num, data, ok := strings.Cut(it, ":")
		n, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil {
			return nil, errors.New("redisstore: a malformed stored event")
		}
		if n > seq {
			out = append(out, session.StoredEvent{Seq: n, Data: []byte(data)})
		}
	}
	return out, nil
}

// Has implements session.SharedEventStore.
func (e *EventStore) Has(ctx context.Context, sessionID, streamID string) (bool, error) {
	ctx, cancel := e.r.Bound(ctx)
	defer cancel()
	n, err := e.r.rdb.Exists(ctx, e.list(sessionID, streamID)).Result()
	if err != nil {
		return false, fmt.Errorf("redisstore: looking a stream up: %w", err)
	}
	return n == 1, nil
}

// DropStream implements session.EventStore.
func (e *EventStore) DropStream(ctx context.Context, sessionID, streamID string) {
	ctx, cancel := e.r.Bound(ctx)
	defer cancel()
	e.disown(sessionID, streamID)
	_, err := e.r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, e.list(sessionID, streamID), e.bytesKey(sessionID, streamID), e.ownerKey(sessionID, streamID))
		p.SRem(ctx, e.streams(sessionID), streamID)
		return nil
	})
	if err != nil {
		e.r.log.Warn().Err(err).Msg("redisstore: forgetting a stream (it expires by itself)")
	}
}

// DropSession implements session.EventStore: the session's streams go once its record is gone.
func (e *EventStore) DropSession(ctx context.Context, sessionID string) {
	e.mu.Lock()
	delete(e.owned, sessionID)
	e.mu.Unlock()
	ctx, cancel := e.r.Bound(ctx)
	defer cancel()
	err := dropSessionScript.Run(ctx, e.r.rdb, []string{e.streams(sessionID), e.r.sessionKey(sessionID)},
		e.r.prefix+"e:{"+sessionID+"}:", e.r.prefix+"eb:{"+sessionID+"}:", e.r.prefix+"eo:{"+sessionID+"}:").Err()
	if err != nil {
		e.r.log.Warn().Err(err).Msg("redisstore: forgetting a session's events (they expire by themselves)")
	}
}
