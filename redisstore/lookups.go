package redisstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The lookups of concurrent requests share round trips. A request queues its lookup (getScript's
// keys and arguments) and waits for its reply; the store's one pipe goroutine, woken by it, takes
// every lookup and every release queued (releases.go), sends them in one pipeline (an EVALSHA
// per lookup, carrying the releases queued for its session, and a releaseScript per other
// session with releases queued) and hands each caller its own reply. It does not wait for more
// to gather: it lets the goroutines that are ready to run go first (one yield), then sends what
// is queued; what queues up while a round trip is under way goes in the next. A lone request
// costs one round trip as before; under load Redis reads and answers many scripts per read and
// write of its socket, which is most of what a lookup costs it beside the script.
//
// A caller whose context ends stops waiting at once. Its lookup is then left out if it was not
// sent yet; once sent, the pipe handles its outcome: a claim its script took is released, and
// when it failed, what it carried is queued again (lookupFailed), as for a caller that waited.
// A round trip of several commands runs under the router's timeout and the values (a trace, say)
// of the context of its first lookup, not under any caller's cancellation; a lone lookup runs
// under its caller's context (bounded by the timeout too), as it did before it had company.

// The states of a lookup on its way through the pipe.
const (
	callQueued    int32 = iota // queued or sent, its caller waiting
	callAbandoned              // its caller stopped waiting: the pipe handles its outcome
	callDone                   // its reply handed to its caller
)

// lookupCall is one lookup on its way through the pipe.
type lookupCall struct {
	ctx          context.Context // its caller's, for the values of the round trip
	id           string
	keys         []string
	argv         []any  // getScript's ARGV: the caller's six, then the releases the pipe adds
	field, token string // the claim it takes ("" for none)
	released     []any  // the releases it carries, added by the pipe
	cmd          *redis.Cmd
	res          []any
	err          error
	state        atomic.Int32
	done         chan struct{} // its reply is ready (capacity 1)
}

var lookupCalls = sync.Pool{New: func() any {
	return &lookupCall{argv: make([]any, 0, 16), done: make(chan struct{}, 1)}
}}

// recycle empties c and gives it back to the pool.
func recycle(c *lookupCall) {
	clear(c.argv)
	c.ctx, c.keys, c.argv, c.released, c.cmd, c.res, c.err = nil, nil, c.argv[:0], nil, nil, nil, nil
	lookupCalls.Put(c)
}

// runLookup runs getScript with args (its first six ARGV) for a lookup of session id, through the
// pipe (at once, once the store is closed), and returns its reply.
func (s *Sessions) runLookup(ctx context.Context, id string, args *[6]any, field, token string) ([]any, error) {
	if s.r.cluster {
		// A Cluster pipeline answers when its slowest node does: one node down or failing over
		// would hold up the lookups of every session, and those queued behind them. Each lookup
		// goes to its own node alone; the nodes share Redis's socket work between them.
		return s.runAlone(ctx, id, s.keys(id), args[:], field, token)
	}
	c := lookupCalls.Get().(*lookupCall)
	c.ctx, c.id, c.keys, c.field, c.token = ctx, id, s.keys(id), field, token
	c.argv = append(c.argv, args[:]...)
	c.state.Store(callQueued)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		res, err := s.runAlone(ctx, id, c.keys, c.argv, field, token)
		recycle(c)
		return res, err
	}
	s.lookups = append(s.lookups, c)
	s.wakePipe()
	s.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		if c.state.CompareAndSwap(callQueued, callAbandoned) {
			return nil, ctx.Err() // c is the pipe's now
		}
		<-c.done // its reply came first
	}
	res, err := c.res, c.err
	recycle(c)
	return res, err
}

// runAlone runs getScript for a lookup of session id on its own, on its caller's context; a
// failure queues the release of the claim it may have taken (lookupFailed).
func (s *Sessions) runAlone(ctx context.Context, id string, keys []string, argv []any, field, token string) ([]any, error) {
	res, err := getScript.Run(ctx, s.r.rdb, keys, argv...).Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		s.lookupFailed(id, nil, field, token)
	}
	return res, err
}

// wakePipe wakes the pipe goroutine, unless it is awake already. The caller holds s.mu.
func (s *Sessions) wakePipe() {
	select {
	case s.wake <- struct{}{}:
	default: // the pipe is awake already, and takes what was queued too
	}
}

// pipe is the store's pipe goroutine: woken by each queued lookup or release, it sends
// everything queued (sendQueued); when Redis failed some releases, it sends them again after
// releaseRetryDelay unless woken sooner. At Close it sends what is left and returns.
func (s *Sessions) pipe() {
	defer close(s.flushed)
	retry := time.NewTimer(releaseRetryDelay)
	retry.Stop()
	defer retry.Stop()
	for {
		select {
		case <-s.stop:
			s.sendQueued()
			return
		case <-s.wake:
			runtime.Gosched() // the requests ready to run queue their lookups first
		case <-retry.C:
		}
		if s.sendQueued() {
			retry.Reset(releaseRetryDelay)
		}
	}
}

// sendQueued sends every queued lookup and release in one pipeline (see the top of the file) and
// hands the lookups their replies. It reports whether Redis failed releases (queued again).
func (s *Sessions) sendQueued() (failed bool) {
	s.sending.Lock()
	defer s.sending.Unlock()
	s.mu.Lock()
	calls, batch := s.lookups, s.queued
	if len(calls) == 0 && len(batch) == 0 {
		s.mu.Unlock()
		return false
	}
	s.lookups, s.spareLookups = s.spareLookups, nil
	if len(batch) == 0 {
		batch = nil // s.queued stays: nothing to take
	} else {
		s.queued, s.spare = s.spare, nil
		if s.queued == nil {
			s.queued = map[string][]any{}
		}
		s.nqueued = 0
	}
	s.mu.Unlock()

	calls = s.ride(calls, batch)
	failed = s.send(calls, batch)

	clear(calls)
	clear(batch)
	s.mu.Lock()
	if s.spareLookups == nil {
		s.spareLookups = calls[:0]
	}
	if s.spare == nil && batch != nil {
		s.spare = batch
	}
	s.mu.Unlock()
	return failed
}

// ride leaves out the lookups whose callers stopped waiting before they were sent, and moves
// onto the first lookup of each session the releases queued for it (at most
// maxRidingReleases, out of batch); it returns the lookups to send.
func (s *Sessions) ride(calls []*lookupCall, batch map[string][]any) []*lookupCall {
	n := 0
	for _, c := range calls {
		if c.state.Load() == callAbandoned {
			recycle(c) // not sent: it took nothing, and the releases it would carry stay in batch
			continue
		}
		calls[n] = c
		n++
		q := batch[c.id]
		if len(q) == 0 {
			continue
		}
		if len(q) > 2*maxRidingReleases {
			batch[c.id] = q[2*maxRidingReleases:]
			q = q[:2*maxRidingReleases]
		} else {
			delete(batch, c.id)
		}
		c.released = q[:len(q):len(q)] // lookupFailed may append to it: not over what batch keeps
		c.argv = append(c.argv, q...)
	}
	clear(calls[n:])
	return calls[:n]
}

// send sends calls and the releases of batch in one round trip (a pipeline, unless there is one
// script), then hands each lookup its outcome (delivered) and handles the releases' (released);
// it reports whether Redis failed releases. The caller holds s.sending.
func (s *Sessions) send(calls []*lookupCall, batch map[string][]any) (failed bool) {
	ctx, cancel := s.pipeContext(calls, batch)
	defer cancel()
	ids, rcmds := s.guardedRoundTrip(ctx, calls, batch)
	for _, c := range calls {
		s.delivered(c)
	}
	for i, c := range rcmds {
		if s.released(ids[i], batch[ids[i]], c.Err()) {
			failed = true
		}
	}
	return failed
}

// pipeContext is the context of a round trip: a lone lookup's own (bounded already), else the
// router's timeout over the values of the first lookup's, without its cancellation.
func (s *Sessions) pipeContext(calls []*lookupCall, batch map[string][]any) (context.Context, context.CancelFunc) {
	if len(calls) == 1 && len(batch) == 0 {
		return calls[0].ctx, func() {} // its caller's end fails the lookup, as it would without the pipe
	}
	base := context.Background()
	if len(calls) > 0 {
		base = context.WithoutCancel(calls[0].ctx)
	}
	return s.r.Bound(base)
}

// roundTrip sends the scripts of calls (setting each one's cmd) and of batch, and returns the
// sessions of batch in the order of their commands.
func (s *Sessions) roundTrip(ctx context.Context, calls []*lookupCall, batch map[string][]any) ([]string, []*redis.Cmd) {
	ids := make([]string, 0, len(batch))
	rcmds := make([]*redis.Cmd, 0, len(batch))
	switch {
	case len(calls) == 1 && len(batch) == 0: // one script: Run, which loads it when Redis lacks it
		c := calls[0]
		c.cmd = getScript.Run(ctx, s.r.rdb, c.keys, c.argv...)
	case len(calls) == 0 && len(batch) == 1:
		for id, pairs := range batch {
			ids = append(ids, id)
			rcmds = append(rcmds, releaseScript.Run(ctx, s.r.rdb, []string{s.key(id)}, pairs...))
		}
	default:
		if s.pl == nil {
			s.pl = s.r.rdb.Pipeline() // kept: the pipe sends one pipeline at a time
		}
		for _, c := range calls {
			c.cmd = getScript.EvalSha(ctx, s.pl, c.keys, c.argv...)
		}
		for id, pairs := range batch {
			ids = append(ids, id)
			rcmds = append(rcmds, releaseScript.EvalSha(ctx, s.pl, []string{s.key(id)}, pairs...))
		}
		_, _ = s.pl.Exec(ctx)
		if noScript(calls, rcmds) {
			s.evalRefused(ctx, calls, ids, rcmds, batch)
		}
	}
	return ids, rcmds
}

// guardedRoundTrip is roundTrip, with a panic in it (in a Redis hook of the application's, say)
// made the error of each of its commands: on the request's goroutine the panic would have been
// that request's (a 500 from middleware.Recover); here it must not end the process or the pipe.
func (s *Sessions) guardedRoundTrip(ctx context.Context, calls []*lookupCall, batch map[string][]any) (ids []string, rcmds []*redis.Cmd) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		err := fmt.Errorf("redisstore: a Redis round trip panicked: %v", p)
		s.r.log.Error().Err(err).Msg("redisstore: session lookups failed")
		s.pl = nil // it may hold commands of the round trip that panicked
		failed := func() *redis.Cmd {
			c := redis.NewCmd(ctx)
			c.SetErr(err)
			return c
		}
		for _, c := range calls {
			c.cmd = failed()
		}
		ids, rcmds = ids[:0], rcmds[:0]
		for id := range batch {
			ids, rcmds = append(ids, id), append(rcmds, failed())
		}
	}()
	return s.roundTrip(ctx, calls, batch)
}

// evalRefused sends again, with EVAL (which loads the scripts), the commands of a pipeline that
// Redis refused for want of their script (flushed, or a promoted replica), in one more round
// trip.
func (s *Sessions) evalRefused(ctx context.Context, calls []*lookupCall, ids []string, rcmds []*redis.Cmd, batch map[string][]any) {
	for _, c := range calls {
		if isNoScript(c.cmd) {
			c.cmd = getScript.Eval(ctx, s.pl, c.keys, c.argv...)
		}
	}
	for i, c := range rcmds {
		if isNoScript(c) {
			rcmds[i] = releaseScript.Eval(ctx, s.pl, []string{s.key(ids[i])}, batch[ids[i]]...)
		}
	}
	_, _ = s.pl.Exec(ctx)
}

func isNoScript(c *redis.Cmd) bool {
	err := c.Err()
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

// noScript reports whether Redis refused any of the commands for want of its script.
func noScript(calls []*lookupCall, rcmds []*redis.Cmd) bool {
	for _, c := range calls {
		if isNoScript(c.cmd) {
			return true
		}
	}
	for _, c := range rcmds {
		if isNoScript(c) {
			return true
		}
	}
	return false
}

// delivered hands a lookup its reply, or, when its caller stopped waiting, releases the claim its
// script took. A lookup Redis failed (or whose reply was lost) queues again what it carried, in
// either case (lookupFailed).
func (s *Sessions) delivered(c *lookupCall) {
	res, err := c.cmd.Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		s.lookupFailed(c.id, c.released, c.field, c.token)
	}
	c.res, c.err, c.released, c.cmd = res, err, nil, nil
	if c.state.CompareAndSwap(callQueued, callDone) {
		c.done <- struct{}{}
		return
	}
	if err == nil && c.field != "" && (len(res) != 2 || res[0] != "!") {
		s.releaseTaken(c.id, c.field, c.token)
	}
	recycle(c)
}

// releaseTaken releases a claim a lookup took for a caller that stopped waiting: queued as the
// claims of finished requests are (sent at once after Close).
func (s *Sessions) releaseTaken(id, field, token string) {
	s.mu.Lock()
	queued := s.queueRelease(id, field, token)
	s.mu.Unlock()
	if queued {
		return
	}
	ctx, cancel := s.r.Bound(context.Background())
	defer cancel()
	if err := releaseScript.Run(ctx, s.r.rdb, []string{s.key(id)}, field, token).Err(); err != nil {
		s.r.log.Warn().Err(err).Msg("redisstore: releasing the session claim of an abandoned lookup")
	}
}
