package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// browser plays the person for a LoopbackAuthorizer: it is its Out, and opens every
// authorization URL printed there (the test server approves at once and redirects to the
// listener), counting them.
type browser struct {
	t    *testing.T
	mu   sync.Mutex
	urls []string
}

var authURL = regexp.MustCompile(`https?://\S+/authorize\?\S+`)

func (b *browser) Write(p []byte) (int, error) {
	u := authURL.FindString(string(p))
	if u == "" {
		return len(p), nil
	}
	b.mu.Lock()
	b.urls = append(b.urls, u)
	b.mu.Unlock()
	resp, err := http.Get(u)
	if err != nil {
		b.t.Errorf("the browser: %v", err)
		return len(p), nil
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.t.Errorf("the browser ended on HTTP %d", resp.StatusCode)
	}
	return len(p), nil
}

func (b *browser) visits() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.urls)
}

func text(t *testing.T, res *core.CallToolResult) string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		out = append(out, c.Text)
	}
	return strings.Join(out, "\n")
}

// TestClientAuthorizationCode: the kit's client, given only the MCP URL, authorizes itself at
// the example's server: discovery, dynamic registration, PKCE, token, a call, step-up to
// notes:write, refresh before expiry (the clock moved near it) with the refresh token rotated, in both
// lifecycles.
func TestClientAuthorizationCode(t *testing.T) {
	for _, lc := range []mcpclient.Lifecycle{mcpclient.Modern, mcpclient.Legacy} {
		t.Run(fmt.Sprint(lc), func(t *testing.T) {
			// The server checks tokens against the real time (iat, exp), the client and the
			// authorization server run on this clock: it starts 4 minutes back, so the first
			// tokens (5 minutes) expire a minute from now, and moving it 4m10s forward brings
			// them within DefaultRefreshBefore of expiry while new ones are issued 10 s ahead.
			clock := testutil.NewClockAt(time.Now().Add(-4 * time.Minute))
			var as *testutil.AuthServer
			base := start(t, config{setup: func(s *testutil.AuthServer) { s.Now, as = clock.Now, s }})
			b := &browser{t: t}
			login := &oauth.LoopbackAuthorizer{Out: b}
			defer login.Close()
			tr := oauth.New(oauth.Options{Authorizer: login, Scopes: []string{scopeRead}, Now: clock.Now})
			ctx := context.Background()
			c, err := mcpclient.Connect(ctx, &mcpclient.HTTPTransport{URL: base + "/mcp", HTTPClient: tr.Client()}, mcpclient.Options{Lifecycle: lc})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "whoami", nil)
			if err != nil || text(t, res) != "you are user with scopes [notes:read]" {
				t.Fatalf("whoami: %v %v", res, err)
			}
			v := b.visits()
			if len(v) != 1 || !strings.Contains(v[0], "code_challenge_method=S256") || !strings.Contains(v[0], "resource=http") || as.Count("register") != 1 {
				t.Fatalf("authorizations %q, %d registrations: want one PKCE authorization naming the resource after one registration", v, as.Count("register"))
			}

			// add_note needs notes:write: 403, then a second authorization for both scopes.
			res, err = c.CallTool(ctx, "add_note", map[string]any{"text": "buy milk"})
			if err != nil || text(t, res) != "noted (1 notes)" {
				t.Fatalf("add_note: %v %v", res, err)
			}
			if v := b.visits(); len(v) != 2 || !strings.Contains(v[1], "scope=notes%3Aread+notes%3Awrite") {
				t.Fatalf("authorizations %q: want a second one for notes:read notes:write", v)
			}
			tok := tr.Token(base + "/mcp")
			if tok == nil || !slices.Equal(tok.Scopes, []string{scopeRead, scopeWrite}) || tok.RefreshToken == "" {
				t.Fatalf("token after step-up: %+v", tok)
			}

			// Within a minute of the token's expiry the client refreshes before calling.
			clock.Advance(4*time.Minute + 10*time.Second)
			if res, err := c.CallTool(ctx, "whoami", nil); err != nil || text(t, res) != "you are user with scopes [notes:read notes:write]" {
				t.Fatalf("whoami after expiry: %v %v", res, err)
			}
			nt := tr.Token(base + "/mcp")
			if as.Count("refresh_token") != 1 || nt.AccessToken == tok.AccessToken || nt.RefreshToken == tok.RefreshToken {
				t.Fatalf("after expiry: %d refreshes, token rotated %v, refresh token rotated %v", as.Count("refresh_token"), nt.AccessToken != tok.AccessToken, nt.RefreshToken != tok.RefreshToken)
			}
			if len(b.visits()) != 2 || as.Count("register") != 1 {
				t.Fatalf("refreshing asked the person again (%d authorizations) or registered again (%d)", len(b.visits()), as.Count("register"))
			}
		})
	}
}

// TestClientCredentials: a client without a person gets tokens by the client credentials
// grant, stepping up the same way.
func TestClientCredentials(t *testing.T) {
	var as *testutil.AuthServer
	base := start(t, config{setup: func(s *testutil.AuthServer) { as = s; s.AddClient("batch-job", "s3cret") }})
	tr := oauth.New(oauth.Options{ClientCredentials: true, ClientID: "batch-job", ClientSecret: "s3cret", Scopes: []string{scopeRead}})
	ctx := context.Background()
	c, err := mcpclient.Connect(ctx, &mcpclient.HTTPTransport{URL: base + "/mcp", HTTPClient: tr.Client()}, mcpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res, err := c.CallTool(ctx, "whoami", nil); err != nil || text(t, res) != "you are batch-job with scopes [notes:read]" {
		t.Fatalf("whoami: %v %v", res, err)
	}
	if res, err := c.CallTool(ctx, "add_note", map[string]any{"text": "nightly"}); err != nil || text(t, res) != "noted (1 notes)" {
		t.Fatalf("add_note: %v %v", res, err)
	}
	if n := as.Count("client_credentials"); n != 2 {
		t.Fatalf("%d client credentials grants, want 2 (the first, then the step-up)", n)
	}

	// A wrong secret: the call fails with an *mcpclient.AuthError that says so.
	bad := oauth.New(oauth.Options{ClientCredentials: true, ClientID: "batch-job", ClientSecret: "wrong"})
	_, err = mcpclient.Connect(ctx, &mcpclient.HTTPTransport{URL: base + "/mcp", HTTPClient: bad.Client()}, mcpclient.Options{})
	var ae *mcpclient.AuthError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusUnauthorized || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("wrong secret: %v, want a 401 *mcpclient.AuthError naming invalid_client", err)
	}
}

// TestClientMode runs the example's -connect mode against the example's server, the person
// played by the test's browser.
func TestClientMode(t *testing.T) {
	base := start(t, config{})
	b := &browser{t: t}
	login := &oauth.LoopbackAuthorizer{Out: b}
	defer login.Close()
	var out strings.Builder
	if err := runClient(context.Background(), base+"/mcp", login, &out); err != nil {
		t.Fatal(err)
	}
	want := "whoami: you are user with scopes [notes:read]\nadd_note: noted (1 notes)\n"
	if out.String() != want || len(b.visits()) != 2 {
		t.Fatalf("printed %q after %d authorizations, want %q after 2 (read, then the step-up)", out.String(), len(b.visits()), want)
	}
}
