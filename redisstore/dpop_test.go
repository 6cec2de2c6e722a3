package redisstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

var _ auth.ReplayCache = (*redisstore.ReplayCache)(nil)

// dpopReplica is one process: RequireBearer with DPoP required, its replay cache on the shared
// Redis, behind a loopback server; every replica serves the same external URL.
func dpopReplica(t *testing.T, rs *testutil.RedisServer, prefix, issuer, external string) string {
	t.Helper()
	cache := redisstore.NewReplayCache(newRouter(t, rs, prefix), redisstore.ReplayCacheOptions{})
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: external})
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL(external), Resource: external,
		DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, Replay: cache}})(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp" // the path of external: a proof's htu names the request's own path
}

func postDPoP(t *testing.T, url, token, proof string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "DPoP "+token)
	req.Header.Set("DPoP", proof)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// A proof accepted by one replica is refused as a replay by another sharing the Redis cache
// (and by the first one again); a fresh proof is accepted by both.
func TestDPoPReplayOnAnotherReplica(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	as := testutil.StartAuthServer(t)
	const external = "https://mcp.example.com/mcp"
	a := dpopReplica(t, rs, prefix, as.Issuer, external)
	b := dpopReplica(t, rs, prefix, as.Issuer, external)
	key := testutil.NewDPoPKey(t)
	token := as.Mint(t, key.BoundClaims(as.Claims("alice", external)))

	proof := key.Proof(t, http.MethodPost, external, token, nil)
	if resp := postDPoP(t, a, token, proof); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("first use on replica a: %d %v", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
	}
	for name, url := range map[string]string{"b": b, "a": a} {
		resp := postDPoP(t, url, token, proof)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_dpop_proof"`) {
			t.Fatalf("replay on replica %s: %d %v", name, resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
		}
	}
	for _, url := range []string{a, b} {
		if resp := postDPoP(t, url, token, key.Proof(t, http.MethodPost, external, token, nil)); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("fresh proof: %d", resp.StatusCode)
		}
	}
}

// The cache itself: one first use among concurrent callers, expiry, an id already past its
// window, and an error (never a pass) when Redis is down.
func TestReplayCache(t *testing.T) {
	rs := ownRedis(t)
	prefix := testPrefix()
	router := newRouter(t, rs, prefix)
	c := redisstore.NewReplayCache(router, redisstore.ReplayCacheOptions{})
	ctx := context.Background()
	until := time.Now().Add(time.Minute)
	results := make(chan bool, 8)
	for range 8 {
		go func() {
			replay, err := c.Seen(ctx, "proof-1", until)
			if err != nil {
				t.Error(err)
			}
			results <- replay
		}()
	}
	first := 0
	for range 8 {
		if !<-results {
			first++
		}
	}
	if first != 1 {
		t.Fatalf("%d first uses of one id on Redis", first)
	}
	if replay, err := c.Seen(ctx, "proof-2", time.Now().Add(-time.Second)); err != nil || replay {
		t.Fatalf("an expired id: %v %v", replay, err)
	}
	// The key expires at the end of the proof's window: nothing is left behind.
	ttl, err := router.Client().PTTL(ctx, prefix+"dpop:{proof-1}").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("key expiry %v (%v), want within a minute", ttl, err)
	}
	if n, _ := router.Client().Exists(ctx, prefix+"dpop:{proof-2}").Result(); n != 0 {
		t.Fatal("an expired id was stored")
	}
	rs.Stop()
	if _, err := c.Seen(ctx, "proof-4", until); err == nil {
		t.Fatal("Redis down: no error")
	}
	testutil.WantPanic(t, "NewReplayCache needs a Router", func() { redisstore.NewReplayCache(nil, redisstore.ReplayCacheOptions{}) })
}
