package redisstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

// gate holds the first round trip (a command or a pipeline) that names arg once Redis answered
// it, until open is closed; entered is closed when it is held.
type gate struct {
	arg     string
	once    *sync.Once
	entered chan struct{}
	open    chan struct{}
}

func newGate(arg string) gate {
	return gate{arg: arg, once: &sync.Once{}, entered: make(chan struct{}), open: make(chan struct{})}
}

func (g gate) hold(cmds ...redis.Cmder) {
	for _, c := range cmds {
		if slices.Contains(c.Args(), any(g.arg)) {
			g.once.Do(func() {
				close(g.entered)
				<-g.open
			})
			return
		}
	}
}

func (g gate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		g.hold(cmd)
		return err
	}
}
func (g gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		g.hold(cmds...)
		return err
	}
}

// await waits for ch, failing the test after 10 s.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not in 10 s", what)
	}
}

// awaitQueued waits until n lookups are queued for the pipe.
func awaitQueued(t *testing.T, s *Sessions, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		s.mu.Lock()
		q := len(s.lookups)
		s.mu.Unlock()
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lookups queued after 10 s, want %d", q, n)
		}
	}
}

// lookUpQueued starts a lookup of each session of ids (claiming request req, unless req < 0) and
// waits until all of them are queued for the pipe; answers waits for their answers and returns
// each one's owner and error.
func lookUpQueued(t *testing.T, s *Sessions, ids []string, req int64) (answers func() ([]string, []error)) {
	t.Helper()
	owners := make([]string, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			ctx := context.Background()
			if req >= 0 {
				ctx = session.WithClaim(ctx, &session.Claim{Request: jsonrpc.IntID(req)})
			}
			e, err := s.GetChecked(ctx, id, true, nil)
			errs[i] = err
			if e != nil {
				owners[i] = e.Owner
			}
		})
	}
	awaitQueued(t, s, len(ids))
	return func() ([]string, []error) {
		wg.Wait()
		return owners, errs
	}
}

// holdPipe makes the pipe busy with a lookup of a session of its own (id), held at a gate, so
// that the lookups that follow queue up; opening the gate lets them go in one round trip. It
// returns the gate, and a func that waits for the held lookup's answer once the gate is open.
func holdPipe(t *testing.T, s *Sessions, rdb redis.UniversalClient, id string) (gate, func()) {
	t.Helper()
	ctx := context.Background()
	if err := s.Add(ctx, &session.Entry{ID: id}); err != nil {
		t.Fatal(err)
	}
	g := newGate(id)
	rdb.AddHook(g)
	done := make(chan error, 1)
	go func() {
		_, err := s.GetChecked(ctx, id, true, nil)
		done <- err
	}()
	await(t, g.entered, "the held lookup")
	return g, func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatalf("the held lookup: %v", err)
		}
	}
}

// TestLookupsShareARoundTrip: lookups queued while the pipe is busy go in one pipeline, and each
// caller gets its own session's record and its own claim: two requests with the same id in one
// pipeline get it once (the other is refused, on a replica that sees the first's lookup under
// way), and every caller's claim is held under its own token.
func TestLookupsShareARoundTrip(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "share:")
	ctx := context.Background()
	const n = 8
	for i := range n {
		id := "s" + strconv.Itoa(i)
		if err := s.Add(ctx, &session.Entry{ID: id, Owner: "owner of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	g, blocked := holdPipe(t, s, rdb, "blocker")
	h := &pipelines{}
	rdb.AddHook(h)

	type result struct {
		owner string
		claim *session.Claim
		err   error
	}
	results := make([]result, n+1)
	var wg sync.WaitGroup
	for i := range n + 1 {
		id := "s" + strconv.Itoa(i%n) // the last one: s0 again, with the same request id
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &session.Claim{Request: jsonrpc.IntID(0)}
			e, err := s.GetChecked(session.WithClaim(ctx, c), id, true, nil)
			results[i] = result{claim: c, err: err}
			if e != nil {
				results[i].owner = e.Owner
			}
		}()
	}
	awaitQueued(t, s, n+1)
	close(g.open)
	blocked()
	wg.Wait()

	if sent := h.take(); len(sent) != 1 || len(sent[0]) != n+1 {
		t.Fatalf("pipelines after the held one: %v, want one of %d scripts", sent, n+1)
	}
	tokens := map[string]bool{}
	refused := 0
	for i, r := range results {
		id := "s" + strconv.Itoa(i%n)
		if id == "s0" && errors.Is(r.err, session.ErrClaimed) {
			refused++
			continue
		}
		if r.err != nil || r.owner != "owner of "+id || !r.claim.Held() {
			t.Fatalf("lookup %d of %s: owner %q, held %v, %v", i, id, r.owner, r.claim.Held(), r.err)
		}
		tok, err := rdb.HGet(ctx, s.key(id), "q:0").Result()
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if tokens[tok] {
			t.Fatalf("token %q held twice", tok)
		}
		tokens[tok] = true
	}
	if refused != 1 {
		t.Fatalf("%d of the two lookups claiming request 0 of s0 refused, want 1", refused)
	}
}

// TestLookupErrorsStayPerLookup: in a pipeline of lookups, the one Redis fails (its key holds
// something else than a session) gets its error and the others their records; a failed lookup
// leaves no claim of this replica live.
func TestLookupErrorsStayPerLookup(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "errs:")
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := s.Add(ctx, &session.Entry{ID: id, Owner: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Set(ctx, s.key("bad"), "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	g, blocked := holdPipe(t, s, rdb, "blocker")
	ids := []string{"a", "bad", "b"}
	answers := lookUpQueued(t, s, ids, 1)
	close(g.open)
	blocked()
	owners, errs := answers()
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "WRONGTYPE") {
		t.Fatalf("the lookup of a key that is not a session: %v, want Redis's WRONGTYPE", errs[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil || owners[i] != ids[i] {
			t.Fatalf("lookup of %s beside a failed one: owner %q, %v", ids[i], owners[i], errs[i])
		}
	}
	s.mu.Lock()
	live := len(s.claims)
	s.mu.Unlock()
	if live != 2 {
		t.Fatalf("%d claims live on the replica, want 2 (the failed lookup's forgotten)", live)
	}
}

// TestLookupsAfterScriptFlush: when Redis lost the scripts (SCRIPT FLUSH, or a promoted replica),
// a pipeline of lookups refused with NOSCRIPT is sent again with the scripts, and every lookup
// gets its answer.
func TestLookupsAfterScriptFlush(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "flush:")
	ctx := context.Background()
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		if err := s.Add(ctx, &session.Entry{ID: id, Owner: id}); err != nil {
			t.Fatal(err)
		}
	}
	g, blocked := holdPipe(t, s, rdb, "blocker")
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	h := &pipelines{}
	rdb.AddHook(h)
	answers := lookUpQueued(t, s, ids, -1)
	close(g.open)
	blocked()
	owners, errs := answers()
	for i, id := range ids {
		if errs[i] != nil || owners[i] != id {
			t.Fatalf("lookup of %s after SCRIPT FLUSH: owner %q, %v", id, owners[i], errs[i])
		}
	}
	if sent := h.take(); len(sent) != 1 {
		t.Fatalf("pipelines of EVALSHA: %v, want one (then one of EVAL)", sent)
	}
}

// TestAbandonedLookupReleasesItsClaim: a caller whose context ends while its lookup is on its way
// stops waiting at once (its round trip's answer is still held); the claim the lookup's script took all
// the same is released, so that another replica can take the request id, and nothing of it stays
// live on this replica. A caller gone before its lookup was sent costs no script at all.
func TestAbandonedLookupReleasesItsClaim(t *testing.T) {
	srv := startTestRedis(t)
	a, rdbA := testReplica(t, srv, "gone:")
	b, _ := testReplica(t, srv, "gone:")
	ctx := context.Background()
	for _, id := range []string{"s", "other"} {
		if err := a.Add(ctx, &session.Entry{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	claimOn := func(s *Sessions, ctx context.Context, id string) error {
		_, err := s.GetChecked(session.WithClaim(ctx, &session.Claim{Request: jsonrpc.IntID(7)}), id, true, nil)
		return err
	}
	g, blocked := holdPipe(t, a, rdbA, "blocker")
	inFlight := newGate("s") // holds the answer of the next pipeline, where the lookup of s goes
	rdbA.AddHook(inFlight)

	cctx, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() { gone <- claimOn(a, cctx, "s") }()
	companion := make(chan error, 1)
	go func() { companion <- claimOn(a, ctx, "other") }() // two lookups: a pipeline, not the caller's context
	awaitQueued(t, a, 2)
	close(g.open)
	blocked()
	await(t, inFlight.entered, "the pipeline of the lookup")
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the lookup of a caller gone: %v, want context.Canceled", err)
	}
	close(inFlight.open)
	if err := <-companion; err != nil {
		t.Fatal(err)
	}
	released(t, rdbA, a.key("s"), "q:7")
	if err := claimOn(b, ctx, "s"); err != nil {
		t.Fatalf("request id 7, its caller gone on replica a, claimed on replica b: %v", err)
	}
	a.mu.Lock()
	live := len(a.claims)
	a.mu.Unlock()
	if live != 1 {
		t.Fatalf("%d claims live on replica a, want 1 (other's)", live)
	}

	// Gone before it was sent: left out of the pipeline.
	g2, blocked2 := holdPipe(t, a, rdbA, "blocker2")
	h := &pipelines{}
	rdbA.AddHook(h)
	cctx, cancel = context.WithCancel(ctx)
	go func() { gone <- claimOn(a, cctx, "s") }()
	awaitQueued(t, a, 1)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the lookup of a caller gone: %v, want context.Canceled", err)
	}
	close(g2.open)
	blocked2()
	a.sendQueued() // what the pipe would send next, at once
	if sent := h.take(); len(sent) != 0 {
		t.Fatalf("a lookup whose caller was gone before it was sent went out: %v", sent)
	}
}

// released waits until a claim's field is gone from a record.
func released(t *testing.T, rdb redis.UniversalClient, key, field string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		held, err := rdb.HExists(context.Background(), key, field).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of %s still claimed after 10 s", field, key)
		}
	}
}

// panicky panics in the first pipeline that names arg, as a faulty Redis hook of the
// application's would.
type panicky struct {
	arg  string
	once *sync.Once
}

func (p panicky) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p panicky) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p panicky) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if slices.Contains(c.Args(), any(p.arg)) {
				p.once.Do(func() { panic("hook failed") })
			}
		}
		return next(ctx, cmds)
	}
}

// TestPanicInARoundTripFailsItsLookups: a panic while the pipe sends a pipeline fails the
// lookups it carried with an error (not the process), and the pipe goes on serving the next.
func TestPanicInARoundTripFailsItsLookups(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "panics:")
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := s.Add(ctx, &session.Entry{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	rdb.AddHook(panicky{arg: "a", once: &sync.Once{}})
	g, blocked := holdPipe(t, s, rdb, "blocker")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, id := range []string{"a", "b"} {
		wg.Go(func() { _, errs[i] = s.GetChecked(ctx, id, true, nil) })
	}
	awaitQueued(t, s, 2)
	close(g.open)
	blocked()
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "panicked") {
			t.Fatalf("lookup %d of the pipeline that panicked: %v, want the panic as its error", i, err)
		}
	}
	for _, id := range []string{"a", "b"} {
		if _, err := s.GetChecked(ctx, id, true, nil); err != nil {
			t.Fatalf("lookup of %s after the panic: %v", id, err)
		}
	}
}
