package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// newExpiryStack serves the kit's endpoint behind RequireBearer with a JWT verifier that allows
// no clock skew, so a token stops being accepted at its exp.
func newExpiryStack(t *testing.T) (as *testutil.AuthServer, url string) {
	t.Helper()
	as = testutil.StartAuthServer(t)
	h := http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	url = ts.URL + "/mcp"
	s := core.NewServer(core.Implementation{Name: "expiry", Version: "1"}, core.Options{})
	mcp := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = mcp.Close() })
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: url, Leeway: -1})
	h = auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL(url)})(mcp)
	return as, url
}

// shortToken mints a token of subject that expires in two seconds.
func shortToken(t *testing.T, as *testutil.AuthServer, subject, url string) string {
	c := as.Claims(subject, url)
	c["exp"] = time.Now().Add(2 * time.Second).Unix()
	return as.Mint(t, c)
}

// TestTokenExpiryEndsListenStream: a listen stream opened with a token that expires is answered,
// at the expiry, with a JSON-RPC error for the listen request saying the token expired, and
// ends; the next request with that token is refused 401 invalid_token.
func TestTokenExpiryEndsListenStream(t *testing.T) {
	as, url := newExpiryStack(t)
	token := shortToken(t, as, "alice", url)
	c := testutil.NewClient(url, nil)
	c.Header.Set("Authorization", "Bearer "+token)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp := c.Open(t, c.NewModernPost(ctx, testutil.ModernRequest("L1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", resp.StatusCode)
	}
	sr := testutil.NewSSEReader(resp.Body)
	if ev, err := sr.NextMessage(); err != nil || !strings.Contains(ev.Data, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first frame %q %v", ev.Data, err)
	}
	ev, err := sr.NextMessage()
	if err != nil {
		t.Fatalf("the stream ended without an answer after the token expired: %v", err)
	}
	var msg struct {
		ID    string `json:"id"`
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ev.Data), &msg) != nil || msg.ID != "L1" || msg.Error == nil ||
		msg.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(msg.Error.Data, "token expired") {
		t.Fatalf("last frame = %s, want the listen request answered with an error saying the token expired", ev.Data)
	}
	if _, err := sr.NextMessage(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the error: %v, want the end of the stream", err)
	}
	wantInvalidToken(t, c.PostModern(t, testutil.ModernRequest(2, "tools/list", nil)))
}

// TestTokenExpiryEndsGetStream: the legacy standalone GET stream opened with a token that
// expires ends at the expiry; the next request with that token is refused 401 invalid_token.
func TestTokenExpiryEndsGetStream(t *testing.T) {
	as, url := newExpiryStack(t)
	c := testutil.NewClient(url, nil)
	c.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url))
	c.Initialize(t)
	c.Header.Set("Authorization", "Bearer "+shortToken(t, as, "alice", url))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp := c.Open(t, c.NewRequest(ctx, http.MethodGet))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("the GET stream did not end at the token's expiry: %v", err)
	}
	wantInvalidToken(t, c.Post(t, testutil.CallTool(3, "nope", map[string]any{}, nil)))
}

func wantInvalidToken(t *testing.T, r testutil.Reply) {
	t.Helper()
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("next request with the expired token: %d %q, want 401 invalid_token", r.Status, r.Header.Get("WWW-Authenticate"))
	}
}

// TestValidUntilIsExpiryPlusLeeway: the verifier says when it stops accepting a token (its exp
// plus the leeway), which is when RequireBearer ends the token's streams.
func TestValidUntilIsExpiryPlusLeeway(t *testing.T) {
	as := testutil.StartAuthServer(t)
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: "https://mcp.example/mcp", Leeway: 5 * time.Second})
	info, err := v.Verify(context.Background(), as.Token(t, "alice", "https://mcp.example/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Expiration.IsZero() || !info.ValidUntil.Equal(info.Expiration.Add(5*time.Second)) {
		t.Fatalf("Expiration %v, ValidUntil %v: want ValidUntil 5 s after Expiration", info.Expiration, info.ValidUntil)
	}
}

// TestTokenExpiryEndsResumedStream: a GET resuming a request's stream with a token that expires
// closes at the expiry; the request goes on, and a resume with a valid token gets its response.
func TestTokenExpiryEndsResumedStream(t *testing.T) {
	as := testutil.StartAuthServer(t)
	h := http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	release := make(chan struct{})
	s := core.NewServer(core.Implementation{Name: "expiry", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "wait"}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		select {
		case <-release:
			return core.TextResult("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	mcp := mcphttp.New(s, mcphttp.Options{Resumability: mcphttp.ResumabilityOptions{Enabled: true}})
	t.Cleanup(func() { _ = mcp.Close() })
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: url, Leeway: -1})
	h = auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL(url)})(mcp)

	c := testutil.NewClient(url, nil)
	long := "Bearer " + as.Token(t, "alice", url)
	c.Header.Set("Authorization", long)
	c.Initialize(t)
	post, cut := context.WithCancel(context.Background())
	resp := c.Open(t, c.NewPost(post, testutil.CallTool(5, "wait", map[string]any{}, nil)))
	sr := testutil.NewSSEReader(resp.Body)
	if _, err := sr.Next(); err != nil || sr.LastEventID() == "" {
		t.Fatalf("priming event: %v", err)
	}
	last := sr.LastEventID()
	cut()
	resp.Body.Close()

	resume := func(authz string) *http.Response {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		t.Cleanup(cancel)
		req := c.NewRequest(ctx, http.MethodGet)
		req.Header.Set("Authorization", authz)
		req.Header.Set("Last-Event-ID", last)
		return c.Open(t, req)
	}
	get := resume("Bearer " + shortToken(t, as, "alice", url))
	if get.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d", get.StatusCode)
	}
	if _, err := io.Copy(io.Discard, get.Body); err != nil {
		t.Fatalf("the resumed stream did not end at the token's expiry: %v", err)
	}
	get.Body.Close()
	// The request went on: resumed with a valid token, it answers.
	get = resume(long)
	defer get.Body.Close()
	close(release)
	ev, err := testutil.NewSSEReader(get.Body).NextMessage()
	if err != nil || !strings.Contains(ev.Data, `"done"`) {
		t.Fatalf("the response after resuming with a valid token: %q %v", ev.Data, err)
	}
}
