package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// dpopServer is an MCP endpoint that takes DPoP-bound tokens only: every request needs a
// fresh proof for it, with the nonce it hands out, bound to the token (ath).
type dpopServer struct {
	url         string
	as          *testutil.AuthServer
	mu          sync.Mutex
	jtis        map[string]bool
	problems    []string
	nonceAsked  atomic.Int32
	authorized  atomic.Int32
	schemeWrong atomic.Int32
}

func newDPoPServer(t *testing.T) *dpopServer {
	t.Helper()
	d := &dpopServer{jtis: map[string]bool{}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	d.url = srv.URL + "/mcp"
	d.as = testutil.NewAuthServer(srv.URL, testutil.NewECKey(t, "k1"))
	d.as.DPoP = true
	d.as.Mount(mux)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, d.url, d.as.Issuer)
	})
	s := core.NewServer(core.Implementation{Name: "dpop", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "ping", Description: "ping"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("pong"), nil
	})
	ep := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = ep.Shutdown(context.Background()) })
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if tok == "" {
			w.Header().Set("WWW-Authenticate", `DPoP resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if scheme != "DPoP" {
			d.schemeWrong.Add(1)
		}
		nonce, err := d.check(r, tok)
		if err != nil {
			d.mu.Lock()
			d.problems = append(d.problems, err.Error())
			d.mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if nonce != "n-1" {
			d.nonceAsked.Add(1)
			w.Header().Set("DPoP-Nonce", "n-1")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			http.Error(w, "nonce required", http.StatusUnauthorized)
			return
		}
		d.authorized.Add(1)
		ep.ServeHTTP(w, r)
	})
	return d
}

// check verifies the request's proof and returns its nonce.
func (d *dpopServer) check(r *http.Request, token string) (string, error) {
	p, err := jwt.ParseSigned(r.Header.Get("DPoP"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return "", fmt.Errorf("proof: %w", err)
	}
	h := p.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", fmt.Errorf("proof header: typ %q, jwk %v", typ, h.JSONWebKey)
	}
	var c struct {
		HTM, HTU, JTI, ATH, Nonce string
	}
	var raw map[string]any
	if err := p.Claims(h.JSONWebKey.Key, &raw); err != nil {
		return "", fmt.Errorf("proof signature: %w", err)
	}
	c.HTM, _ = raw["htm"].(string)
	c.HTU, _ = raw["htu"].(string)
	c.JTI, _ = raw["jti"].(string)
	c.ATH, _ = raw["ath"].(string)
	c.Nonce, _ = raw["nonce"].(string)
	sum := sha256.Sum256([]byte(token))
	if c.HTM != r.Method || c.HTU != d.url || c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
		return "", fmt.Errorf("proof claims htm %q htu %q ath %q: not this request and token", c.HTM, c.HTU, c.ATH)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jtis[c.JTI] {
		return "", fmt.Errorf("proof jti %q replayed", c.JTI)
	}
	d.jtis[c.JTI] = true
	return c.Nonce, nil
}

func TestDPoP(t *testing.T) {
	d := newDPoPServer(t)
	c := connect(t, d.url, oauth.New(oauth.Options{Authorizer: &follower{}}))
	for range 3 {
		if got := call(t, c, "ping"); got != "pong" {
			t.Fatalf("ping: %q", got)
		}
	}
	if len(d.problems) > 0 || d.schemeWrong.Load() > 0 {
		t.Fatalf("bad proofs %q, %d requests without the DPoP scheme", d.problems, d.schemeWrong.Load())
	}
	if d.as.Count("dpop") != 1 || d.nonceAsked.Load() != 1 || d.authorized.Load() < 4 {
		t.Fatalf("%d bound tokens, %d nonce challenges, %d requests served: want 1, 1 (the nonce is kept) and every request", d.as.Count("dpop"), d.nonceAsked.Load(), d.authorized.Load())
	}

	// DisableDPoP: a plain bearer token, which this server refuses.
	_, err := client.Connect(context.Background(), &client.HTTPTransport{URL: d.url, HTTPClient: oauth.New(oauth.Options{Authorizer: &follower{}, DisableDPoP: true}).Client()}, client.Options{Lifecycle: client.Modern})
	if err == nil || d.schemeWrong.Load() == 0 || d.as.Count("dpop") != 1 {
		t.Fatalf("DisableDPoP: %v, %d bearer requests, %d bound tokens: want the token sent as Bearer, unbound", err, d.schemeWrong.Load(), d.as.Count("dpop"))
	}
}
