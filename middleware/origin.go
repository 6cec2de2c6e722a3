package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ErrForbiddenHost is the error OriginGuardOptions.Check returns when the Host header names a host
// that is neither loopback nor allow-listed. OriginGuard answers it with 403, -32600
// "Forbidden: Invalid Host header".
var ErrForbiddenHost = errors.New("middleware: forbidden Host header")

// ErrForbiddenOrigin is the error OriginGuardOptions.Check returns when the Origin header is neither
// same-origin with the Host header nor allow-listed. OriginGuard answers it with 403, -32600
// "Forbidden: Invalid Origin header".
var ErrForbiddenOrigin = errors.New("middleware: forbidden Origin header")

// OriginGuardOptions configures the DNS-rebinding protection of OriginGuard and Check. The zero value
// turns protection on and accepts only loopback hosts (localhost, any 127.0.0.0/8 address and ::1,
// with or without a port, IPv6 with or without brackets) and same-origin (or absent) Origin
// headers: the safe setting for a server on a developer's machine.
//
// Behind a reverse proxy on the same host that forwards the public Host header (for example
// nginx with "proxy_set_header Host $host"), add the public host name to AllowedHosts:
// "mcp.example.com" accepts it on any port, "mcp.example.com:8443" on that port only. Browsers
// then send an Origin such as https://mcp.example.com, which is same-origin with that Host. If the
// proxy rewrites Host to the backend address (127.0.0.1:PORT) instead, the host check passes and
// the public origin must be listed in AllowedOrigins.
type OriginGuardOptions struct {
	// AllowedHosts are extra accepted Host values besides the loopback ones. An entry without a
	// port ("example.com", "::1", "[::1]") matches that host on any port; an entry with a port
	// ("example.com:8080", "[::1]:8080") matches exactly that host and port. Case is ignored.
	// Nil means loopback only.
	AllowedHosts []string
	// AllowedOrigins are accepted Origin values besides same-origin requests, such as
	// "https://app.example.com", compared case-insensitively (surrounding spaces and a trailing
	// slash in an entry are ignored). Nil means same-origin only.
	AllowedOrigins []string
	// Disabled turns the protection off: every Host and Origin is accepted. The zero value (false)
	// keeps it on.
	Disabled bool
}

// hostPort is a normalized host (lower-case, no brackets) and port ("" when absent). bad marks
// a value that is not host[:port] at all (text after an IPv6 literal's bracket, a port that is
// not a number): no rule matches it.
type hostPort struct {
	host, port string
	bad        bool
}

// originPolicy is OriginGuardOptions compiled into lookups.
type originPolicy struct {
	disabled  bool
	anyPort   map[string]struct{}
	exactPort map[hostPort]struct{}
	origins   map[string]struct{}
	// lastHost is the last Host value hostAllowed accepted (nil: none yet). The verdict depends
	// on the value alone, and a server sees the same Host on nearly every request, so that one
	// string comparison usually stands for the parse.
	lastHost atomic.Pointer[string]
}

// validate panics, naming the entry (name is the options' path in the message), on allow-list
// entries that can never match.
func (o OriginGuardOptions) validate(name string) {
	for i, h := range o.AllowedHosts {
		h = strings.TrimSpace(h)
		if h == "" || strings.ContainsAny(h, "/@?#") || splitHostPort(strings.ToLower(h)).bad {
			panic(fmt.Sprintf("middleware: %s.AllowedHosts[%d] %q is not a host or host:port (no scheme, no path)", name, i, h))
		}
	}
	for i, origin := range o.AllowedOrigins {
		origin = strings.TrimSuffix(strings.TrimSpace(origin), "/")
		scheme, rest, ok := strings.Cut(origin, "://")
		if !ok || scheme == "" || rest == "" || strings.ContainsAny(rest, "/@?#") || splitHostPort(strings.ToLower(rest)).bad {
			panic(fmt.Sprintf("middleware: %s.AllowedOrigins[%d] %q is not an origin (scheme://host[:port])", name, i, origin))
		}
	}
}

func (o OriginGuardOptions) compile() *originPolicy {
	p := &originPolicy{disabled: o.Disabled}
	for _, h := range o.AllowedHosts {
		hp := splitHostPort(strings.ToLower(strings.TrimSpace(h)))
		if hp.host == "" || hp.bad {
			continue
		}
		if hp.port == "" {
			if p.anyPort == nil {
				p.anyPort = make(map[string]struct{})
			}
			p.anyPort[hp.host] = struct{}{}
			continue
		}
		if p.exactPort == nil {
			p.exactPort = make(map[hostPort]struct{})
		}
		p.exactPort[hp] = struct{}{}
	}
	for _, origin := range o.AllowedOrigins {
		origin = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(origin)), "/")
		if origin == "" {
			continue
		}
		if p.origins == nil {
			p.origins = make(map[string]struct{})
		}
		p.origins[origin] = struct{}{}
	}
	return p
}

// Check applies the DNS-rebinding rules to r: nil when the request may proceed, ErrForbiddenHost
// or ErrForbiddenOrigin when it must be refused. A missing Host or Origin header is accepted.
// Check compiles the options on every call; OriginGuard compiles them once.
func (o OriginGuardOptions) Check(r *http.Request) error {
	if o.Disabled {
		return nil
	}
	return o.compile().checkRequest(r)
}

// OriginGuard returns the layer that protects a local server against DNS rebinding, for every
// HTTP method and before anything else looks at the request. It refuses a Host header that is not
// loopback or allow-listed with 403, -32600 "Forbidden: Invalid Host header", then an Origin header
// that is neither same-origin nor allow-listed with 403, -32600 "Forbidden: Invalid Origin header";
// both with id null. Same-origin means the Origin's scheme is http or https (https only when
// the request came over TLS; a plain-HTTP request may carry an https Origin because TLS often
// ends at a proxy in front) and the Origin, without its scheme and the scheme's default port
// (443 for https, 80 for http), equals the Host without that port, ignoring case. A request
// with more than one Origin header is refused as an invalid Origin: an intermediary could check
// one and the browser's be the other. A Host that is not host[:port] (a port that is not a
// number, text after an IPv6 literal such as "[::1]evil.com") matches nothing and is refused.
// The allow lists are compiled once, here.
//
// It panics on an allow-list entry that can never match: a URL or path in AllowedHosts (they
// hold host or host:port, as the Host header carries it), or an AllowedOrigins entry that is
// not scheme://host[:port] (a bare host, a path).
func OriginGuard(opts OriginGuardOptions) func(http.Handler) http.Handler {
	opts.validate("OriginGuardOptions")
	p := opts.compile()
	return func(next http.Handler) http.Handler {
		if p.disabled {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch err := p.checkRequest(r); {
			case err == nil:
				next.ServeHTTP(w, r)
			case errors.Is(err, ErrForbiddenHost):
				refuse(w, r, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgForbiddenHost)
			default:
				refuse(w, r, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgForbiddenOrigin)
			}
		})
	}
}

func (p *originPolicy) checkRequest(r *http.Request) error {
	if p.disabled {
		return nil
	}
	origins := r.Header["Origin"]
	origin := ""
	if len(origins) > 0 {
		origin = origins[0]
	}
	if err := p.check(r.Host, origin, r.TLS != nil); err != nil {
		return err
	}
	if len(origins) > 1 {
		return ErrForbiddenOrigin
	}
	return nil
}

func (p *originPolicy) check(host, origin string, overTLS bool) error {
	if p.disabled {
		return nil
	}
	if host != "" && !p.hostAllowed(host) {
		return ErrForbiddenHost
	}
	if origin != "" && !sameOrigin(origin, host, overTLS) && !p.originAllowed(origin) {
		return ErrForbiddenOrigin
	}
	return nil
}

func (p *originPolicy) hostAllowed(host string) bool {
	if last := p.lastHost.Load(); last != nil && *last == host {
		return true
	}
	if !p.hostRuleAllows(host) {
		return false
	}
	accepted := host
	p.lastHost.Store(&accepted)
	return true
}

// hostRuleAllows is hostAllowed without its memory of the last accepted value.
func (p *originPolicy) hostRuleAllows(host string) bool {
	hp := splitHostPort(strings.ToLower(host))
	if hp.bad {
		return false
	}
	if isLoopback(hp.host) {
		return true
	}
	if _, ok := p.anyPort[hp.host]; ok {
		return true
	}
	if hp.port != "" {
		if _, ok := p.exactPort[hp]; ok {
			return true
		}
	}
	return false
}

// crossOriginAllowed reports whether a request from origin to host may proceed past the guard:
// the rule CORS shares, so a browser is allowed to read exactly what the guard lets through.
func (p *originPolicy) crossOriginAllowed(origin, host string, overTLS bool) bool {
	return p.disabled || sameOrigin(origin, host, overTLS) || p.originAllowed(origin)
}

func (p *originPolicy) originAllowed(origin string) bool {
	if p.origins == nil {
		return false
	}
	_, ok := p.origins[strings.ToLower(origin)]
	return ok
}

// isLoopback reports whether a normalized host is localhost or a loopback IP literal
// (127.0.0.0/8, ::1).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	if host == "" || !(host[0] >= '0' && host[0] <= '9' || strings.IndexByte(host, ':') >= 0) {
		return false // a name, not an IP literal: skip the parser (and its error allocation)
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

// splitHostPort splits "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 literal into a
// host without brackets and a port ("" when absent). Anything after an IPv6 literal's closing
// bracket other than ":port", and a port that is not all digits, mark the result bad; the host
// itself is not validated.
func splitHostPort(s string) hostPort {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return hostPort{host: s, bad: true}
		}
		rest := s[end+1:]
		if rest != "" && rest[0] != ':' {
			return hostPort{host: s[1:end], bad: true}
		}
		port := strings.TrimPrefix(rest, ":")
		return hostPort{host: s[1:end], port: port, bad: !isPort(port)}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.IndexByte(s[:i], ':') >= 0 {
		// No port, or a bare IPv6 literal such as ::1 whose colons are not a port separator.
		return hostPort{host: s}
	}
	return hostPort{host: s[:i], port: s[i+1:], bad: !isPort(s[i+1:])}
}

// isPort reports whether p is a port as RFC 3986 spells it: decimal digits, possibly none.
func isPort(p string) bool {
	if len(p) > 5 {
		return false
	}
	for i := range len(p) {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

// sameOrigin reports whether an Origin header and a Host header name the same authority once the
// scheme and the scheme's default port are dropped from both. The scheme must be https, or http
// on a request that did not come over TLS: evil://127.0.0.1:8080 is not the origin of anything
// this server serves.
func sameOrigin(origin, host string, overTLS bool) bool {
	if host == "" {
		return false
	}
	scheme, authority, ok := strings.Cut(origin, "://")
	if !ok {
		return false // "null" and other opaque origins are never same-origin
	}
	var defaultPort string
	switch {
	case strings.EqualFold(scheme, "https"):
		defaultPort = ":443"
	case strings.EqualFold(scheme, "http") && !overTLS:
		defaultPort = ":80"
	default:
		return false
	}
	authority = strings.TrimSuffix(authority, defaultPort)
	host = strings.TrimSuffix(host, defaultPort)
	return strings.EqualFold(authority, host)
}
