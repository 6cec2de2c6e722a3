package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// newSession returns a record with a fresh id, and counts its closes.
func newSession(t *testing.T) (*Entry, *atomic.Int32) {
	t.Helper()
	s := &Entry{ID: NewID()}
	var closes atomic.Int32
	s.OnClose(func() { closes.Add(1) })
	return s, &closes
}

func newStore(t *testing.T, opts MemoryOptions) *Memory {
	t.Helper()
	m := NewMemory(opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// isDone reports whether the record has ended (its close hooks ran).
func isDone(s *Entry) bool {
	var ended atomic.Bool
	s.OnClose(func() { ended.Store(true) }) // runs at once on an ended record
	return ended.Load()
}

func TestNewIDIsVisibleASCIIUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		if len(id) != 36 {
			t.Fatalf("id %q: length %d, want 36", id, len(id))
		}
		for i := 0; i < len(id); i++ {
			if id[i] < 0x21 || id[i] > 0x7e {
				t.Fatalf("id %q has a byte %#x outside visible ASCII", id, id[i])
			}
		}
		if seen[id] {
			t.Fatalf("id %q repeated", id)
		}
		seen[id] = true
	}
}

func TestAddGetDelete(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryOptions{})
	s, closes := newSession(t)
	if err := m.Add(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := m.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
	got, err := m.Get(ctx, s.ID, false)
	if err != nil || got != s {
		t.Fatalf("Get = %p, %v; want %p", got, err, s)
	}
	if _, err := m.Get(ctx, "nope", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(unknown) error = %v, want ErrNotFound", err)
	}
	if err := m.Add(ctx, &Entry{ID: s.ID}); !errors.Is(err, ErrExists) {
		t.Fatalf("Add(duplicate id) error = %v, want ErrExists", err)
	}
	if !m.Delete(ctx, s.ID) {
		t.Fatal("Delete reported a missing session")
	}
	if m.Delete(ctx, s.ID) {
		t.Fatal("second Delete reported the session present")
	}
	if _, err := m.Get(ctx, s.ID, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete error = %v, want ErrNotFound", err)
	}
	if n := closes.Load(); n != 1 {
		t.Fatalf("OnClose ran %d times, want 1", n)
	}
	if !isDone(s) {
		t.Fatal("core session not closed by Delete")
	}
	if m.Len() != 0 {
		t.Fatalf("Len = %d after Delete, want 0", m.Len())
	}
}

func TestTouchRenewsAndExpiryAtLookup(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: time.Minute, Now: clk.Now})
	renewed, renewedCloses := newSession(t)
	idle, idleCloses := newSession(t)
	for _, s := range []*Entry{renewed, idle} {
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// 50 s later: both alive; one is renewed, the other only looked at.
	clk.Advance(50 * time.Second)
	if _, err := m.Get(ctx, renewed.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, idle.ID, false); err != nil {
		t.Fatal(err)
	}
	// 100 s after creation: the untouched one is 100 s idle, the renewed one 50 s.
	clk.Advance(50 * time.Second)
	if _, err := m.Get(ctx, idle.ID, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(expired) error = %v, want ErrNotFound", err)
	}
	if idleCloses.Load() != 1 || !isDone(idle) {
		t.Fatalf("expired session not ended at lookup (closes %d)", idleCloses.Load())
	}
	if m.Len() != 1 {
		t.Fatalf("Len = %d, want 1 (expired session evicted at lookup)", m.Len())
	}
	if _, err := m.Get(ctx, renewed.ID, false); err != nil {
		t.Fatalf("renewed session: %v", err)
	}
	if renewedCloses.Load() != 0 {
		t.Fatal("renewed session was ended")
	}
	// Exactly at the timeout a session is still alive; one tick later it is not.
	clk.Advance(10 * time.Second)
	if _, err := m.Get(ctx, renewed.ID, false); err != nil {
		t.Fatalf("session idle exactly IdleTimeout: %v", err)
	}
	clk.Advance(time.Nanosecond)
	if _, err := m.Get(ctx, renewed.ID, true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("touching an expired session revived it: %v", err)
	}
}

func TestReap(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: time.Minute, Now: clk.Now})
	var old []*Entry
	for range 3 {
		s, _ := newSession(t)
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
		old = append(old, s)
	}
	clk.Advance(2 * time.Minute)
	fresh, freshCloses := newSession(t)
	if err := m.Add(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if n := m.Reap(); n != 3 {
		t.Fatalf("Reap = %d, want 3", n)
	}
	for _, s := range old {
		if !isDone(s) {
			t.Fatalf("reaped session %s not ended", s.ID)
		}
	}
	if m.Len() != 1 || freshCloses.Load() != 0 {
		t.Fatalf("Len = %d, fresh closes = %d; want 1, 0", m.Len(), freshCloses.Load())
	}
	if n := m.Reap(); n != 0 {
		t.Fatalf("second Reap = %d, want 0", n)
	}
}

func TestReaperRunsOnItsOwn(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: time.Minute, ReapInterval: time.Millisecond, Now: clk.Now})
	s, _ := newSession(t)
	ended := make(chan struct{})
	s.OnClose(func() { close(ended) })
	if err := m.Add(ctx, s); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the reaper did not end an expired session")
	}
	if m.Len() != 0 {
		t.Fatalf("Len = %d after reaping, want 0", m.Len())
	}
}

func TestCapReclaimsExpiredBeforeRefusing(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: time.Minute, MaxSessions: 2, Now: clk.Now})
	a, aCloses := newSession(t)
	b, _ := newSession(t)
	for _, s := range []*Entry{a, b} {
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := newSession(t)
	err := m.Add(ctx, c)
	var full *FullError
	if !errors.Is(err, ErrFull) || !errors.As(err, &full) || full.Max != 2 {
		t.Fatalf("Add at the cap: %v, want a *FullError{Max: 2} matching ErrFull", err)
	}
	if err.Error() != "session: maximum number of sessions (2) reached" {
		t.Fatalf("error text %q", err.Error())
	}
	// a expires, b is renewed: the next Add reclaims a in line.
	clk.Advance(40 * time.Second)
	if _, err := m.Get(ctx, b.ID, true); err != nil {
		t.Fatal(err)
	}
	clk.Advance(40 * time.Second)
	if err := m.Add(ctx, c); err != nil {
		t.Fatalf("Add after a session expired: %v", err)
	}
	if aCloses.Load() != 1 || !isDone(a) {
		t.Fatal("the expired session was not ended when reclaimed")
	}
	if m.Len() != 2 {
		t.Fatalf("Len = %d, want 2", m.Len())
	}
	// Nothing expired now: full again.
	d, _ := newSession(t)
	if err := m.Add(ctx, d); !errors.Is(err, ErrFull) {
		t.Fatalf("Add at the cap with nothing expired: %v, want ErrFull", err)
	}
}

func TestNegativeMaxSessionsHasNoCap(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryOptions{MaxSessions: -1})
	for i := range 50 {
		s, _ := newSession(t)
		if err := m.Add(ctx, s); err != nil {
			t.Fatalf("Add #%d: %v", i, err)
		}
	}
	if m.Len() != 50 {
		t.Fatalf("Len = %d, want 50", m.Len())
	}
}

func TestNegativeIdleTimeoutNeverExpiresAndStartsNoReaper(t *testing.T) {
	ctx := context.Background()
	before := goleak.IgnoreCurrent()
	clk := testutil.NewClock()
	m := NewMemory(MemoryOptions{IdleTimeout: -1, ReapInterval: time.Millisecond, Now: clk.Now})
	// No goroutine may have been started by NewMemory.
	goleak.VerifyNone(t, before)
	s, closes := newSession(t)
	if err := m.Add(ctx, s); err != nil {
		t.Fatal(err)
	}
	clk.Advance(100 * 365 * 24 * time.Hour)
	if n := m.Reap(); n != 0 {
		t.Fatalf("Reap = %d, want 0", n)
	}
	if _, err := m.Get(ctx, s.ID, false); err != nil {
		t.Fatalf("session expired with expiry off: %v", err)
	}
	if closes.Load() != 0 {
		t.Fatal("session ended with expiry off")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if closes.Load() != 1 {
		t.Fatal("Close did not end the session")
	}
}

func TestCloseEndsEverythingOnce(t *testing.T) {
	ctx := context.Background()
	before := goleak.IgnoreCurrent()
	m := NewMemory(MemoryOptions{ReapInterval: time.Millisecond})
	var sessions []*Entry
	var counters []*atomic.Int32
	for range 5 {
		s, n := newSession(t)
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		counters = append(counters, n)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for i, s := range sessions {
		if n := counters[i].Load(); n != 1 {
			t.Fatalf("session %d: OnClose ran %d times, want 1", i, n)
		}
		if !isDone(s) {
			t.Fatalf("session %d: core session not closed", i)
		}
		// Ending again (say, a late Delete) runs nothing twice.
		s.end()
		if n := counters[i].Load(); n != 1 {
			t.Fatalf("session %d: OnClose ran again", i)
		}
	}
	if m.Len() != 0 {
		t.Fatalf("Len = %d after Close", m.Len())
	}
	if _, err := m.Get(ctx, sessions[0].ID, false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	s, _ := newSession(t)
	if err := m.Add(ctx, s); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v, want ErrClosed", err)
	}
	// The reaper goroutine is gone.
	goleak.VerifyNone(t, before)
}

func TestOnCloseAfterEndRunsAtOnce(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryOptions{})
	s, _ := newSession(t)
	if err := m.Add(ctx, s); err != nil {
		t.Fatal(err)
	}
	m.Delete(ctx, s.ID)
	ran := false
	s.OnClose(func() { ran = true })
	if !ran {
		t.Fatal("OnClose on an ended session did not run f at once")
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: time.Minute, MaxSessions: 64, ReapInterval: time.Millisecond, Now: clk.Now})
	var wg sync.WaitGroup
	var ends atomic.Int32
	const workers, rounds = 8, 200
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id := fmt.Sprintf("w%d-%d", w, i)
				s := &Entry{ID: id}
				s.OnClose(func() { ends.Add(1) })
				if err := m.Add(ctx, s); err != nil {
					if !errors.Is(err, ErrFull) {
						t.Errorf("Add: %v", err)
					}
					s.end()
					continue
				}
				_, _ = m.Get(ctx, id, i%2 == 0)
				switch i % 3 {
				case 0:
					m.Delete(ctx, id)
				case 1:
					clk.Advance(time.Second)
				case 2:
					m.Reap()
				}
				_ = m.Len()
			}
		}()
	}
	wg.Wait()
	left := m.Len()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ends.Load(); got != workers*rounds {
		t.Fatalf("%d sessions ended, want %d (left in store before Close: %d)", got, workers*rounds, left)
	}
}

func TestNewMemoryRefusesNegativeReapInterval(t *testing.T) {
	testutil.WantPanic(t, "MemoryOptions.ReapInterval", func() { NewMemory(MemoryOptions{ReapInterval: -time.Second}) })
}

// TestUnusedSessionsReclaimedSooner: a session nobody used after it was added lives
// UnusedIdleTimeout, one in use the full IdleTimeout, and at the cap the unused ones make room.
func TestUnusedSessionsReclaimedSooner(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: 30 * time.Minute, UnusedIdleTimeout: time.Minute, MaxSessions: 2, Now: clk.Now})
	unused, unusedCloses := newSession(t)
	inUse, _ := newSession(t)
	for _, s := range []*Entry{unused, inUse} {
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Get(ctx, inUse.ID, true); err != nil { // one request after initialize
		t.Fatal(err)
	}
	// A look that does not renew (a notification, DELETE) is no use.
	if _, err := m.Get(ctx, unused.ID, false); err != nil {
		t.Fatal(err)
	}
	late, _ := newSession(t)
	if err := m.Add(ctx, late); !errors.Is(err, ErrFull) {
		t.Fatalf("Add at the cap = %v, want ErrFull", err)
	}
	clk.Advance(time.Minute + time.Second)
	if err := m.Add(ctx, late); err != nil {
		t.Fatalf("Add once the unused session is past UnusedIdleTimeout: %v", err)
	}
	if unusedCloses.Load() != 1 {
		t.Error("the unused session was not ended")
	}
	if _, err := m.Get(ctx, inUse.ID, false); err != nil {
		t.Errorf("the session in use expired with the unused one: %v", err)
	}
	// The one in use lives its full idle timeout.
	clk.Advance(28 * time.Minute)
	if _, err := m.Get(ctx, inUse.ID, false); err != nil {
		t.Errorf("the session in use expired before IdleTimeout: %v", err)
	}
}

func TestUnusedIdleTimeoutOptions(t *testing.T) {
	for _, tc := range []struct {
		idle, unused, want time.Duration
	}{
		{0, 0, DefaultUnusedIdleTimeout},
		{time.Hour, 5 * time.Minute, 5 * time.Minute},
		{time.Hour, -1, 0},                // off: unused sessions get the idle timeout
		{time.Minute, 5 * time.Minute, 0}, // longer than the idle timeout: no effect
		{-1, time.Minute, 0},              // no expiry at all
	} {
		m := newStore(t, MemoryOptions{IdleTimeout: tc.idle, UnusedIdleTimeout: tc.unused})
		if m.unused != tc.want {
			t.Errorf("IdleTimeout %v, UnusedIdleTimeout %v: unused timeout %v, want %v", tc.idle, tc.unused, m.unused, tc.want)
		}
	}
}

// GetChecked looks a session up, checks it and renews it in one call: a refused session comes
// back with ErrRefused and is not renewed, an allowed one is renewed, and allow sees the
// session that is returned.
func TestMemoryGetCheckedRenewsOnlyAllowed(t *testing.T) {
	ctx := context.Background()
	clk := testutil.NewClock()
	m := newStore(t, MemoryOptions{IdleTimeout: time.Minute, Now: clk.Now})
	refused, _ := newSession(t)
	allowed, _ := newSession(t)
	for _, s := range []*Entry{refused, allowed} {
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(50 * time.Second)
	var seen []*Entry
	check := func(ok bool) func(*Entry) bool {
		return func(s *Entry) bool { seen = append(seen, s); return ok }
	}
	if s, err := m.GetChecked(ctx, refused.ID, true, check(false)); !errors.Is(err, ErrRefused) || s != refused {
		t.Fatalf("refused lookup = %v, %v; want the session and ErrRefused", s, err)
	}
	if s, err := m.GetChecked(ctx, allowed.ID, true, check(true)); err != nil || s != allowed {
		t.Fatalf("allowed lookup = %v, %v", s, err)
	}
	if len(seen) != 2 || seen[0] != refused || seen[1] != allowed {
		t.Fatalf("allow saw %v", seen)
	}
	if _, err := m.GetChecked(ctx, "unknown", true, check(true)); !errors.Is(err, ErrNotFound) || len(seen) != 2 {
		t.Fatalf("unknown id: %v (allow called %d times)", err, len(seen))
	}
	// 100 s after creation: the refused one was never renewed and has expired.
	clk.Advance(50 * time.Second)
	if _, err := m.Get(ctx, refused.ID, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused session was renewed: %v", err)
	}
	if _, err := m.Get(ctx, allowed.ID, false); err != nil {
		t.Fatalf("allowed session was not renewed: %v", err)
	}
}

// BenchmarkMemoryGetChecked measures the lookup of a request on the in-memory store: the check
// and the renewal of a session among a thousand, on the store's real clock.
func BenchmarkMemoryGetChecked(b *testing.B) {
	ctx := context.Background()
	m := NewMemory(MemoryOptions{})
	defer m.Close()
	var id string
	for range 1000 {
		s := &Entry{ID: NewID()}
		if err := m.Add(ctx, s); err != nil {
			b.Fatal(err)
		}
		id = s.ID
	}
	allow := func(*Entry) bool { return true }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.GetChecked(ctx, id, true, allow); err != nil {
			b.Fatal(err)
		}
	}
}
