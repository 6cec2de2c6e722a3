package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// start runs the example on a loopback port until the test ends and returns its base URL.
func start(t *testing.T, cfg config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// token asks the local test authorization server for a token.
func token(t *testing.T, base, subject, resource, scope string) string {
	t.Helper()
	resp, err := http.PostForm(base+"/token", url.Values{"subject": {subject}, "resource": {resource}, "scope": {scope}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.AccessToken == "" {
		t.Fatalf("token endpoint: %d %v", resp.StatusCode, err)
	}
	return out.AccessToken
}

func client(base, tok string) *testutil.Client {
	c := testutil.NewClient(base+"/mcp", nil)
	if tok != "" {
		c.Header.Set("Authorization", "Bearer "+tok)
	}
	return c
}

func TestExampleWalkThrough(t *testing.T) {
	base := start(t, config{})
	mcpURL := base + "/mcp"
	meta := base + "/.well-known/oauth-protected-resource/mcp"

	// No token: 401 pointing at the metadata, which names the local authorization server.
	r := client(base, "").PostModern(t, testutil.ModernRequest(1, "server/discover", nil))
	if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+meta+`"` {
		t.Fatalf("no token: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
	resp, err := http.Get(meta)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.Resource != mcpURL || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != base {
		t.Fatalf("metadata: %+v %v", doc, err)
	}

	// A token for another resource is refused: no token passthrough.
	r = client(base, token(t, base, "alice", "https://elsewhere.example.com/mcp", "notes:read")).PostModern(t, testutil.ModernRequest(1, "server/discover", nil))
	if r.Status != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("foreign audience: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}

	// A reader may call whoami and read her notes, but not write: 403 insufficient_scope.
	reader := client(base, token(t, base, "alice", mcpURL, "notes:read"))
	w := reader.CallModern(t, 2, "tools/call", map[string]any{"name": "whoami"})
	if !strings.Contains(string(w.Result), "you are alice with scopes [notes:read]") {
		t.Fatalf("whoami: %s", w.Result)
	}
	add := map[string]any{"name": "add_note", "arguments": map[string]any{"text": "buy milk"}}
	r = reader.PostModern(t, testutil.ModernRequest(3, "tools/call", add))
	if r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="insufficient_scope", scope="notes:write"`) {
		t.Fatalf("write with a read token: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}

	// Step up: a token with both scopes writes, over the legacy lifecycle this time.
	writer := client(base, token(t, base, "alice", mcpURL, "notes:read notes:write"))
	writer.Initialize(t)
	if w := writer.Call(t, 4, "tools/call", add); w.Error != nil || !strings.Contains(string(w.Result), "noted (1 notes)") {
		t.Fatalf("add_note: %s %v", w.Result, w.Error)
	}
	// The session belongs to alice: bob's valid token does not open it.
	bob := client(base, token(t, base, "bob", mcpURL, "notes:read notes:write"))
	bob.SessionID, bob.ProtocolVersion = writer.SessionID, writer.ProtocolVersion
	if r := bob.Post(t, testutil.CallTool(7, "whoami", map[string]any{}, nil)); r.Status != http.StatusForbidden {
		t.Fatalf("bob on alice's session: %d %s, want 403", r.Status, r.Body)
	}
	w = reader.CallModern(t, 5, "resources/read", map[string]any{"uri": "notes://alice"})
	if !strings.Contains(string(w.Result), "buy milk") {
		t.Fatalf("read own notes: %s %v", w.Result, w.Error)
	}
	// Without notes:read the template is refused, whatever the owner.
	r = client(base, token(t, base, "bob", mcpURL, "")).PostModern(t, testutil.ModernRequest(6, "resources/read", map[string]any{"uri": "notes://alice"}))
	if r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `scope="notes:read"`) {
		t.Fatalf("read without notes:read: %d %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
}

func TestExampleExternalIssuer(t *testing.T) {
	as := testutil.StartAuthServer(t)
	base := start(t, config{issuer: as.Issuer, resource: "http://127.0.0.1:1/mcp"})
	// The local authorization server is not mounted.
	if resp, err := http.Get(base + "/jwks"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/jwks with -issuer: %v %v", resp.StatusCode, err)
	}
	// Tokens of the external issuer for the configured resource are accepted; its metadata
	// and keys were fetched only once the first token arrived.
	if n := as.JWKSFetches.Load(); n != 0 {
		t.Fatalf("%d JWKS fetches before any token, want 0", n)
	}
	c := client(base, as.Token(t, "carol", "http://127.0.0.1:1/mcp"))
	w := c.CallModern(t, 1, "tools/call", map[string]any{"name": "whoami"})
	if !strings.Contains(string(w.Result), "you are carol") {
		t.Fatalf("whoami: %s %v", w.Result, w.Error)
	}
	// A token naming the served URL instead of -resource is refused.
	r := client(base, as.Token(t, "carol", base+"/mcp")).PostModern(t, testutil.ModernRequest(2, "server/discover", nil))
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("audience of the served URL with -resource set: %d", r.Status)
	}
}

func TestExampleConformanceFixture(t *testing.T) {
	base := start(t, config{conformance: true})
	low, full := client(base, conformanceLowToken), client(base, conformanceFullToken)
	r := low.PostModern(t, testutil.ModernRequest(1, "resources/read", map[string]any{"uri": "test://template/123/data"}))
	h := r.Header.Get("WWW-Authenticate")
	if r.Status != http.StatusForbidden || !strings.Contains(h, "mcp:conformance:resources:read mcp:conformance:resources:template:123") {
		t.Fatalf("low token: %d %q", r.Status, h)
	}
	if w := full.CallModern(t, 2, "resources/read", map[string]any{"uri": "test://template/123/data"}); !strings.Contains(string(w.Result), "Data for ID: 123") {
		t.Fatalf("full token: %s %v", w.Result, w.Error)
	}
}
