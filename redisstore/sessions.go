package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/session"
)

// Message kinds the session store sends on the router.
const (
	kindMessage = "mcp.message" // a client message nobody on the sender waits for (an answer, a cancel)
	kindOut     = "mcp.out"     // a message for the session's standalone stream
	kindState   = "mcp.state"   // the session's state changed: "<rev>\n<state JSON>"
	kindEnd     = "mcp.end"     // the session was deleted
)

// SessionsOptions configure the shared session store. The zero value is the secure default;
// every replica must use the same values.
type SessionsOptions struct {
	// IdleTimeout ends a session nobody used for this long (the TTL of its record, renewed by
	// requests and GETs on any replica). The record is renewed in steps, to IdleTimeout plus an
	// eighth, and a replica renews a session again only once a sixteenth of IdleTimeout passed
	// since it last did, so that most requests write nothing: an idle session ends between 17/16
	// and 9/8 of IdleTimeout after its last use. Zero means session.DefaultIdleTimeout (30
	// minutes); a negative value turns expiry off.
	IdleTimeout time.Duration
	// UnusedIdleTimeout is the TTL a record starts with at initialize, until its first renewal
	// (a later request or GET on any replica renews it, as IdleTimeout says), so that sessions
	// initialized and never used again are reclaimed sooner than sessions in use, as
	// session.MemoryOptions.UnusedIdleTimeout does. Zero means session.DefaultUnusedIdleTimeout
	// (2 minutes); negative (or a value above IdleTimeout) gives new sessions the IdleTimeout.
	UnusedIdleTimeout time.Duration
	// MaxSessions caps the sessions of all replicas together, checked atomically in Redis. Zero
	// means session.DefaultMaxSessions (10000); a negative value removes the cap.
	MaxSessions int
	// ReapInterval is how often this replica checks that the sessions it holds still exist (to
	// let go of those that expired or whose deletion it missed). Zero means
	// session.DefaultReapInterval (1 minute); a negative value panics.
	ReapInterval time.Duration
}

// Sessions is the session.Store on Redis. The record of a session (protocol version, client
// info and capabilities, log level, subscriptions, owner, Origin) is a Redis hash whose TTL is
// renewed in steps to a little over the idle timeout (SessionsOptions.IdleTimeout); a sorted set of live sessions enforces the cap across replicas. Each replica
// keeps the in-process sessions it serves (built from the record the first time a request for a
// session lands on it) and listens on their router channels: changes are written through and
// announced, a DELETE ends the session on every replica, and answers and cancels that land on
// the wrong replica are forwarded to the one waiting for them.
//
// Create it with NewSessions. For a session this replica does not serve yet, Get and GetChecked
// return its record (session.Entry.State set); the transport owning the live sessions
// (mcphttp's endpoint) builds the in-process session and hands it over with Hold
// (session.Holder), as it does with the session it created after Add. Close lets go of this
// replica's sessions without deleting them: the other replicas keep serving them.
type Sessions struct {
	r        *Router
	indexKey string // the session index (a sorted set of the live sessions)
	idle     time.Duration
	unused   time.Duration // TTL until the first renewal; 0: idle
	max      int
	every    time.Duration
	now      func() time.Time // the clock renewals are timed by (renewal.go)

	mu     sync.Mutex
	local  map[string]*held
	seen   map[string]int64    // revision of each record returned but not held yet (see Hold)
	claims map[string]struct{} // tokens of the claims this replica's requests hold (claims.go)
	closed bool
	seq    atomic.Uint64 // the last claim token issued

	// The lookups and the releases of claims on their way to Redis (lookups.go, releases.go).
	sending      sync.Mutex      // held by the pipe's round trip (tests send too)
	pl           redis.Pipeliner // the pipe's, reused
	lookups      []*lookupCall
	spareLookups []*lookupCall    // an emptied batch, for the next swap
	queued       map[string][]any // session -> field, token, ...
	spare        map[string][]any // an emptied batch, for the next swap
	nqueued      int              // claims in queued
	wake         chan struct{}    // a lookup or a release was queued (capacity 1)
	flushed      chan struct{}    // closed when the pipe returned

	stop chan struct{}
	done chan struct{}
}

// held is a session this replica serves, and the revision of the record it was built from.
type held struct {
	s       session.Live
	rev     int64
	renewed time.Time // when this replica sent the last lookup that renewed the record (renewal.go)
}

// NewSessions returns the shared store and starts its reaper and its pipe (lookups.go), stopped
// by Close. It panics on
// invalid options.
func NewSessions(r *Router, opts SessionsOptions) *Sessions {
	if r == nil {
		panic("redisstore: NewSessions needs a Router")
	}
	if opts.ReapInterval < 0 {
		panic("redisstore: SessionsOptions.ReapInterval must not be negative")
	}
	s := &Sessions{r: r, indexKey: r.prefix + "sessions", idle: opts.IdleTimeout, max: opts.MaxSessions, every: opts.ReapInterval, now: time.Now,
		local: map[string]*held{}, seen: map[string]int64{}, claims: map[string]struct{}{},
		queued: map[string][]any{}, wake: make(chan struct{}, 1), flushed: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	if s.idle == 0 {
		s.idle = session.DefaultIdleTimeout
	}
	u := opts.UnusedIdleTimeout
	if u == 0 {
		u = session.DefaultUnusedIdleTimeout
	}
	if u > 0 && (s.idle < 0 || u < s.idle) {
		s.unused = u
	}
	if s.max == 0 {
		s.max = session.DefaultMaxSessions
	}
	if s.every == 0 {
		s.every = session.DefaultReapInterval
	}
	r.Handle(kindMessage, s.onMessage)
	r.Handle(kindOut, s.onOut)
	r.Handle(kindState, s.onState)
	r.Handle(kindEnd, s.onEnd)
	go s.reap()
	go s.pipe()
	return s
}

var _ session.Holder = (*Sessions)(nil)

// Hold implements session.Holder: l is the in-process session of a record GetChecked returned
// (or of one Add stored); this replica then serves it (its changes written through, its channel
// joined). When this replica already holds the id, that session is returned and l left alone.
func (s *Sessions) Hold(ctx context.Context, l session.Live) (session.Live, error) {
	id := l.Entry().ID
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, session.ErrClosed
	}
	if h := s.local[id]; h != nil {
		s.mu.Unlock()
		return h.s, nil
	}
	// Installed under the lock, so that no request uses the session before its hooks are in
	// place; installing calls no store and no network.
	rev := s.seen[id]
	delete(s.seen, id)
	s.install(l)
	s.local[id] = &held{s: l, rev: rev}
	s.mu.Unlock()
	if err := s.r.Join(ctx, id); err != nil {
		// The subscription is retried by the pub/sub connection when it reconnects.
		s.r.log.Warn().Err(err).Msg("redisstore: joining a session's channel")
	}
	return l, nil
}

func (s *Sessions) key(id string) string { return s.r.sessionKey(id) }
func (s *Sessions) index() string        { return s.indexKey }

// keys are the keys of the per-request scripts: the record, and the index beside it unless Redis
// is a Cluster (where the index, in another slot, is kept outside these scripts).
func (s *Sessions) keys(id string) []string {
	if s.r.cluster {
		return []string{s.key(id)}
	}
	return []string{s.key(id), s.index()}
}

// indexSlack is how far past a record's expiry a Cluster's index keeps its entry: the reaper
// renews the entries of held sessions once per ReapInterval, so the cap counts a session until
// at most one interval after it expired, never less than it lives.
func (s *Sessions) indexSlack() int64 { return 2 * s.every.Milliseconds() }

func (s *Sessions) idleMillis() int64 {
	if s.idle < 0 {
		return 0
	}
	return s.idle.Milliseconds()
}

// addMillis is the TTL of a new record: UnusedIdleTimeout when it is shorter than the idle
// timeout.
func (s *Sessions) addMillis() int64 {
	if s.unused > 0 {
		return s.unused.Milliseconds()
	}
	return s.idleMillis()
}

// addScript creates a session record unless the id is taken or the cap is reached (after
// dropping expired entries of the index). It answers 1, -1 (taken) or -2 (full). On a Cluster
// KEYS[2] (the index) is absent: reserveScript checked the cap before.
var addScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if KEYS[2] then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if max > 0 and redis.call('ZCARD', KEYS[2]) >= max then return -2 end
end
redis.call('HSET', KEYS[1], 'o', ARGV[4], 'ow', ARGV[5], 'st', ARGV[6], 'rev', 1)
if idle > 0 then
  redis.call('PEXPIRE', KEYS[1], idle)
  if KEYS[2] then redis.call('ZADD', KEYS[2], now + idle, ARGV[1]) end
elseif KEYS[2] then
  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])
end
return 1
`)

// reserveScript takes a place in a Cluster's session index (its own slot) before addScript
// creates the record: after dropping expired entries it answers -2 when the cap is reached, -1
// when the id is in the index already, 1 when it added the id (ARGV: id, TTL ms or 0 for none,
// cap, slack ms).
var reserveScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local idle = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then return -2 end
local score = '+inf'
if idle > 0 then score = now + idle + tonumber(ARGV[4]) end
if redis.call('ZADD', KEYS[1], 'NX', score, ARGV[1]) == 0 then return -1 end
return 1
`)

// persistScript writes a new state and announces it on the session's channel (with ARGV[4],
// PUBLISH; empty on a Cluster, where the store announces it after); it answers the new
// revision, or nil when the session is gone.
var persistScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'st', ARGV[1])
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
if ARGV[4] ~= '' then redis.call(ARGV[4], ARGV[2], ARGV[3] .. rev .. '\n' .. ARGV[1]) end
return rev
`)

// deleteScript removes a session and announces it (with ARGV[4], PUBLISH; empty on a Cluster,
// where the store announces it after); it answers 1 when there was one.
var deleteScript = redis.NewScript(`
local n = redis.call('DEL', KEYS[1])
if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[1]) end
if n == 1 and ARGV[4] ~= '' then redis.call(ARGV[4], ARGV[2], ARGV[3]) end
return n
`)

// Add implements session.Store.
func (s *Sessions) Add(ctx context.Context, ss *session.Entry) error {
	owner := ss.Owner
	var st core.SessionState
	if ss.State != nil {
		st = *ss.State
	}
	state, err := json.Marshal(st)
	if err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return session.ErrClosed
	}
	bctx, cancel := s.r.Bound(ctx)
	defer cancel()
	n := int64(1)
	if s.r.cluster {
		n, err = reserveScript.Run(bctx, s.r.rdb, []string{s.index()}, ss.ID, s.addMillis(), s.max, s.indexSlack()).Int64()
		if err != nil {
			return fmt.Errorf("redisstore: adding a session: %w", err)
		}
	}
	if n == 1 {
		n, err = addScript.Run(bctx, s.r.rdb, s.keys(ss.ID),
			ss.ID, s.addMillis(), s.max, ss.Origin, owner, state).Int64()
		if err != nil {
			if s.r.cluster {
				s.r.rdb.ZRem(bctx, s.index(), ss.ID)
			}
			return fmt.Errorf("redisstore: adding a session: %w", err)
		}
	}
	switch n {
	case -1:
		return session.ErrExists
	case -2:
		return &session.FullError{Max: s.max}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return session.ErrClosed
	}
	s.seen[ss.ID] = 1 // the revision addScript wrote, for the Hold that follows
	return nil
}

// revision returns the revision of this replica's copy of a session (0: none).
func (s *Sessions) revision(id string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.local[id]; h != nil {
		return h.rev
	}
	return s.seen[id] // a record returned, not held yet
}

func (s *Sessions) held(id string) *held {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local[id]
}

// letGo ends this replica's copy of a session, if it holds one.
func (s *Sessions) letGo(id string) {
	if h := s.release(id); h != nil {
		s.end(id, h)
	}
}

func (s *Sessions) release(id string) *held {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.local[id]
	delete(s.local, id)
	delete(s.seen, id)
	return h
}

func (s *Sessions) end(id string, h *held) {
	h.s.End()
	_ = s.r.Leave(context.Background(), id)
}

// Get implements session.Store: one round trip that checks the record, renews it when touch is
// set and brings this replica's copy up to date.
func (s *Sessions) Get(ctx context.Context, id string, touch bool) (*session.Entry, error) {
	return s.GetChecked(ctx, id, touch, nil)
}

// GetChecked implements session.Checker: a session this replica holds is checked before the one
// round trip that renews it; a session it does not hold yet is fetched, checked, and renewed in a
// second round trip (once per session and replica), and its record returned (State set) for the
// transport to build the in-process session from and Hold.
func (s *Sessions) GetChecked(ctx context.Context, id string, touch bool, allow func(*session.Entry) bool) (*session.Entry, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, session.ErrClosed
	}
	h := s.local[id]
	var rev int64
	var known *session.Entry
	var renewed time.Time
	if h != nil {
		rev, known, renewed = h.rev, h.s.Entry(), h.renewed
	}
	s.mu.Unlock()
	if known != nil && allow != nil && !allow(known) {
		return known, session.ErrRefused
	}
	renew := touch && (known != nil || allow == nil)
	res, err := s.lookup(ctx, id, renew, rev, renewed)
	if err != nil {
		return nil, err
	}
	ss, err := s.apply(ctx, id, res)
	if err != nil {
		return nil, err
	}
	if known == nil && allow != nil {
		if !allow(ss) {
			return ss, session.ErrRefused
		}
		if touch {
			if _, err := s.lookup(ctx, id, true, s.revision(id), time.Time{}); err != nil {
				return nil, err
			}
		}
	}
	return ss, nil
}

// apply brings this replica's copy of a session in line with what lookup returned, building it
// when this replica does not hold it yet.
func (s *Sessions) apply(ctx context.Context, id string, res []any) (*session.Entry, error) {
	if len(res) == 0 {
		return nil, errors.New("redisstore: empty answer to a session lookup")
	}
	rev, err := strconv.ParseInt(fmt.Sprint(res[0]), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("redisstore: bad session revision %v", res[0])
	}
	s.mu.Lock()
	h := s.local[id]
	if h != nil && len(res) == 1 {
		s.mu.Unlock()
		return h.s.Entry(), nil
	}
	s.mu.Unlock()
	if len(res) != 4 {
		return nil, errors.New("redisstore: a session record changed under its lookup")
	}
	var rec struct {
		Origin, Owner string
		State         core.SessionState
	}
	rec.Origin, _ = res[1].(string)
	rec.Owner, _ = res[2].(string)
	st, _ := res[3].(string)
	if err := json.Unmarshal([]byte(st), &rec.State); err != nil {
		return nil, fmt.Errorf("redisstore: bad session record: %w", err)
	}
	s.mu.Lock()
	if h = s.local[id]; h != nil {
		if rev > h.rev {
			h.rev = rev
			s.mu.Unlock()
			transport.Core.Restore(h.s.Session(), rec.State)
			return h.s.Entry(), nil
		}
		s.mu.Unlock()
		return h.s.Entry(), nil
	}
	// Not served here yet: the record, for the transport to build the session from (Hold).
	s.seen[id] = rev
	s.mu.Unlock()
	return &session.Entry{ID: id, Origin: rec.Origin, Owner: rec.Owner, State: &rec.State}, nil
}

// Delete implements session.Store: the record goes, and every replica ends its copy.
func (s *Sessions) Delete(ctx context.Context, id string) bool {
	bctx, cancel := s.r.Bound(ctx)
	defer cancel()
	n, err := deleteScript.Run(bctx, s.r.rdb, s.keys(id), id,
		s.r.sessionChannel(id), kindEnd+"\n"+s.r.id+"\n"+id+"\n", s.r.publishCommand()).Int64()
	if s.r.cluster && err == nil {
		err = s.r.rdb.ZRem(bctx, s.index(), id).Err() // the index, in a slot of its own
		if n == 1 && err == nil {
			_, err = s.r.ToSession(bctx, id, kindEnd, nil)
		}
	}
	if err != nil {
		s.r.log.Warn().Err(err).Msg("redisstore: deleting a session")
	}
	local := s.held(id) != nil
	s.letGo(id)
	return n == 1 || local
}

// Len implements session.Store: the live sessions of all replicas (this replica's, when Redis
// cannot be asked).
func (s *Sessions) Len() int {
	ctx, cancel := s.r.Bound(context.Background())
	defer cancel()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	n, err := s.r.rdb.ZCount(ctx, s.index(), "("+now, "+inf").Result()
	if err != nil {
		return s.Held()
	}
	return int(n)
}

// Held returns how many sessions this replica holds in process.
func (s *Sessions) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.local)
}

// Close implements session.Store: this replica lets go of its sessions (their requests in flight
// are cancelled, their streams end) but the records stay for the other replicas.
func (s *Sessions) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	all := s.local
	s.local = map[string]*held{}
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	<-s.flushed
	for id, h := range all {
		h.s.End()
		_ = s.r.Leave(context.Background(), id)
	}
	return nil
}

// Reap lets go of the sessions this replica holds whose record is gone (expired, or deleted
// while this replica missed the announcement), in one pipelined round trip, and returns how many.
func (s *Sessions) Reap(ctx context.Context) int {
	s.mu.Lock()
	ids := make([]string, 0, len(s.local))
	for id := range s.local {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return 0
	}
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	cmds := make([]*redis.DurationCmd, len(ids))
	_, err := s.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.PTTL(ctx, s.key(id))
		}
		return nil
	})
	if err != nil {
		return 0
	}
	n := 0
	var live []redis.Z
	for i, c := range cmds {
		ttl := c.Val()
		switch {
		case ttl == -2: // no such key (go-redis answers PTTL's -2 unscaled)
			s.letGo(ids[i])
			n++
		case ttl > 0 && s.r.cluster:
			live = append(live, redis.Z{Member: ids[i], Score: float64(time.Now().Add(ttl).UnixMilli() + s.indexSlack())})
		}
	}
	if len(live) > 0 {
		// A Cluster's index is renewed here, not by each request (see indexSlack).
		s.r.rdb.ZAddXX(ctx, s.index(), live...)
	}
	return n
}

func (s *Sessions) reap() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Reap(context.Background())
		}
	}
}
