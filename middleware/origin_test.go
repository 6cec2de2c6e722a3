package middleware

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	hostForbidden   = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: Invalid Host header"}}`
	originForbidden = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: Invalid Origin header"}}`
)

func TestOriginGuardWire(t *testing.T) {
	type want int
	const (
		ok want = iota
		badHost
		badOrigin
	)
	for _, tc := range []struct {
		name   string
		opts   OriginGuardOptions
		host   string // "" keeps the client's 127.0.0.1:PORT
		origin string
		want   want
	}{
		{name: "default loopback ip with port", want: ok},
		{name: "localhost", host: "localhost", want: ok},
		{name: "localhost with port, upper case", host: "LocalHost:8080", want: ok},
		{name: "other 127/8 address", host: "127.3.4.5:9000", want: ok},
		{name: "ipv6 loopback in brackets", host: "[::1]", want: ok},
		{name: "ipv6 loopback with port", host: "[::1]:8080", want: ok},
		{name: "foreign host", host: "evil.example", want: badHost},
		{name: "text after an ipv6 literal", host: "[::1]evil.com", want: badHost},
		{name: "text after an ipv6 literal and port", host: "[::1]:80evil.com", want: badHost},
		{name: "a port that is a name", host: "127.0.0.1:evil.com", want: badHost},
		{name: "an empty port", host: "localhost:", want: ok},
		{name: "foreign host with port", host: "evil.example:8080", want: badHost},
		{name: "loopback name as subdomain", host: "localhost.evil.example", want: badHost},
		{name: "loopback ip as subdomain", host: "127.0.0.1.nip.io", want: badHost},
		{name: "non-loopback ipv6", host: "[2001:db8::1]:80", want: badHost},
		{name: "private ip", host: "10.0.0.1", want: badHost},
		{name: "allowed bare host, any port", opts: OriginGuardOptions{AllowedHosts: []string{"mcp.example.com"}}, host: "mcp.example.com:9443", want: ok},
		{name: "allowed bare host, no port", opts: OriginGuardOptions{AllowedHosts: []string{"MCP.example.com"}}, host: "mcp.EXAMPLE.com", want: ok},
		{name: "allowed host:port, same port", opts: OriginGuardOptions{AllowedHosts: []string{"mcp.example.com:8443"}}, host: "mcp.example.com:8443", want: ok},
		{name: "allowed host:port, other port", opts: OriginGuardOptions{AllowedHosts: []string{"mcp.example.com:8443"}}, host: "mcp.example.com:9000", want: badHost},
		{name: "allowed host:port, no port", opts: OriginGuardOptions{AllowedHosts: []string{"mcp.example.com:8443"}}, host: "mcp.example.com", want: badHost},
		{name: "allowed ipv6 host:port", opts: OriginGuardOptions{AllowedHosts: []string{"[2001:db8::1]:8080"}}, host: "[2001:db8::1]:8080", want: ok},
		{name: "allowed bare ipv6", opts: OriginGuardOptions{AllowedHosts: []string{"2001:db8::1"}}, host: "[2001:DB8::1]:1", want: ok},
		{name: "same origin", host: "localhost:8080", origin: "http://localhost:8080", want: ok},
		{name: "same origin, https over plain HTTP (TLS ended in front)", host: "localhost:8080", origin: "https://localhost:8080", want: ok},
		{name: "same origin, upper-case scheme", host: "localhost:8080", origin: "HTTP://localhost:8080", want: ok},
		{name: "a made-up scheme is no origin of ours", host: "127.0.0.1:8080", origin: "evil://127.0.0.1:8080", want: badOrigin},
		{name: "a websocket scheme is no origin of ours", host: "localhost:8080", origin: "ws://localhost:8080", want: badOrigin},
		{name: "a file scheme", host: "localhost", origin: "file://localhost", want: badOrigin},
		{name: "same origin, http default port on origin", host: "localhost", origin: "http://localhost:80", want: ok},
		{name: "same origin, http default port on host", host: "localhost:80", origin: "http://localhost", want: ok},
		{name: "same origin, https default port", opts: OriginGuardOptions{AllowedHosts: []string{"app.example.com"}}, host: "app.example.com:443", origin: "https://app.example.com", want: ok},
		{name: "same origin, case-insensitive", host: "LOCALHOST:8080", origin: "http://localhost:8080", want: ok},
		{name: "other port is another origin", host: "localhost:8080", origin: "http://localhost:9999", want: badOrigin},
		{name: "https port 80 is not default", host: "localhost", origin: "https://localhost:80", want: badOrigin},
		{name: "evil origin", host: "localhost:8080", origin: "http://evil.example", want: badOrigin},
		{name: "null origin", host: "localhost", origin: "null", want: badOrigin},
		{name: "allow-listed origin", opts: OriginGuardOptions{AllowedOrigins: []string{"https://App.Example.com"}}, host: "localhost:8080", origin: "https://app.example.com", want: ok},
		{name: "allow-listed origin with trailing slash", opts: OriginGuardOptions{AllowedOrigins: []string{"https://app.example.com/"}}, host: "localhost:8080", origin: "https://APP.example.com", want: ok},
		{name: "allow list is exact", opts: OriginGuardOptions{AllowedOrigins: []string{"https://app.example.com"}}, host: "localhost:8080", origin: "https://app.example.com:8443", want: badOrigin},
		{name: "host checked before origin", host: "evil.example", origin: "http://evil.example", want: badHost},
		{name: "disabled", opts: OriginGuardOptions{Disabled: true}, host: "evil.example", origin: "http://evil.example", want: ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var called bool
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				_, _ = io.WriteString(w, "ok")
			})
			url := newServer(t, OriginGuard(tc.opts)(next)).URL
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				called = false
				req, err := http.NewRequest(method, url, strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				if tc.host != "" {
					req.Host = tc.host
				}
				if tc.origin != "" {
					req.Header.Set("Origin", tc.origin)
				}
				status, h, body := do(t, http.DefaultClient, req)
				switch tc.want {
				case ok:
					if status != 200 || !called {
						t.Errorf("%s: got %d %s, want it through", method, status, body)
					}
				case badHost:
					wantError(t, status, h, body, 403, hostForbidden)
				case badOrigin:
					wantError(t, status, h, body, 403, originForbidden)
				}
				if tc.want != ok && called {
					t.Errorf("%s: next was called", method)
				}
			}
		})
	}
}

// TestOriginGuardMissingHost sends an HTTP/1.0 request without a Host header over a raw
// connection: a missing Host is allowed.
func TestOriginGuardMissingHost(t *testing.T) {
	var host string
	srv := newServer(t, OriginGuard(OriginGuardOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host = r.Host
		_, _ = io.WriteString(w, "ok")
	})))
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET / HTTP/1.0\r\nOrigin: http://evil.example\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// No Host: the origin cannot be same-origin and is not listed, so it is refused, but the
	// host check itself passed.
	if resp.StatusCode != 403 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	conn2, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if _, err := io.WriteString(conn2, "GET / HTTP/1.0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err = http.ReadResponse(bufio.NewReader(conn2), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" || host != "" {
		t.Fatalf("got %d %q (host %q), want a request without Host let through", resp.StatusCode, b, host)
	}
}

// TestOriginGuardRepeatedOrigin: two Origin headers are refused, even when both are same-origin.
func TestOriginGuardRepeatedOrigin(t *testing.T) {
	srv := newServer(t, OriginGuard(OriginGuardOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})))
	self := "http://" + srv.Listener.Addr().String()
	for _, second := range []string{self, "http://evil.example"} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Add("Origin", self)
		req.Header.Add("Origin", second)
		status, h, body := do(t, http.DefaultClient, req)
		wantError(t, status, h, body, 403, originForbidden)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = "localhost"
	r.Header.Add("Origin", "http://localhost")
	r.Header.Add("Origin", "http://localhost")
	if err := (OriginGuardOptions{}).Check(r); !errors.Is(err, ErrForbiddenOrigin) {
		t.Errorf("Check with two Origin headers = %v, want ErrForbiddenOrigin", err)
	}
}

// TestOriginGuardSchemeOverTLS: over TLS only an https Origin is same-origin.
func TestOriginGuardSchemeOverTLS(t *testing.T) {
	srv := httptest.NewTLSServer(OriginGuard(OriginGuardOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})))
	t.Cleanup(srv.Close)
	hostPort := srv.Listener.Addr().String()
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://" + hostPort, true},
		{"http://" + hostPort, false},
		{"evil://" + hostPort, false},
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", tc.origin)
		status, h, body := do(t, srv.Client(), req)
		if tc.ok {
			if status != 200 {
				t.Errorf("%s: got %d %s, want it through", tc.origin, status, body)
			}
			continue
		}
		wantError(t, status, h, body, 403, originForbidden)
	}
}

func TestOriginOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         OriginGuardOptions
		host, origin string
		want         error
	}{
		{"no headers", OriginGuardOptions{}, "", "", nil},
		{"bare ipv6 loopback", OriginGuardOptions{}, "::1", "", nil},
		{"long ipv6 loopback", OriginGuardOptions{}, "[0:0:0:0:0:0:0:1]:80", "", nil},
		{"ipv4-mapped loopback", OriginGuardOptions{}, "[::ffff:127.0.0.1]", "", nil},
		{"evil host", OriginGuardOptions{}, "evil.example", "", ErrForbiddenHost},
		{"evil origin", OriginGuardOptions{}, "localhost", "http://evil.example", ErrForbiddenOrigin},
		{"origin without host", OriginGuardOptions{}, "", "http://localhost", ErrForbiddenOrigin},
		{"listed origin without host", OriginGuardOptions{AllowedOrigins: []string{"http://localhost"}}, "", "http://localhost", nil},
		{"unclosed bracket", OriginGuardOptions{}, "[::1", "", ErrForbiddenHost},
		{"disabled", OriginGuardOptions{Disabled: true}, "evil.example", "null", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if err := tc.opts.Check(r); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("Check = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestOriginGuardAllocations(t *testing.T) {
	guard := OriginGuard(OriginGuardOptions{AllowedHosts: []string{"mcp.example.com"}, AllowedOrigins: []string{"https://app.example.com"}})
	h := guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Host = "mcp.example.com:8443"
	r.Header.Set("Origin", "https://app.example.com")
	w := &discardWriter{h: http.Header{}}
	if n := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); n != 0 {
		t.Errorf("%v allocations per accepted request, want 0", n)
	}
	if w.status != 0 {
		t.Fatalf("refused with %d", w.status)
	}
}

// TestOriginGuardRemembersOnlyAcceptedHosts: one guard serves hosts that alternate between
// accepted and refused, so its memory of the last accepted Host must never stand for another.
func TestOriginGuardRemembersOnlyAcceptedHosts(t *testing.T) {
	h := OriginGuard(OriginGuardOptions{AllowedHosts: []string{"mcp.example.com:8443"}})(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	for i, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:8080", http.StatusNoContent},
		{"127.0.0.1:8080", http.StatusNoContent},
		{"127.0.0.1.nip.io", http.StatusForbidden},
		{"127.0.0.1:8080", http.StatusNoContent},
		{"mcp.example.com:8443", http.StatusNoContent},
		{"mcp.example.com:9443", http.StatusForbidden},
		{"mcp.example.com:8443", http.StatusNoContent},
		{"evil.example", http.StatusForbidden},
		{"evil.example", http.StatusForbidden},
		{"localhost", http.StatusNoContent},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("request %d, Host %q: status %d, want %d", i, tc.host, w.Code, tc.want)
		}
	}
}
