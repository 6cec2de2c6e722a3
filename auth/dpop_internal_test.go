package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// A nonce past half its life is still accepted and a new one comes with the answer; a fresh one
// brings none.
func TestDPoPNonceRenewal(t *testing.T) {
	const url = "https://mcp.example.com/mcp"
	key := testutil.NewDPoPKey(t)
	v := VerifierFunc(func(context.Context, string) (*TokenInfo, error) {
		return &TokenInfo{Subject: "alice", Claims: map[string]any{"cnf": map[string]any{"jkt": key.JKT}}}, nil
	})
	l := newBearerLayer(v, BearerOptions{ResourceMetadataURL: MetadataURL(url), Resource: url,
		DPoP: DPoPOptions{Mode: DPoPRequired, RequireNonce: true}})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if jkt, _ := DPoPThumbprintFrom(r.Context()); jkt != key.JKT {
			t.Errorf("DPoPThumbprintFrom = %q, want the proof key's", jkt)
		}
	})
	now := time.Now()
	for _, c := range []struct {
		age     time.Duration
		renewed bool
	}{{time.Second, false}, {3 * time.Minute, true}} {
		nonce := l.dpop.nonces.issue(now.Add(-c.age))
		req := httptest.NewRequest(http.MethodPost, url, nil)
		req.Header.Set("Authorization", "DPoP tok")
		req.Header.Set("DPoP", key.Proof(t, http.MethodPost, url, "tok", func(p *testutil.ProofParts) { p.Claims["nonce"] = nonce }))
		w := httptest.NewRecorder()
		l.serve(w, req, ok)
		if w.Code != http.StatusOK || (w.Header().Get("DPoP-Nonce") != "") != c.renewed {
			t.Fatalf("nonce %s old: %d, DPoP-Nonce %q (want one: %v)", c.age, w.Code, w.Header().Get("DPoP-Nonce"), c.renewed)
		}
	}
}

// A proof's htu that is not an http(s) URL matches no request, not even one whose own URL does
// not normalize (an OPTIONS * request, say).
func TestDPoPHTUUnparsable(t *testing.T) {
	c := newDPoPChecker(DPoPOptions{Mode: DPoPAccepted}, "")
	req := httptest.NewRequest(http.MethodOptions, "http://mcp.example.com/mcp", nil)
	req.RequestURI, req.Host = "*", "mcp example"
	if got := c.requestURL(req); got != "" {
		t.Fatalf("requestURL = %q, want none", got)
	}
	for _, htu := range []string{"", "mcp", "urn:x", "ftp://mcp.example.com/mcp"} {
		if c.htuMatches(req, htu) {
			t.Fatalf("htu %q matched", htu)
		}
	}
	req = httptest.NewRequest(http.MethodPost, "http://mcp.example.com/api/mcp?x=1", nil)
	if !c.htuMatches(req, "HTTP://mcp.example.com:80/api/mcp") {
		t.Fatal("a normalized htu does not match its request")
	}
}
