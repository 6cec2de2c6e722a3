package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestIntrospectionGarbageFlood: repeating one garbage token costs one call to the authorization
// server per NegativeCacheTTL, not one per check.
func TestIntrospectionGarbageFlood(t *testing.T) {
	v, as, c := newIntrospection(t, auth.IntrospectionOptions{})
	const checks = 200
	for range checks {
		if _, err := v.Verify(context.Background(), "garbage"); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("garbage token: %v", err)
		}
	}
	t.Logf("%d checks of one garbage token: %d introspection calls", checks, as.Introspections.Load())
	if n := as.Introspections.Load(); n != 1 {
		t.Fatalf("%d introspection calls for %d checks of one garbage token, want 1", n, checks)
	}
	c.Advance(auth.DefaultIntrospectionNegativeCacheTTL)
	_, _ = v.Verify(context.Background(), "garbage")
	if n := as.Introspections.Load(); n != 2 {
		t.Fatalf("%d introspection calls once the refusal expired, want 2", n)
	}
}

// TestIntrospectionSimultaneousFirstUse: checks of one token made while its first call is in
// flight share that call, and one whose context ends stops waiting for it.
func TestIntrospectionSimultaneousFirstUse(t *testing.T) {
	as := testutil.StartAuthServer(t)
	as.AddOpaque("good", map[string]any{"sub": "alice", "aud": resource})
	entered, release := make(chan struct{}, 128), make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	var hang atomic.Pointer[func()] // set: the endpoint calls it, then hangs until release2
	release2 := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := hang.Load(); f != nil {
			(*f)()
			<-release2
		} else {
			entered <- struct{}{}
			<-release
		}
		r.URL.Path = "/introspect"
		as.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer open()
	defer func() {
		select {
		case <-release2:
		default:
			close(release2)
		}
	}()
	v := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Endpoint: ts.URL, Audience: resource, MaxCallsPerSecond: -1})
	const checks = 100
	joined := make(chan struct{}, checks)
	auth.OnIntrospectionJoin(v, func() { joined <- struct{}{} })
	// Open the endpoint once every other check joined the first call (or, without that, once
	// every check reached the endpoint on its own).
	go func() {
		for j, e := 0, 0; j < checks-1 && e < checks; {
			select {
			case <-joined:
				j++
			case <-entered:
				e++
			}
		}
		open()
	}()
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if info, err := v.Verify(context.Background(), "good"); err != nil || info.Subject != "alice" {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d simultaneous first uses of a valid token: %d introspection calls", checks, as.Introspections.Load())
	if n := failed.Load(); n != 0 {
		t.Errorf("%d checks failed", n)
	}
	if n := as.Introspections.Load(); n != 1 {
		t.Fatalf("%d introspection calls for %d simultaneous first uses, want 1", n, checks)
	}

	// A check whose context ends while the call hangs fails at once with ErrUnavailable.
	as.AddOpaque("slow", map[string]any{"sub": "bob", "aud": resource})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cancelFn := func() { cancel() }
	hang.Store(&cancelFn)
	go func() {
		_, err := v.Verify(ctx, "slow")
		done <- err
	}()
	if err := await(t, done, "a check whose context ended"); !errors.Is(err, auth.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("check with its context ended: %v", err)
	}
}

// TestIntrospectionRateBound: distinct garbage tokens reach the authorization server at most
// MaxCallsPerSecond times a second; the checks past it fail with ErrUnavailable (503) naming the
// option.
func TestIntrospectionRateBound(t *testing.T) {
	const rate, flood = 5, 40
	v, as, c := newIntrospection(t, auth.IntrospectionOptions{MaxCallsPerSecond: rate})
	refused := 0
	for i := range flood {
		_, err := v.Verify(context.Background(), fmt.Sprintf("garbage-%d", i))
		switch {
		case errors.Is(err, auth.ErrUnavailable):
			refused++
			if !strings.Contains(err.Error(), "MaxCallsPerSecond") {
				t.Errorf("refusal: %v", err)
			}
		case !errors.Is(err, auth.ErrInvalidToken):
			t.Fatalf("garbage-%d: %v", i, err)
		}
	}
	t.Logf("%d distinct garbage tokens in one instant: %d introspection calls, %d refused", flood, as.Introspections.Load(), refused)
	if n := as.Introspections.Load(); n != rate || refused != flood-rate {
		t.Fatalf("%d calls and %d refusals for %d tokens, want %d and %d", n, refused, flood, rate, flood-rate)
	}
	c.Advance(time.Second)
	as.AddOpaque("good", map[string]any{"sub": "alice", "aud": resource})
	if _, err := v.Verify(context.Background(), "good"); err != nil {
		t.Fatalf("a second later: %v", err)
	}
}
