package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// slowKeySet serves an AuthServer's JWKS at /keys; once slow is set, every fetch signals entered
// and holds until release is closed.
type slowKeySet struct {
	as      *testutil.AuthServer
	url     string
	slow    chan struct{} // closed: fetches hold
	entered chan struct{}
	release chan struct{}
}

func newSlowKeySet(t *testing.T) *slowKeySet {
	t.Helper()
	s := &slowKeySet{as: testutil.StartAuthServer(t), slow: make(chan struct{}), entered: make(chan struct{}, 16), release: make(chan struct{})}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.slow:
			s.entered <- struct{}{}
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
		default:
		}
		r.URL.Path = "/jwks"
		s.as.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL + "/keys"
	return s
}

// verifyIn runs v.Verify(ctx, tok) and returns its error once done, with how long it took.
func verifyIn(ctx context.Context, v *auth.JWTVerifier, tok string) <-chan timedErr {
	done := make(chan timedErr, 1)
	go func() {
		start := time.Now()
		_, err := v.Verify(ctx, tok)
		done <- timedErr{err, time.Since(start)}
	}()
	return done
}

type timedErr struct {
	err  error
	took time.Duration
}

// TestJWTSlowKeySet: once the cached keys are stale, a verification whose key is cached is
// served from them at once while one background fetch replaces them; one that needs the fetch
// (an unknown key id) waits for it no longer than its context.
func TestJWTSlowKeySet(t *testing.T) {
	ks := newSlowKeySet(t)
	const res = "http://127.0.0.1/mcp"
	clock := testutil.NewClockAt(time.Now())
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: ks.as.Issuer, Audience: res, JWKSURL: ks.url, KeyCacheTTL: time.Hour, RefreshInterval: time.Minute})
	auth.SetJWTClock(v, clock.Now)
	long := func() string {
		c := ks.as.Claims("alice", res)
		c["exp"] = time.Now().Add(3 * time.Hour).Unix()
		return ks.as.Mint(t, c)
	}
	if _, err := v.Verify(context.Background(), long()); err != nil {
		t.Fatal(err)
	}
	close(ks.slow)
	defer func() {
		select {
		case <-ks.release:
		default:
			close(ks.release)
		}
	}()
	clock.Advance(2 * time.Hour) // the keys are stale; the key-set endpoint now hangs

	// Stale keys are served while the one background fetch runs.
	for i := range 3 {
		r := await(t, verifyIn(context.Background(), v, long()), "a verification with stale keys (it waits for the slow key set)")
		if r.err != nil {
			t.Fatalf("token %d with stale keys: %v", i, r.err)
		}
		t.Logf("verification %d with stale keys, key set hanging: %v", i, r.took)
	}
	await(t, ks.entered, "the background fetch")
	if n := ks.as.JWKSFetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches served, want 1 (the second one still holds)", n)
	}

	// A token of a key the cache lacks must wait for that fetch, but no longer than its context.
	ks.as.Rotate(testutil.NewECKey(t, "key-2"), true)
	rotated := long()
	ctx, cancel := context.WithCancel(context.Background())
	wait := verifyIn(ctx, v, rotated)
	cancel()
	r := await(t, wait, "a verification whose context ended (it ignores its context)")
	if !errors.Is(r.err, auth.ErrUnavailable) || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("unknown kid, context cancelled while the key set hangs: %v", r.err)
	}
	select {
	case <-ks.entered:
		t.Fatal("a second fetch started while one was in flight")
	default:
	}

	// The fetch ends: it brought key-2, and nothing more was fetched.
	close(ks.release)
	auth.AwaitKeyFetch(v)
	if _, err := v.Verify(context.Background(), rotated); err != nil {
		t.Fatalf("the rotated key after the fetch: %v", err)
	}
	if n := ks.as.JWKSFetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches, want 2", n)
	}
}

// await returns the next value of ch, failing the test when none comes in 10 s.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
