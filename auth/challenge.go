package auth

import (
	"strings"
)

// Bearer error codes of RFC 6750 section 3.1.
const (
	errInvalidToken      = "invalid_token"
	errInsufficientScope = "insufficient_scope"
	errInvalidRequest    = "invalid_request"
)

// challenge builds a WWW-Authenticate value for the Bearer scheme: the parameters in the given
// order, each value a quoted-string (RFC 9110 section 11.2), empty values left out.
func challenge(params ...string) string { return schemeChallenge("Bearer", params...) }

// schemeChallenge is challenge for any scheme (Bearer, DPoP).
func schemeChallenge(scheme string, params ...string) string {
	var b strings.Builder
	b.WriteString(scheme)
	first := true
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] == "" {
			continue
		}
		if first {
			b.WriteByte(' ')
			first = false
		} else {
			b.WriteString(", ")
		}
		b.WriteString(params[i])
		b.WriteString(`="`)
		writeQuoted(&b, params[i+1])
		b.WriteByte('"')
	}
	return b.String()
}

// writeQuoted writes s as the inside of a quoted-string: '"' and '\' escaped, and any control
// character or byte outside printable ASCII replaced by a space, so a value can never break the
// header.
func writeQuoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
}

// validScope reports whether s is a scope-token of RFC 6749 section 3.3: one or more of
// %x21 / %x23-5B / %x5D-7E (printable ASCII without space, '"' and '\').
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// checkScopes panics, naming the option, when a configured scope is not a valid scope-token.
func checkScopes(option string, scopes []string) {
	for _, s := range scopes {
		if !validScope(s) {
			panic("auth: " + option + " holds an invalid scope " + strconvQuote(s))
		}
	}
}

func strconvQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	writeQuoted(&b, s)
	b.WriteByte('"')
	return b.String()
}
