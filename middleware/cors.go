package middleware

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultCORSMaxAge is how long a browser may reuse a preflight answer when CORSOptions.MaxAge is
// zero.
const DefaultCORSMaxAge = 10 * time.Minute

// corsAllowHeaders are the request headers a browser client of the kit sends: the MCP headers
// the layers read, the ones of content negotiation and authorization, and trace propagation.
// Mcp-Param-* headers are allowed by prefix.
var corsAllowHeaders = []string{
	"Accept", "Authorization", "DPoP", "Content-Type", "Last-Event-ID",
	HeaderSessionID, HeaderProtocolVersion, HeaderMethod, HeaderName,
	"traceparent", "tracestate", "baggage",
}

// corsExposeHeaders are the response headers a browser client needs to read: the session id and
// protocol version of the legacy lifecycle, the authorization challenge and the DPoP server
// nonce (RFC 9449 section 8).
var corsExposeHeaders = []string{HeaderSessionID, HeaderProtocolVersion, "WWW-Authenticate", "DPoP-Nonce"}

// CORSOptions configures the CORS layer. The zero value lets no other origin in: pass the same
// OriginGuardOptions the endpoint's Origin guard uses (mcphttp.Options.Origin), and the origins
// it accepts are the ones browsers may call from.
type CORSOptions struct {
	// Origins decides which origins may call: an Origin the guard would accept (listed in
	// AllowedOrigins, same-origin with the Host, or any when Disabled). AllowedHosts plays no
	// part. The zero value accepts same-origin requests only, which need no CORS.
	Origins OriginGuardOptions
	// AllowHeaders are request headers allowed beyond the ones the kit reads (Accept,
	// Authorization, Content-Type, Last-Event-ID, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method,
	// Mcp-Name, Mcp-Param-*, traceparent, tracestate, baggage). Nil adds none.
	AllowHeaders []string
	// ExposeHeaders are response headers scripts may read beyond Mcp-Session-Id,
	// MCP-Protocol-Version, WWW-Authenticate and DPoP-Nonce. Nil adds none.
	ExposeHeaders []string
	// MaxAge is how long a browser may reuse a preflight answer (Access-Control-Max-Age, in whole
	// seconds). Zero means DefaultCORSMaxAge; negative sends none (the browser's own default, a
	// few seconds). A positive value under a second is invalid.
	MaxAge time.Duration
}

// CORS returns the layer that lets browser pages of the allowed origins call the endpoint (a web
// MCP client, the host page of an MCP App). It goes in front of the endpoint, outside the
// Origin guard, which still refuses the origins it does not allow.
//
// A preflight (OPTIONS with Access-Control-Request-Method) is answered here, 204, without
// reaching the endpoint: for an allowed origin with GET, POST or DELETE and request headers all
// allowed, with Access-Control-Allow-Origin (the origin), -Methods, -Headers (those asked for)
// and -Max-Age; otherwise 403 with no CORS headers, so the browser blocks the request. Any other
// request goes to the endpoint; for an allowed origin its response carries
// Access-Control-Allow-Origin and Access-Control-Expose-Headers. No credentials are allowed
// (cookies are not how MCP authorizes; Authorization is an allowed header). Responses vary by
// Origin.
//
// It panics, naming the option, on an Origins entry that can never match, an AllowHeaders or
// ExposeHeaders entry that is not a header name, and a MaxAge between zero and a second.
func CORS(opts CORSOptions) func(http.Handler) http.Handler {
	c := newCORS(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(w, r, next) })
	}
}

type cors struct {
	policy  *originPolicy
	allow   map[string]struct{} // lower-case header names
	expose  string
	maxAge  string
	methods string
}

func newCORS(opts CORSOptions) *cors {
	opts.Origins.validate("CORSOptions.Origins")
	c := &cors{policy: opts.Origins.compile(), allow: map[string]struct{}{}, methods: "GET, POST, DELETE"}
	for _, h := range corsAllowHeaders {
		c.allow[strings.ToLower(h)] = struct{}{}
	}
	for i, h := range opts.AllowHeaders {
		if !headerToken(h) {
			panic(fmt.Sprintf("middleware: CORSOptions.AllowHeaders[%d] %q is not a header name", i, h))
		}
		c.allow[strings.ToLower(h)] = struct{}{}
	}
	expose := append([]string(nil), corsExposeHeaders...)
	for i, h := range opts.ExposeHeaders {
		if !headerToken(h) {
			panic(fmt.Sprintf("middleware: CORSOptions.ExposeHeaders[%d] %q is not a header name", i, h))
		}
		expose = append(expose, h)
	}
	c.expose = strings.Join(expose, ", ")
	switch {
	case opts.MaxAge == 0:
		c.maxAge = strconv.Itoa(int(DefaultCORSMaxAge / time.Second))
	case opts.MaxAge > 0 && opts.MaxAge < time.Second:
		panic("middleware: CORSOptions.MaxAge must be zero, negative or at least one second")
	case opts.MaxAge > 0:
		c.maxAge = strconv.Itoa(int(opts.MaxAge / time.Second))
	}
	return c
}

func (c *cors) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	origins := r.Header["Origin"]
	if len(origins) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	allowed := len(origins) == 1 && c.policy.crossOriginAllowed(origins[0], r.Host, r.TLS != nil)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
		asked, ok := c.preflightHeaders(r)
		if !allowed || !ok || !corsMethod(r.Header.Get("Access-Control-Request-Method")) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		h.Set("Access-Control-Allow-Origin", origins[0])
		h.Set("Access-Control-Allow-Methods", c.methods)
		if asked != "" {
			h.Set("Access-Control-Allow-Headers", asked)
		}
		if c.maxAge != "" {
			h.Set("Access-Control-Max-Age", c.maxAge)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if allowed {
		h.Set("Access-Control-Allow-Origin", origins[0])
		h.Set("Access-Control-Expose-Headers", c.expose)
	}
	next.ServeHTTP(w, r)
}

// corsMethod reports whether a preflight asks for a method the endpoint serves.
func corsMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodPost || m == http.MethodDelete
}

// preflightHeaders returns the headers a preflight asks for, as asked, and whether every one of
// them is allowed.
func (c *cors) preflightHeaders(r *http.Request) (string, bool) {
	var names []string
	for _, line := range r.Header.Values("Access-Control-Request-Headers") {
		for name := range strings.SplitSeq(line, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			lower := strings.ToLower(name)
			if _, ok := c.allow[lower]; !ok && !strings.HasPrefix(lower, strings.ToLower(HeaderParamPrefix)) {
				return "", false
			}
			names = append(names, name)
		}
	}
	return strings.Join(names, ", "), true
}

// headerToken reports whether s is a header field name (an RFC 9110 token).
func headerToken(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0) {
			return false
		}
	}
	return true
}
