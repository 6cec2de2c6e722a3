package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
)

// TaskStore is the tasks.Store of the tasks extension on Redis: a task created on one replica
// is readable, updatable and cancellable from every replica. Each task is one key holding its
// JSON record, expiring with the task's TTL; a sorted set of every task (by expiry) and, per
// owner, one of its unfinished and one of its finished tasks (by expiry) enforce the limits in
// the same script that creates the task, evicting the owner's finished task that expires first
// when a bound is reached (tasks.Limits).
// Updates are optimistic transactions on the task's key (WATCH, then MULTI/EXEC, retried on a
// conflict), so two replicas never interleave a read-modify-write of one task.
//
// It is also a tasks.Signaler: the replica running a task's handler joins the task's channel
// on the router, and a tasks/update or tasks/cancel served elsewhere reaches it there (at most
// once, like every message of the router).
type TaskStore struct {
	r   *Router
	now func() time.Time

	mu       sync.Mutex
	watchers map[string]map[int]func(tasks.Signal)
	next     int
	orphaned []func(ctx context.Context, id string) error // OnOrphaned
}

// TaskStoreOptions configure a TaskStore. The zero value is the default.
type TaskStoreOptions struct {
	// Now, when set, replaces time.Now for expiry (tests); it must agree with
	// tasks.Options.Now.
	Now func() time.Time
}

// kindTask is the router kind of task signals.
const kindTask = "mcp.task"

// maxTaskRetries bounds the optimistic retries of one Update under contention.
const maxTaskRetries = 50

// NewTaskStore returns a task store on the router's Redis.
func NewTaskStore(r *Router, opts TaskStoreOptions) *TaskStore {
	if r == nil {
		panic("redisstore: NewTaskStore needs a Router")
	}
	s := &TaskStore{r: r, now: opts.Now, watchers: map[string]map[int]func(tasks.Signal){}}
	if s.now == nil {
		s.now = time.Now
	}
	r.Handle(kindTask, s.receive)
	r.OnLapse(s.lapsed)
	return s
}

func (s *TaskStore) key(id string) string { return s.r.Key("t:{", id, "}") }
func (s *TaskStore) index() string        { return s.r.Key(s.tag()) }
func (s *TaskStore) open(owner string) string {
	if s.r.cluster {
		return s.r.Key("{tasks}:to:", owner)
	}
	return s.r.Key("to:", owner)
}

// running is the sorted set of the unfinished tasks a replica runs (by expiry), which a
// surviving replica reads when that replica's lease lapses.
func (s *TaskStore) running(replica string) string {
	if s.r.cluster {
		return s.r.Key("{tasks}:tr:", replica)
	}
	return s.r.Key("tr:", replica)
}
func (s *TaskStore) done(owner string) string {
	if s.r.cluster {
		return s.r.Key("{tasks}:td:", owner)
	}
	return s.r.Key("td:", owner)
}

// tag is what the limit keys start with: on a Cluster one hash tag for the index and every
// owner's sets, so that the limits are checked in one slot (the task's record is in its own).
func (s *TaskStore) tag() string {
	if s.r.cluster {
		return "{tasks}"
	}
	return "tasks"
}
func (s *TaskStore) channel(id string) string       { return "task:" + id }
func taskFromChannel(session string) (string, bool) { return strings.CutPrefix(session, "task:") }

// taskRecord is the stored form of a tasks.Task.
type taskRecord struct {
	ID            string                     `json:"id"`
	Owner         string                     `json:"owner"`
	Runner        string                     `json:"runner,omitempty"`
	Status        tasks.Status               `json:"status"`
	StatusMessage string                     `json:"statusMessage,omitempty"`
	CreatedAt     time.Time                  `json:"createdAt"`
	LastUpdatedAt time.Time                  `json:"lastUpdatedAt"`
	TTLMs         int64                      `json:"ttlMs,omitempty"`
	PollMs        int64                      `json:"pollMs,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result        json.RawMessage            `json:"result,omitempty"`
	Error         *jsonrpc.Error             `json:"error,omitempty"`
}

func recordOf(t *tasks.Task) taskRecord {
	return taskRecord{ID: t.ID, Owner: t.Owner, Runner: t.Runner, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL.Milliseconds(),
		PollMs: t.PollInterval.Milliseconds(), InputRequests: t.InputRequests, Result: t.Result, Error: t.Error}
}

func (rec taskRecord) task() *tasks.Task {
	return &tasks.Task{ID: rec.ID, Owner: rec.Owner, Runner: rec.Runner, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: rec.CreatedAt, LastUpdatedAt: rec.LastUpdatedAt, TTL: time.Duration(rec.TTLMs) * time.Millisecond,
		PollInterval: time.Duration(rec.PollMs) * time.Millisecond, InputRequests: rec.InputRequests,
		Result: rec.Result, Error: rec.Error}
}

// expiry is the unix-millisecond expiry of a task; a task without TTL gets the far future.
func expiry(t *tasks.Task) int64 {
	if t.TTL <= 0 {
		return 1 << 62
	}
	return t.CreatedAt.Add(t.TTL).UnixMilli()
}

// createTaskScript stores a new task after dropping expired entries from the indexes and
// checking the limits, evicting the owner's finished tasks that expire first while a bound is
// reached. KEYS: task, index, owner's open set, owner's done set, the runner's set of running
// tasks. ARGV: record, expiry ms, now ms, max tasks (-1 none), max per owner (-1 none), id, open
// (1 when not terminal), and the text before and after the id in a task's key (the victims'
// keys).
var createTaskScript = redis.NewScript(`
for i = 2, 5 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[3]) end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
local max, per = tonumber(ARGV[4]), tonumber(ARGV[5])
while (max >= 0 and redis.call('ZCARD', KEYS[2]) >= max) or
      (per >= 0 and redis.call('ZCARD', KEYS[3]) + redis.call('ZCARD', KEYS[4]) >= per) do
  local victim = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  if not victim then return 'limit' end
  redis.call('DEL', ARGV[8] .. victim .. ARGV[9])
  redis.call('ZREM', KEYS[2], victim)
  redis.call('ZREM', KEYS[4], victim)
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[6])
local sets = {KEYS[4]}
if ARGV[7] == '1' then sets = {KEYS[3], KEYS[5]} end
for _, set in ipairs(sets) do
  redis.call('ZADD', set, ARGV[2], ARGV[6])
  local last = redis.call('ZREVRANGE', set, 0, 0, 'WITHSCORES')
  redis.call('PEXPIREAT', set, last[2])
end
return 'ok'
`)

// reserveTaskScript is createTaskScript's limits on a Cluster, in the limit keys' slot: KEYS:
// index, owner's open set, owner's done set, the runner's set; ARGV as createTaskScript's from the second to the
// seventh. It answers {'ok', evicted ids...}, {'limit'} or {'exists'}: the record is then
// created on its own (SET NX), the evicted tasks' records deleted in their own slots, and the
// reservation dropped when the id was taken.
var reserveTaskScript = redis.NewScript(`
for i = 1, 4 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[2]) end
if redis.call('ZSCORE', KEYS[1], ARGV[5]) then return {'exists'} end
local max, per = tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {'ok'}
while (max >= 0 and redis.call('ZCARD', KEYS[1]) >= max) or
      (per >= 0 and redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3]) >= per) do
  local victim = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
  if not victim then return {'limit'} end
  redis.call('ZREM', KEYS[1], victim)
  redis.call('ZREM', KEYS[3], victim)
  out[#out + 1] = victim
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
local sets = {KEYS[3]}
if ARGV[6] == '1' then sets = {KEYS[2], KEYS[4]} end
for _, set in ipairs(sets) do
  redis.call('ZADD', set, ARGV[1], ARGV[5])
  local last = redis.call('ZREVRANGE', set, 0, 0, 'WITHSCORES')
  redis.call('PEXPIREAT', set, last[2])
end
return out
`)

// finishTaskScript moves a task that became terminal from its owner's open set to the done set
// (the ones evicted first), which lives as long as its last member, and out of its runner's set.
// KEYS: open set, done set, runner's set. ARGV: id, expiry ms.
var finishTaskScript = redis.NewScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local last = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], last[2])
return 1
`)

// taskKeyAround returns the text before and after the id in a task's key.
func (s *TaskStore) taskKeyAround() (string, string) {
	pre, post, _ := strings.Cut(s.key("\x00"), "\x00")
	return pre, post
}

// Create implements tasks.Store. It records this replica as the task's runner (Task.Runner,
// unless set), as the replica that created a task runs its handler.
func (s *TaskStore) Create(ctx context.Context, t *tasks.Task, limits tasks.Limits) error {
	rec := recordOf(t)
	if rec.Runner == "" {
		rec.Runner = s.r.ID()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	open := "0"
	if !t.Status.Terminal() {
		open = "1"
	}
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	var res string
	if s.r.cluster {
		res, err = s.createOnCluster(ctx, t, rec.Runner, b, limits, open)
	} else {
		pre, post := s.taskKeyAround()
		res, err = createTaskScript.Run(ctx, s.r.rdb, []string{s.key(t.ID), s.index(), s.open(t.Owner), s.done(t.Owner), s.running(rec.Runner)},
			b, expiry(t), s.now().UnixMilli(), limits.MaxTasks, limits.MaxPerOwner, t.ID, open, pre, post).Text()
	}
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: creating task: %w", unavailable(err))
	case res == "limit":
		return tasks.ErrLimit
	case res == "exists":
		return errors.New("redisstore: task id already in use")
	}
	return nil
}

// createOnCluster is Create's script in two slots: the limits and the reservation, then the
// record.
func (s *TaskStore) createOnCluster(ctx context.Context, t *tasks.Task, runner string, rec []byte, limits tasks.Limits, open string) (string, error) {
	out, err := reserveTaskScript.Run(ctx, s.r.rdb, []string{s.index(), s.open(t.Owner), s.done(t.Owner), s.running(runner)},
		expiry(t), s.now().UnixMilli(), limits.MaxTasks, limits.MaxPerOwner, t.ID, open).StringSlice()
	if err != nil || len(out) == 0 || out[0] != "ok" {
		if len(out) > 0 {
			return out[0], err
		}
		return "", err
	}
	for _, victim := range out[1:] { // evicted in the limits' slot; their records are in their own
		if err := s.r.rdb.Del(ctx, s.key(victim)).Err(); err != nil {
			return "", err
		}
	}
	created, err := s.r.rdb.SetArgs(ctx, s.key(t.ID), rec, redis.SetArgs{Mode: "NX", ExpireAt: time.UnixMilli(expiry(t))}).Result()
	taken := errors.Is(err, redis.Nil) || (err == nil && created != "OK")
	if err == nil && !taken {
		return "ok", nil
	}
	// Drop the reservation, also when the request's deadline is what failed the SET.
	drop := context.WithoutCancel(ctx)
	s.r.rdb.ZRem(drop, s.index(), t.ID)
	s.r.rdb.ZRem(drop, s.open(t.Owner), t.ID)
	s.r.rdb.ZRem(drop, s.done(t.Owner), t.ID)
	s.r.rdb.ZRem(drop, s.running(runner), t.ID)
	if taken {
		return "exists", nil
	}
	return "", err
}

// unavailable marks an error of a Redis call as core.ErrUnavailable (answered 503 on HTTP)
// unless Redis itself answered it (a reply error says the command was wrong, not that Redis is
// out of reach).
func unavailable(err error) error {
	var reply redis.Error
	if errors.As(err, &reply) || errors.Is(err, core.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", core.ErrUnavailable, err)
}

// Get implements tasks.Store.
func (s *TaskStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	b, err := s.r.rdb.Get(ctx, s.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, tasks.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: reading task: %w", unavailable(err))
	}
	return s.decode(b)
}

// GetMany implements tasks.Store: one pipelined GET per id, in one round trip.
func (s *TaskStore) GetMany(ctx context.Context, ids []string) (map[string]*tasks.Task, error) {
	out := make(map[string]*tasks.Task, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := s.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, s.key(id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("redisstore: reading tasks: %w", unavailable(err))
	}
	for i, cmd := range cmds {
		b, err := cmd.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("redisstore: reading tasks: %w", unavailable(err))
		}
		if t, err := s.decode(b); err == nil {
			out[ids[i]] = t
		}
	}
	return out, nil
}

func (s *TaskStore) decode(b []byte) (*tasks.Task, error) {
	var rec taskRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("redisstore: undecodable task record: %w", err)
	}
	t := rec.task()
	if t.Expired(s.now()) {
		return nil, tasks.ErrNotFound
	}
	return t, nil
}

// Update implements tasks.Store.
func (s *TaskStore) Update(ctx context.Context, id string, fn func(t *tasks.Task) error) (*tasks.Task, error) {
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	key := s.key(id)
	var out *tasks.Task
	for range maxTaskRetries {
		var fnErr error
		err := s.r.rdb.Watch(ctx, func(tx *redis.Tx) error {
			b, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				return tasks.ErrNotFound
			}
			if err != nil {
				return err
			}
			cur, err := s.decode(b)
			if err != nil {
				return err
			}
			next := cur.Clone()
			if fnErr = fn(next); fnErr != nil {
				return fnErr
			}
			next.ID, next.Owner, next.Runner = cur.ID, cur.Owner, cur.Runner
			if cur.Status.Terminal() {
				next.Status = cur.Status
			}
			nb, err := json.Marshal(recordOf(next))
			if err != nil {
				return err
			}
			if err = s.write(ctx, tx, key, cur, next, nb); err == nil {
				out = next
			}
			return err
		}, key)
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, redis.TxFailedErr):
			continue // another replica changed the task meanwhile: read it again
		case fnErr != nil && errors.Is(err, fnErr):
			return nil, fnErr
		case errors.Is(err, tasks.ErrNotFound):
			return nil, err
		default:
			return nil, fmt.Errorf("redisstore: updating task: %w", unavailable(err))
		}
	}
	return nil, errors.New("redisstore: updating task: too much contention")
}

// write stores the updated record nb of a task in Update's transaction, and takes a task that
// just finished from its owner's open set to its done set: in the transaction, or on a Cluster (where
// those sets are in another slot) after it (a task left open by a crash in between leaves with its expiry).
func (s *TaskStore) write(ctx context.Context, tx *redis.Tx, key string, cur, next *tasks.Task, nb []byte) error {
	closing := !cur.Status.Terminal() && next.Status.Terminal()
	sets := []string{s.open(cur.Owner), s.done(cur.Owner), s.running(cur.Runner)}
	_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SetArgs(ctx, key, nb, redis.SetArgs{KeepTTL: true})
		if closing && !s.r.cluster {
			finishTaskScript.Eval(ctx, p, sets, cur.ID, expiry(cur))
		}
		return nil
	})
	if err == nil && closing && s.r.cluster {
		err = finishTaskScript.Run(ctx, s.r.rdb, sets, cur.ID, expiry(cur)).Err()
	}
	return err
}

// Watch implements tasks.Signaler: this replica joins the task's channel.
func (s *TaskStore) Watch(ctx context.Context, id string, f func(tasks.Signal)) (func(), error) {
	s.mu.Lock()
	s.next++
	n := s.next
	if s.watchers[id] == nil {
		s.watchers[id] = map[int]func(tasks.Signal){}
	}
	s.watchers[id][n] = f
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.watchers[id], n)
		if len(s.watchers[id]) == 0 {
			delete(s.watchers, id)
		}
		s.mu.Unlock()
	}
	if err := s.r.Join(ctx, s.channel(id)); err != nil {
		forget()
		return nil, unavailable(err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			forget()
			ctx, cancel := context.WithTimeout(context.Background(), s.r.timeout)
			defer cancel()
			if err := s.r.Leave(ctx, s.channel(id)); err != nil {
				s.r.log.Warn().Err(err).Str("task", id).Msg("redisstore: leaving a task's channel")
			}
		})
	}, nil
}

// Signal implements tasks.Signaler: tasks.ErrNotRunning when no replica is on the task's
// channel (the process running its handler is gone: its subscription ended with its connection).
func (s *TaskStore) Signal(ctx context.Context, id string, sig tasks.Signal) error {
	b, err := json.Marshal(sig)
	if err != nil {
		return err
	}
	n, err := s.r.ToSession(ctx, s.channel(id), kindTask, b)
	if err != nil {
		return unavailable(err)
	}
	if n == 0 {
		return tasks.ErrNotRunning
	}
	return nil
}

// receive hands a signal from the bus to the watchers of its task in this process.
func (s *TaskStore) receive(e Envelope) {
	id, ok := taskFromChannel(e.Session)
	if !ok {
		return
	}
	var sig tasks.Signal
	if err := json.Unmarshal(e.Payload, &sig); err != nil {
		s.r.log.Warn().Err(err).Msg("redisstore: undecodable task signal")
		return
	}
	s.mu.Lock()
	fs := make([]func(tasks.Signal), 0, len(s.watchers[id]))
	for _, f := range s.watchers[id] {
		fs = append(fs, f)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f(sig)
	}
}

// Alive implements tasks.Supervisor: the lease of the task's runner (Router.Alive).
func (s *TaskStore) Alive(ctx context.Context, t *tasks.Task) (bool, error) {
	if t.Runner == "" || t.Runner == s.r.ID() {
		return true, nil
	}
	alive, err := s.r.Alive(ctx, t.Runner)
	if err != nil {
		return false, unavailable(err)
	}
	return alive, nil
}

// OnOrphaned implements tasks.Supervisor: when a replica's lease lapses (Router.OnLapse), the
// replica that claims it calls f with each unfinished task the lapsed replica ran.
func (s *TaskStore) OnOrphaned(f func(ctx context.Context, id string) error) {
	s.mu.Lock()
	s.orphaned = append(s.orphaned, f)
	s.mu.Unlock()
}

// lapsed hands the unfinished tasks of a replica whose lease lapsed to the OnOrphaned
// functions, then forgets the replica's set; when a function failed for some task, the set
// keeps that task and the error makes the lapse run again later (Router.OnLapse).
func (s *TaskStore) lapsed(ctx context.Context, replica string) error {
	s.mu.Lock()
	fs := s.orphaned
	s.mu.Unlock()
	if len(fs) == 0 {
		return nil
	}
	bctx, cancel := s.r.Bound(ctx)
	ids, err := s.r.rdb.ZRangeByScore(bctx, s.running(replica), &redis.ZRangeBy{Min: "(" + strconv.FormatInt(s.now().UnixMilli(), 10), Max: "+inf"}).Result()
	cancel()
	if err != nil {
		return fmt.Errorf("redisstore: reading the tasks of a lapsed replica: %w", err)
	}
	var failed error
	done := make([]any, 0, len(ids))
	for _, id := range ids {
		ok := true
		for _, f := range fs {
			if err := f(ctx, id); err != nil {
				failed, ok = err, false
			}
		}
		if ok {
			done = append(done, id)
		}
	}
	bctx, cancel = s.r.Bound(ctx)
	defer cancel()
	if failed == nil {
		err = s.r.rdb.Del(bctx, s.running(replica)).Err()
	} else if len(done) > 0 {
		err = s.r.rdb.ZRem(bctx, s.running(replica), done...).Err()
	}
	if err != nil {
		s.r.log.Warn().Err(err).Str("replica", replica).Msg("redisstore: forgetting the tasks of a lapsed replica (they expire by themselves)")
	}
	if failed != nil {
		return fmt.Errorf("redisstore: failing the tasks of a lapsed replica: %w", failed)
	}
	return nil
}
