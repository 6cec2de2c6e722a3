package testutil

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// flowRun runs the authorization code flow against an AuthServer by hand.
type flowRun struct {
	t      *testing.T
	as     *AuthServer
	client string
}

func (f *flowRun) register(redirect string) {
	f.t.Helper()
	resp, err := http.Post(f.as.Issuer+"/register", "application/json", strings.NewReader(`{"redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated || out["client_secret"] != nil {
		f.t.Fatalf("register: %d %v %v, want 201 and a public client", resp.StatusCode, out, err)
	}
	f.client = out["client_id"].(string)
}

// authorize returns the redirect's query.
func (f *flowRun) authorize(q url.Values) url.Values {
	f.t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(f.as.Issuer + "/authorize?" + q.Encode())
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		f.t.Fatalf("authorize: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query()
}

func (f *flowRun) token(form url.Values) (int, map[string]any) {
	f.t.Helper()
	resp, err := http.PostForm(f.as.Issuer+"/token", form)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestAuthServerCodeFlow(t *testing.T) {
	as := StartAuthServer(t)
	f := &flowRun{t: t, as: as}
	redirect := "http://127.0.0.1:1/cb"
	f.register(redirect)
	verifier := "a-verifier-of-enough-length-0123456789abcdef"
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {f.client}, "redirect_uri": {redirect}, "state": {"st"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {"https://mcp.example.com/mcp"}, "scope": {"a b"}}
	back := f.authorize(q)
	if back.Get("state") != "st" || back.Get("iss") != as.Issuer || back.Get("code") == "" {
		t.Fatalf("redirect %v", back)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "redirect_uri": {redirect},
		"client_id": {f.client}, "resource": {"https://mcp.example.com/mcp"}}

	// A wrong verifier is refused, and the code is spent.
	form.Set("code_verifier", "wrong")
	if status, out := f.token(form); status != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", status, out)
	}
	form.Set("code", f.authorize(q).Get("code"))
	form.Set("code_verifier", verifier)
	status, out := f.token(form)
	if status != http.StatusOK || out["refresh_token"] == nil || out["scope"] != "a b" {
		t.Fatalf("token: %d %v", status, out)
	}
	if status, _ := f.token(form); status != http.StatusBadRequest {
		t.Fatalf("the code redeemed twice: %d", status)
	}

	// Refresh rotates: the old refresh token stops working.
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {out["refresh_token"].(string)}, "client_id": {f.client}, "resource": {"https://mcp.example.com/mcp"}}
	if status, out2 := f.token(refresh); status != http.StatusOK || out2["refresh_token"] == out["refresh_token"] {
		t.Fatalf("refresh: %d %v", status, out2)
	}
	if status, _ := f.token(refresh); status != http.StatusBadRequest {
		t.Fatalf("a rotated refresh token was accepted again: %d", status)
	}

	// No PKCE, or an unregistered redirect: refused.
	q.Del("code_challenge")
	if back := f.authorize(q); back.Get("error") != "invalid_request" {
		t.Fatalf("no PKCE: %v", back)
	}
	rec := httptest.NewRecorder()
	as.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/authorize?client_id="+f.client+"&redirect_uri=http://evil.example.com/cb", nil))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("unregistered redirect_uri: %d", rec.Code)
	}
}

func TestAuthServerClientCredentials(t *testing.T) {
	as := StartAuthServer(t)
	as.AddClient("svc", "pw")
	f := &flowRun{t: t, as: as}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"svc"}, "client_secret": {"pw"}, "resource": {"https://r"}}
	if status, out := f.token(form); status != http.StatusOK || out["access_token"] == nil || out["refresh_token"] != nil {
		t.Fatalf("client credentials: %d %v", status, out)
	}
	form.Set("client_secret", "nope")
	if status, out := f.token(form); status != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Fatalf("wrong secret: %d %v", status, out)
	}
	if as.Count("client_credentials") != 1 {
		t.Fatalf("%d grants counted, want 1", as.Count("client_credentials"))
	}
}
