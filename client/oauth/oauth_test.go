package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

// site is the kit's server behind the bearer and scope layers ("write" needs files:write),
// with the test authorization server on the same origin, as examples/oauth mounts it. Tokens
// can be revoked.
type site struct {
	url     string // the MCP endpoint
	origin  string
	as      *testutil.AuthServer
	mux     *http.ServeMux
	revoked sync.Map
}

func newSite(t *testing.T, setup func(*testutil.AuthServer)) *site {
	t.Helper()
	st := &site{mux: http.NewServeMux()}
	srv := httptest.NewServer(st.mux)
	t.Cleanup(srv.Close)
	st.origin, st.url = srv.URL, srv.URL+"/mcp"
	st.as = testutil.NewAuthServer(srv.URL, testutil.NewECKey(t, "k1"))
	if setup != nil {
		setup(st.as)
	}
	st.as.Mount(st.mux)
	meta := auth.NewMetadataHandler(auth.Metadata{Resource: st.url, AuthorizationServers: []string{st.as.Issuer}, ScopesSupported: []string{"files:read"}})
	meta.Mount(st.mux)
	s := core.NewServer(core.Implementation{Name: "site", Version: "1"}, core.Options{})
	for _, name := range []string{"whoami", "write"} {
		s.AddTool(&core.Tool{Name: name, Description: name}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
			p, _ := core.PrincipalFrom(ctx)
			return core.TextResult(name + " " + p), nil
		})
	}
	ep := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = ep.Shutdown(context.Background()) })
	jwt := auth.NewJWTVerifier(auth.JWTOptions{Issuer: st.as.Issuer, Audience: st.url})
	v := auth.VerifierFunc(func(ctx context.Context, tok string) (*auth.TokenInfo, error) {
		if _, ok := st.revoked.Load(tok); ok {
			return nil, auth.ErrInvalidToken
		}
		return jwt.Verify(ctx, tok)
	})
	st.mux.Handle("/mcp", auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta.URL()})(
		middleware.Decode(middleware.DecodeOptions{})(
			auth.RequireScopes(auth.ScopeOptions{ResourceMetadataURL: meta.URL(), Tools: map[string][]string{"write": {"files:write"}}})(ep))))
	return st
}

// follower plays the person: the test server approves at once, so the answer to the
// authorization URL is the redirect. tamper, when set, changes the redirect's query.
type follower struct {
	calls  atomic.Int32
	tamper func(url.Values)
}

func (f *follower) RedirectURL(context.Context) (string, error) {
	return "http://127.0.0.1:1/callback", nil
}

func (f *follower) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	f.calls.Add(1)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("authorization endpoint: HTTP %d", resp.StatusCode)
	}
	q := loc.Query()
	if f.tamper != nil {
		f.tamper(q)
	}
	return q, nil
}

func connect(t *testing.T, u string, tr *oauth.Transport) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: u, HTTPClient: tr.Client()}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *client.Client, tool string) string {
	t.Helper()
	res, err := c.CallTool(context.Background(), tool, nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Content[0].Text
}

func TestRefreshOnRefusedToken(t *testing.T) {
	st := newSite(t, nil)
	f := &follower{}
	tr := oauth.New(oauth.Options{Authorizer: f})
	c := connect(t, st.url, tr)
	if got := call(t, c, "whoami"); got != "whoami user" {
		t.Fatalf("whoami: %q", got)
	}
	old := tr.Token(st.url)
	st.revoked.Store(old.AccessToken, true)
	if got := call(t, c, "whoami"); got != "whoami user" {
		t.Fatalf("whoami after revocation: %q", got)
	}
	nt := tr.Token(st.url)
	if st.as.Count("refresh_token") != 1 || f.calls.Load() != 1 || nt.AccessToken == old.AccessToken || nt.RefreshToken == old.RefreshToken {
		t.Fatalf("%d refreshes, %d authorizations, rotated %v/%v: want one refresh, no new authorization, both tokens rotated",
			st.as.Count("refresh_token"), f.calls.Load(), nt.AccessToken != old.AccessToken, nt.RefreshToken != old.RefreshToken)
	}
}

func TestStoredTokenOutlivesTheTransport(t *testing.T) {
	st := newSite(t, nil)
	store := &oauth.MemoryStore{}
	f := &follower{}
	call(t, connect(t, st.url, oauth.New(oauth.Options{Authorizer: f, Store: store})), "whoami")
	// A new transport (a program started again) with the same store: the server's challenge
	// leads it to the stored token; nobody is asked.
	call(t, connect(t, st.url, oauth.New(oauth.Options{Authorizer: f, Store: store})), "whoami")
	if n := f.calls.Load(); n != 1 || st.as.Count("register") != 1 {
		t.Fatalf("%d authorizations, %d registrations with a stored token and registration, want 1 and 1", n, st.as.Count("register"))
	}
	tok, err := store.Token(context.Background(), oauth.Key{Issuer: st.as.Issuer, Resource: st.url})
	if err != nil || tok == nil || tok.Issuer != st.as.Issuer {
		t.Fatalf("stored token: %+v %v", tok, err)
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	st := newSite(t, nil)
	doc := st.origin + "/client.json"
	st.mux.HandleFunc("/client.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"client_name":"test","redirect_uris":["http://127.0.0.1:1/callback"]}`, doc)
	})
	call(t, connect(t, st.url, oauth.New(oauth.Options{Authorizer: &follower{}, ClientMetadataURL: doc})), "whoami")
	if st.as.Count("cimd") == 0 || st.as.Count("register") != 0 {
		t.Fatalf("%d metadata document fetches, %d registrations: want the document used instead of registration", st.as.Count("cimd"), st.as.Count("register"))
	}
}

func TestStepUpWithClientCredentials(t *testing.T) {
	st := newSite(t, func(as *testutil.AuthServer) { as.AddClient("svc", "pw") })
	c := connect(t, st.url, oauth.New(oauth.Options{ClientCredentials: true, ClientID: "svc", ClientSecret: "pw"}))
	if got := call(t, c, "write"); got != "write svc" {
		t.Fatalf("write: %q", got)
	}
	if n := st.as.Count("client_credentials"); n != 2 {
		t.Fatalf("%d grants, want 2 (files:read from the metadata, then files:read files:write)", n)
	}
}

// authError runs a call that must fail to authorize and returns its *client.AuthError.
func authError(t *testing.T, u string, tr *oauth.Transport) *client.AuthError {
	t.Helper()
	_, err := client.Connect(context.Background(), &client.HTTPTransport{URL: u, HTTPClient: tr.Client()}, client.Options{Lifecycle: client.Modern})
	var ae *client.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("connect: %v, want an *client.AuthError", err)
	}
	return ae
}

func TestAuthorizationResponseChecked(t *testing.T) {
	st := newSite(t, nil)
	for _, tc := range []struct {
		name   string
		tamper func(url.Values)
		want   string
	}{
		{"state", func(q url.Values) { q.Set("state", "forged") }, "state does not match"},
		{"wrong iss", func(q url.Values) { q.Set("iss", "https://evil.example.com") }, "RFC 9207"},
		{"iss with a slash", func(q url.Values) { q.Set("iss", q.Get("iss")+"/") }, "RFC 9207"},
		{"no iss", func(q url.Values) { q.Del("iss") }, "advertises the iss parameter"},
		{"refused", func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }, "access_denied"},
	} {
		before := st.as.Count("authorization_code")
		ae := authError(t, st.url, oauth.New(oauth.Options{Authorizer: &follower{tamper: tc.tamper}}))
		if ae.StatusCode != http.StatusUnauthorized || !strings.Contains(ae.Error(), tc.want) {
			t.Errorf("%s: %v, want a 401 saying %q", tc.name, ae, tc.want)
		}
		if st.as.Count("authorization_code") != before {
			t.Errorf("%s: the code was redeemed anyway", tc.name)
		}
	}
}

// challenger is a server that refuses every request with a challenge pointing at its own
// metadata, which the test writes.
func challenger(t *testing.T, prm func(origin string) string, extra func(mux *http.ServeMux, origin string)) string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/prm"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	mux.HandleFunc("/prm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(prm(srv.URL)))
	})
	if extra != nil {
		extra(mux, srv.URL)
	}
	return srv.URL + "/mcp"
}

func TestDiscoveryRefusals(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"resource":"x","authorization_servers":["y"]}`))
	}))
	defer other.Close()
	for _, tc := range []struct {
		name  string
		prm   func(origin string) string
		extra func(mux *http.ServeMux, origin string)
		opts  oauth.Options
		want  string
	}{
		{name: "resource of another origin", prm: func(o string) string {
			return `{"resource":"https://evil.example.com/mcp","authorization_servers":["` + o + `"]}`
		}, want: "another origin"},
		{name: "resource of another path", prm: func(o string) string {
			return `{"resource":"` + o + `/other","authorization_servers":["` + o + `"]}`
		}, want: "does not cover the server"},
		{name: "no authorization server", prm: func(o string) string { return `{"resource":"` + o + `/mcp"}` }, want: "names no authorization server"},
		{name: "issuer mismatch", prm: func(o string) string {
			return `{"resource":"` + o + `/mcp","authorization_servers":["` + o + `/as"]}`
		}, extra: func(mux *http.ServeMux, o string) {
			mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"issuer":"https://attacker.example.com","authorization_endpoint":"` + o + `/a","token_endpoint":"` + o + `/t"}`))
			})
		}, want: "names issuer \"https://attacker.example.com\""},
		{name: "no server metadata", prm: func(o string) string {
			return `{"resource":"` + o + `/mcp","authorization_servers":["` + o + `/as"]}`
		}, want: "publishes no metadata"},
		{name: "no PKCE", prm: func(o string) string {
			return `{"resource":"` + o + `/mcp","authorization_servers":["` + o + `"]}`
		}, extra: func(mux *http.ServeMux, o string) {
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(`{"issuer":"` + o + `","authorization_endpoint":"` + o + `/a","token_endpoint":"` + o + `/t","registration_endpoint":"` + o + `/r"}`))
			})
			mux.HandleFunc("/r", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"client_id":"c"}`))
			})
		}, want: "PKCE S256"},
		{name: "metadata redirected to another origin", prm: func(o string) string {
			return `{"resource":"` + o + `/mcp","authorization_servers":["` + o + `"]}`
		}, extra: func(mux *http.ServeMux, o string) {
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/meta", http.StatusFound)
			})
		}, want: "another origin"},
		{name: "oversized metadata", prm: func(o string) string {
			return `{"resource":"` + o + `/mcp","authorization_servers":["` + o + `"],"pad":"` + strings.Repeat("x", 2000) + `"}`
		}, opts: oauth.Options{MaxDocumentBytes: 1000}, want: "larger than 1000 bytes"},
	} {
		opts := tc.opts
		opts.Authorizer = &follower{}
		ae := authError(t, challenger(t, tc.prm, tc.extra), oauth.New(opts))
		if !strings.Contains(ae.Error(), tc.want) || ae.ResourceMetadata == "" {
			t.Errorf("%s: %v, want it to say %q", tc.name, ae, tc.want)
		}
	}
}

func TestNoAuthorizer(t *testing.T) {
	st := newSite(t, nil)
	ae := authError(t, st.url, oauth.New(oauth.Options{}))
	if !strings.Contains(ae.Error(), "no Authorizer") {
		t.Fatalf("%v, want it to say no Authorizer is set", ae)
	}
}

// stubborn is a server whose every authorized request gets 403 insufficient_scope, naming a
// new scope each time (fresh) or always the same one.
func stubborn(t *testing.T, fresh bool) (string, *testutil.AuthServer) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	as := testutil.NewAuthServer(srv.URL, testutil.NewECKey(t, "k1"))
	as.Mount(mux)
	prm := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, srv.URL+"/mcp", as.Issuer)
	})
	var n atomic.Int32
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer scope="s0", resource_metadata="`+prm+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		scope := "s0"
		if fresh {
			scope = fmt.Sprintf("s%d", n.Add(1))
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+scope+`", resource_metadata="`+prm+`"`)
		http.Error(w, "forbidden", http.StatusForbidden)
	})
	return srv.URL + "/mcp", as
}

func TestStepUpLimit(t *testing.T) {
	u, as := stubborn(t, true)
	ae := authError(t, u, oauth.New(oauth.Options{Authorizer: &follower{}, MaxStepUps: 2}))
	if ae.StatusCode != http.StatusForbidden || ae.Code != "insufficient_scope" || !strings.Contains(ae.Error(), "2 authorizations in a row") {
		t.Fatalf("%v, want a 403 insufficient_scope after 2 step-ups", ae)
	}
	if n := as.Count("authorize"); n != 3 {
		t.Fatalf("%d authorizations, want 3 (the first and 2 step-ups)", n)
	}

	// A scope the token already holds: asking again cannot help, so it is not asked.
	u, as = stubborn(t, false)
	ae = authError(t, u, oauth.New(oauth.Options{Authorizer: &follower{}}))
	if !strings.Contains(ae.Error(), "already holds") || as.Count("authorize") != 1 {
		t.Fatalf("%v after %d authorizations, want a refusal after the first", ae, as.Count("authorize"))
	}
}

// startAS starts a test authorization server on its own loopback origin.
func startAS(t *testing.T) *testutil.AuthServer {
	t.Helper()
	var as *testutil.AuthServer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { as.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	as = testutil.NewAuthServer(srv.URL, testutil.NewECKey(t, "k1"))
	return as
}

// TestAuthorizationServerMigration: the server's metadata names another authorization server
// and refuses the old one's tokens; the client registers there and gets a token there, never
// refreshing at the old one or presenting its registration.
func TestAuthorizationServerMigration(t *testing.T) {
	as1, as2 := startAS(t), startAS(t)
	var current atomic.Pointer[testutil.AuthServer]
	current.Store(as1)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resource := srv.URL + "/mcp"
	prm := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, resource, current.Load().Issuer)
	})
	verifiers := map[*testutil.AuthServer]auth.Verifier{
		as1: auth.NewJWTVerifier(auth.JWTOptions{Issuer: as1.Issuer, Audience: resource}),
		as2: auth.NewJWTVerifier(auth.JWTOptions{Issuer: as2.Issuer, Audience: resource}),
	}
	s := core.NewServer(core.Implementation{Name: "moving", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "whoami", Description: "whoami"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("ok"), nil
	})
	ep := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = ep.Shutdown(context.Background()) })
	v := auth.VerifierFunc(func(ctx context.Context, tok string) (*auth.TokenInfo, error) {
		return verifiers[current.Load()].Verify(ctx, tok)
	})
	mux.Handle("/mcp", auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: prm})(ep))

	tr := oauth.New(oauth.Options{Authorizer: &follower{}})
	c := connect(t, resource, tr)
	call(t, c, "whoami")
	current.Store(as2)
	call(t, c, "whoami")
	if tok := tr.Token(resource); tok.Issuer != as2.Issuer {
		t.Fatalf("token of %s after the move, want %s", tok.Issuer, as2.Issuer)
	}
	if as1.Count("refresh_token") != 0 || as2.Count("register") != 1 || as2.Count("authorization_code") != 1 {
		t.Fatalf("after the move: %d refreshes at the old server, %d registrations and %d grants at the new one: want 0, 1, 1",
			as1.Count("refresh_token"), as2.Count("register"), as2.Count("authorization_code"))
	}
}

// TestConcurrentRefusals: calls refused at the same time share one refresh.
func TestConcurrentRefusals(t *testing.T) {
	st := newSite(t, nil)
	f := &follower{}
	tr := oauth.New(oauth.Options{Authorizer: f})
	c := connect(t, st.url, tr)
	call(t, c, "whoami")
	st.revoked.Store(tr.Token(st.url).AccessToken, true)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.CallTool(context.Background(), "whoami", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := st.as.Count("refresh_token"); n != 1 || f.calls.Load() != 1 {
		t.Fatalf("%d refreshes, %d authorizations for 8 refused calls, want 1 and 1", n, f.calls.Load())
	}
}

// slowPerson answers only once wait is closed, and reports whether its own context was still
// live then.
type slowPerson struct {
	follower
	wait    <-chan struct{}
	live    chan bool
	started chan struct{}
}

func (p *slowPerson) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	if p.started != nil {
		close(p.started)
	}
	select {
	case <-p.wait:
	case <-ctx.Done():
		p.live <- false
		return nil, ctx.Err()
	}
	p.live <- ctx.Err() == nil
	return p.follower.Authorize(ctx, authURL)
}

// TestPersonSlowerThanTheRequest: the authorization outlives the deadline of the request that
// started it (a probe's, say), but not its cancellation.
func TestPersonSlowerThanTheRequest(t *testing.T) {
	st := newSite(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	post := func(ctx context.Context, hc *http.Client) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, st.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	p := &slowPerson{wait: ctx.Done(), live: make(chan bool, 1)} // answers once the request's deadline passed
	tr := oauth.New(oauth.Options{Authorizer: p})
	err := post(ctx, tr.Client())
	select {
	case live := <-p.live: // Authorize ran within the request, so it has answered by now
		if !errors.Is(err, context.DeadlineExceeded) || !live {
			t.Fatalf("request: %v; the person's context live after the deadline: %v; want the request timed out but not the authorization", err, live)
		}
	default:
		t.Fatalf("the request (%v) never reached the authorization within its 500 ms", err)
	}
	if tr.Token(st.url) == nil {
		t.Fatal("the authorization completed after the deadline left no token")
	}

	// Cancelling the request cancels the authorization.
	cctx, ccancel := context.WithCancel(context.Background())
	never := make(chan struct{})
	p2 := &slowPerson{wait: never, live: make(chan bool, 1), started: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- post(cctx, oauth.New(oauth.Options{Authorizer: p2}).Client()) }()
	<-p2.started
	ccancel()
	if err := <-done; !errors.Is(err, context.Canceled) || <-p2.live {
		t.Fatalf("cancelled request: %v, want the authorization cancelled with it", err)
	}
}
