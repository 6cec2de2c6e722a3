package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// freshIDs is the memory replay cache fed a new id per call, so one proof can be sent on every
// iteration while the cache does the work of a real stream of proofs (inserts, expiry, the
// bound).
type freshIDs struct {
	inner *auth.MemoryReplayCache
	n     atomic.Int64
}

func (f *freshIDs) Seen(ctx context.Context, id string, until time.Time) (bool, error) {
	return f.inner.Seen(ctx, strconv.FormatInt(f.n.Add(1), 10), until)
}

// BenchmarkRequireBearerDPoP measures a DPoP request on the bearer layer: the proof parsed and
// its ES256 signature verified, htm/htu/iat/ath checked, the key's thumbprint, the token's
// cnf.jkt, the replay cache; the access token itself comes from the verifier's cache, as in
// BenchmarkRequireBearerJWTCached, which is the figure to compare with.
func BenchmarkRequireBearerDPoP(b *testing.B) {
	as := testutil.StartAuthServer(b)
	as.Rotate(testutil.NewECKey(b, "ec"), false)
	const res = "http://127.0.0.1/mcp"
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: res})
	cache := &freshIDs{inner: auth.NewMemoryReplayCache(auth.DefaultReplayEntries)}
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL(res),
		DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, Replay: cache}})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	key := testutil.NewDPoPKey(b)
	token := as.Mint(b, key.BoundClaims(as.Claims("alice", res, "notes:read")))
	req := httptest.NewRequest(http.MethodPost, res, nil)
	req.Header.Set("Authorization", "DPoP "+token)
	req.Header.Set("DPoP", key.Proof(b, http.MethodPost, res, token, nil))
	h.ServeHTTP(httptest.NewRecorder(), req) // fetch the keys once
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Header())
		}
	}
}
