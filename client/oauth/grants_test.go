package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// grantSite is the kit's server accepting the tokens "ok-*", whose authorization server (on
// the same origin) answers token requests with tokenEndpoint, recording their forms.
type grantSite struct {
	url, issuer string
	mu          sync.Mutex
	forms       []url.Values
	basic       []string
}

func newGrantSite(t *testing.T, methods []string, token func(form url.Values, basicUser string) (int, string)) *grantSite {
	t.Helper()
	g := &grantSite{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	g.url, g.issuer = srv.URL+"/mcp", srv.URL
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": g.issuer, "token_endpoint": g.issuer + "/token",
			"grant_types_supported": []string{"client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, "token_endpoint_auth_methods_supported": methods})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		user, _, _ := r.BasicAuth()
		g.mu.Lock()
		g.forms = append(g.forms, r.PostForm)
		g.basic = append(g.basic, user)
		g.mu.Unlock()
		status, body := token(r.PostForm, user)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
	meta := auth.NewMetadataHandler(auth.Metadata{Resource: g.url, AuthorizationServers: []string{g.issuer}})
	meta.Mount(mux)
	s := core.NewServer(core.Implementation{Name: "grants", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "whoami", Description: "whoami"}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		p, _ := core.PrincipalFrom(ctx)
		return core.TextResult(p), nil
	})
	ep := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = ep.Shutdown(context.Background()) })
	v := auth.VerifierFunc(func(_ context.Context, tok string) (*auth.TokenInfo, error) {
		if !strings.HasPrefix(tok, "ok-") {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Subject: strings.TrimPrefix(tok, "ok-")}, nil
	})
	mux.Handle("/mcp", auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta.URL()})(ep))
	return g
}

func (g *grantSite) requests() ([]url.Values, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forms, g.basic
}

func TestPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var g *grantSite
	g = newGrantSite(t, []string{"private_key_jwt"}, func(form url.Values, _ string) (int, string) {
		if form.Get("grant_type") != "client_credentials" || form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			return 400, `{"error":"invalid_request"}`
		}
		a, err := jwt.ParseSigned(form.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
		var c jwt.Claims
		if err != nil || a.Claims(&key.PublicKey, &c) != nil {
			return 401, `{"error":"invalid_client","error_description":"the assertion does not verify"}`
		}
		if c.Issuer != "svc" || c.Subject != "svc" || !c.Audience.Contains(g.issuer) || c.ID == "" || c.Expiry == nil {
			return 401, fmt.Sprintf(`{"error":"invalid_client","error_description":"claims %+v"}`, c)
		}
		return 200, `{"access_token":"ok-svc","token_type":"Bearer","expires_in":3600}`
	})
	c := connect(t, g.url, oauth.New(oauth.Options{ClientCredentials: true, ClientID: "svc", PrivateKey: key, KeyID: "k1"}))
	if got := call(t, c, "whoami"); got != "svc" {
		t.Fatalf("whoami: %q", got)
	}
	forms, basic := g.requests()
	if len(forms) != 1 || basic[0] != "" || forms[0].Get("client_secret") != "" || forms[0].Get("resource") != g.url {
		t.Fatalf("token requests %v (basic %q): want one, authenticated by the assertion alone, naming the resource", forms, basic)
	}
}

func TestJWTBearerDoesNotRetry(t *testing.T) {
	g := newGrantSite(t, []string{"none"}, func(form url.Values, _ string) (int, string) {
		if form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" && form.Get("assertion") == "workload-jwt" {
			return 400, `{"error":"invalid_grant","error_description":"the assertion expired"}`
		}
		return 400, `{"error":"unsupported_grant_type"}`
	})
	ae := authError(t, g.url, oauth.New(oauth.Options{ClientID: "wl", Assertion: func(context.Context) (string, error) { return "workload-jwt", nil }}))
	forms, _ := g.requests()
	if !strings.Contains(ae.Error(), "invalid_grant") || !strings.Contains(ae.Error(), "the assertion expired") || len(forms) != 1 {
		t.Fatalf("%v after %d token requests, want the invalid_grant surfaced after one", ae, len(forms))
	}
}

func TestEnterpriseManagedAuthorization(t *testing.T) {
	var idp []url.Values
	var mu sync.Mutex
	idpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		idp = append(idp, r.PostForm)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"the-id-jag","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`))
	}))
	defer idpSrv.Close()
	g := newGrantSite(t, []string{"client_secret_basic"}, func(form url.Values, user string) (int, string) {
		if form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || form.Get("assertion") != "the-id-jag" || user != "mcp-client" {
			return 400, `{"error":"invalid_grant"}`
		}
		return 200, `{"access_token":"ok-alice","token_type":"Bearer"}`
	})
	c := connect(t, g.url, oauth.New(oauth.Options{ClientID: "mcp-client", ClientSecret: "pw", Enterprise: &oauth.Enterprise{
		TokenEndpoint: idpSrv.URL, ClientID: "idp-client",
		IDToken: func(context.Context) (string, error) { return "alice-id-token", nil },
	}}))
	if got := call(t, c, "whoami"); got != "alice" {
		t.Fatalf("whoami: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
		"subject_token": {"alice-id-token"}, "subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"},
		"audience": {g.issuer}, "resource": {g.url}, "client_id": {"idp-client"},
	}
	if len(idp) != 1 || idp[0].Encode() != want.Encode() {
		t.Fatalf("token exchange %v, want %v", idp, want)
	}
}
