package auth_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// reply is an HTTP answer.
type reply struct {
	status int
	header http.Header
	body   string
}

// send does req and reads the whole answer.
func send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// post sends a JSON-RPC body with the given Authorization value ("" for none).
func post(t *testing.T, url, authz, body string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", testutil.AcceptBoth)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	return send(t, req)
}

// Challenge parsing, written independently of the code under test: RFC 9110 section 11 syntax,
// token or quoted-string values.
var (
	tokenRE = `[!#$%&'*+\-.^_` + "`" + `|~0-9A-Za-z]+`
	paramRE = regexp.MustCompile(`^(` + tokenRE + `)=(?:"((?:\\.|[^"\\])*)"|(` + tokenRE + `))$`)
)

type parsedChallenge struct {
	scheme string
	params map[string]string
	quoted map[string]bool
}

// parseChallenge parses one challenge (the header must hold exactly one), failing on any syntax
// error.
func parseChallenge(t *testing.T, h string) parsedChallenge {
	t.Helper()
	scheme, rest, _ := strings.Cut(h, " ")
	if !regexp.MustCompile(`^` + tokenRE + `$`).MatchString(scheme) {
		t.Fatalf("challenge %q: bad scheme", h)
	}
	pc := parsedChallenge{scheme: scheme, params: map[string]string{}, quoted: map[string]bool{}}
	var parts []string
	start, inQuote, esc := 0, false, false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case esc:
			esc = false
		case inQuote && c == '\\':
			esc = true
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ',':
			parts = append(parts, strings.TrimSpace(rest[start:i]))
			start = i + 1
		}
	}
	if inQuote {
		t.Fatalf("challenge %q: unterminated quoted-string", h)
	}
	if strings.TrimSpace(rest) != "" {
		parts = append(parts, strings.TrimSpace(rest[start:]))
	}
	for _, p := range parts {
		m := paramRE.FindStringSubmatch(p)
		if m == nil {
			t.Fatalf("challenge %q: bad auth-param %q", h, p)
		}
		name := strings.ToLower(m[1])
		if _, dup := pc.params[name]; dup {
			t.Fatalf("challenge %q: repeated parameter %s", h, name)
		}
		if m[3] != "" {
			pc.params[name] = m[3]
		} else {
			pc.params[name] = regexp.MustCompile(`\\(.)`).ReplaceAllString(m[2], "$1")
			pc.quoted[name] = true
		}
	}
	return pc
}

// wantChallenge checks a WWW-Authenticate header: one Bearer challenge, every value quoted, the
// error code (empty: none), and an absolute resource_metadata equal to meta.
func wantChallenge(t *testing.T, r reply, status int, errCode, meta string) parsedChallenge {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	hs := r.header.Values("WWW-Authenticate")
	if len(hs) != 1 {
		t.Fatalf("WWW-Authenticate %q, want one", hs)
	}
	pc := parseChallenge(t, hs[0])
	if pc.scheme != "Bearer" {
		t.Errorf("scheme %q, want Bearer", pc.scheme)
	}
	for k := range pc.params {
		if !pc.quoted[k] {
			t.Errorf("parameter %s is not a quoted-string: %s", k, hs[0])
		}
	}
	if got := pc.params["error"]; got != errCode {
		t.Errorf("error=%q, want %q (%s)", got, errCode, hs[0])
	}
	if got := pc.params["resource_metadata"]; got != meta {
		t.Errorf("resource_metadata=%q, want %q", got, meta)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", r.header.Get("Cache-Control"))
	}
	if !strings.Contains(r.body, `"jsonrpc":"2.0"`) || !strings.Contains(r.body, `"error"`) {
		t.Errorf("body is not a JSON-RPC error: %s", r.body)
	}
	return pc
}

// fixture is a protected MCP endpoint with a test authorization server.
type fixture struct {
	as       *testutil.AuthServer
	url      string // the MCP endpoint, also the resource
	meta     string // the metadata URL
	verifier *auth.JWTVerifier
	clock    *testutil.Clock
}

// principalEcho is a handler that answers with the principal and scopes it was given.
func principalEcho(w http.ResponseWriter, r *http.Request) {
	p, _ := core.PrincipalFrom(r.Context())
	var scopes []string
	if info, ok := auth.TokenInfoFrom(r.Context()); ok {
		scopes = info.Scopes
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, p+"|"+strings.Join(scopes, " "))
}

// newBearerFixture serves inner at /mcp behind RequireBearer with a JWT verifier of a fresh
// authorization server.
func newBearerFixture(t *testing.T, opts auth.BearerOptions, jwtOpts auth.JWTOptions, inner http.Handler) *fixture {
	t.Helper()
	f := &fixture{as: testutil.StartAuthServer(t), clock: testutil.NewClockAt(time.Now())}
	h := http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	f.url = ts.URL + "/mcp"
	meta := auth.NewMetadataHandler(auth.Metadata{Resource: f.url, AuthorizationServers: []string{f.as.Issuer}})
	f.meta = meta.URL()
	jwtOpts.Issuer, jwtOpts.Audience = f.as.Issuer, f.url
	f.verifier = auth.NewJWTVerifier(jwtOpts)
	auth.SetJWTClock(f.verifier, f.clock.Now)
	opts.ResourceMetadataURL = f.meta
	mux := http.NewServeMux()
	meta.Mount(mux)
	mux.Handle("/mcp", auth.RequireBearer(f.verifier, opts)(inner))
	h = mux
	return f
}

func testutilEncode(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// wantPanic runs f and checks it panics with a message containing want (the option's name).
func wantPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatal("no panic")
		}
		if msg, _ := r.(string); !strings.HasPrefix(msg, "auth: ") || !strings.Contains(msg, want) {
			t.Errorf("panic %v: want an auth: message naming %s", r, want)
		}
	}()
	f()
}
