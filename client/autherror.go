package client

import (
	"fmt"
	"net/http"
	"strings"
)

// AuthError is a server's refusal to authorize a request: an HTTP 401, or a 403 carrying a
// WWW-Authenticate challenge (RFC 6750, RFC 9728), with the challenge's parameters. It is also
// what an authorization layer on the HTTP client (package client/oauth) returns when it cannot
// authorize: Err then says why (discovery, a mismatch, a refused scope). Reach it with errors.As;
// errors.As to *HTTPError or *jsonrpc.Error still matches the answer's body through Unwrap.
type AuthError struct {
	// StatusCode is the HTTP status of the refusal (401 or 403), or zero when the request was
	// never answered because authorization failed before it.
	StatusCode int
	// Scheme is the scheme of the challenge the parameters come from ("Bearer", "DPoP"), empty
	// without a challenge.
	Scheme string
	// Code is the challenge's error parameter ("invalid_token", "insufficient_scope"), empty
	// when it has none.
	Code string
	// Description is the challenge's error_description parameter.
	Description string
	// Scope lists the scopes of the challenge's scope parameter (those the request needs), nil
	// when it has none.
	Scope []string
	// ResourceMetadata is the challenge's resource_metadata parameter: the URL of the server's
	// protected resource metadata (RFC 9728), empty when it has none.
	ResourceMetadata string
	// Challenges are every challenge of the answer's WWW-Authenticate headers, in order.
	Challenges []Challenge
	// Err is the cause: the answer's JSON-RPC error or *HTTPError, or what the authorization
	// layer failed at. Nil when there is nothing more to say.
	Err error
}

func (e *AuthError) Error() string {
	var b strings.Builder
	b.WriteString("mcpkit/client: not authorized")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.StatusCode)
		if e.Code != "" {
			b.WriteString(" " + e.Code)
		}
		b.WriteString(")")
	} else if e.Code != "" {
		b.WriteString(" (" + e.Code + ")")
	}
	if len(e.Scope) > 0 {
		fmt.Fprintf(&b, "; the server requires scope %q", strings.Join(e.Scope, " "))
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// NewAuthError returns the *AuthError of an answer with status and the WWW-Authenticate
// values of h, wrapping cause. Its parameters come from the first Bearer or DPoP challenge
// (the first challenge when neither is there).
func NewAuthError(status int, h http.Header, cause error) error {
	e := &AuthError{StatusCode: status, Err: cause}
	if h != nil {
		e.Challenges = ParseChallenges(h.Values("WWW-Authenticate"))
	}
	var c *Challenge
	for i := range e.Challenges {
		s := strings.ToLower(e.Challenges[i].Scheme)
		if s == "bearer" || s == "dpop" {
			c = &e.Challenges[i]
			break
		}
	}
	if c == nil && len(e.Challenges) > 0 {
		c = &e.Challenges[0]
	}
	if c != nil {
		e.Scheme = c.Scheme
		e.Code = c.Params["error"]
		e.Description = c.Params["error_description"]
		e.Scope = strings.Fields(c.Params["scope"])
		e.ResourceMetadata = c.Params["resource_metadata"]
	}
	return e
}

// authRefusal reports whether an answer is a refusal to authorize: 401, or 403 with a
// challenge.
func authRefusal(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized ||
		resp.StatusCode == http.StatusForbidden && resp.Header.Get("WWW-Authenticate") != ""
}

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110 section 11.6.1).
type Challenge struct {
	// Scheme is the authentication scheme as sent ("Bearer").
	Scheme string
	// Params are the challenge's parameters by lower-case name, quoted strings unquoted. Nil
	// when it has none.
	Params map[string]string
	// Token68 is the challenge's token68 form instead of parameters, if any.
	Token68 string
}

// ParseChallenges parses WWW-Authenticate header values into their challenges, in order.
// Malformed parts end the value they are in; what was read before stays.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	for _, v := range values {
		p := challengeParser{s: v}
		out = p.parse(out)
	}
	return out
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *challengeParser) skipCommas() {
	for {
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return
	}
}

func (p *challengeParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string at p.i (which is '"').
func (p *challengeParser) quoted() (string, bool) {
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			if p.i+1 < len(p.s) {
				p.i++
				b.WriteByte(p.s[p.i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

func (p *challengeParser) parse(out []Challenge) []Challenge {
	for {
		p.skipCommas()
		scheme := p.token()
		if scheme == "" {
			return out
		}
		c := Challenge{Scheme: scheme}
		p.skipSpace()
		if !p.params(&c) {
			return append(out, c)
		}
		out = append(out, c)
	}
}

// params reads the parameters (or token68) of one challenge; false when the value ended or is
// malformed.
func (p *challengeParser) params(c *Challenge) bool {
	for first := true; ; first = false {
		p.skipSpace()
		start := p.i
		name := p.token()
		eq := p.i
		for eq < len(p.s) && p.s[eq] == '=' {
			eq++
		}
		after := eq
		for after < len(p.s) && (p.s[after] == ' ' || p.s[after] == '\t') {
			after++
		}
		param := name != "" && eq == p.i+1 && after < len(p.s) && p.s[after] != ','
		if !param {
			if first && name != "" && (after == len(p.s) || p.s[after] == ',') {
				c.Token68 = p.s[start:eq] // token68, with its padding
				p.i = after
				return p.i < len(p.s)
			}
			p.i = start // the next challenge's scheme (or the end)
			return p.i < len(p.s)
		}
		p.i = after
		var val string
		if p.s[p.i] == '"' {
			var ok bool
			if val, ok = p.quoted(); !ok {
				return false
			}
		} else {
			val = p.token()
		}
		if c.Params == nil {
			c.Params = map[string]string{}
		}
		c.Params[strings.ToLower(name)] = val
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return false
		}
		p.i++
	}
}
