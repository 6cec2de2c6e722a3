package core

import (
	"fmt"
	"strings"
)

// paramHeader is a tool argument that 2026-07-28 clients mirror into an HTTP header: the input
// schema property Argument carries "x-mcp-header": Name, and the client sends Mcp-Param-<Name>.
// It is a struct literal type so that internal/transport names the same type
// (transport.ParamHeader).
type paramHeader = struct{ Name, Argument string }

// paramHeaders reads the x-mcp-header annotations of the top-level properties of an input
// schema, once, at registration. Header names must be HTTP token characters and unique.
func paramHeaders(schema []byte) ([]paramHeader, error) {
	var s struct {
		Properties map[string]struct {
			Header *string `json:"x-mcp-header"`
		} `json:"properties"`
	}
	if err := unmarshal(schema, &s); err != nil {
		return nil, nil // not an object with properties: nothing to mirror
	}
	var out []paramHeader
	seen := map[string]bool{}
	for arg, p := range s.Properties {
		if p.Header == nil {
			continue
		}
		name := *p.Header
		if name == "" || !isToken(name) {
			return nil, fmt.Errorf("x-mcp-header %q of argument %q is not a valid header name", name, arg)
		}
		key := strings.ToLower(name)
		if seen[key] {
			return nil, fmt.Errorf("x-mcp-header %q is used twice", name)
		}
		seen[key] = true
		out = append(out, paramHeader{Name: name, Argument: arg})
	}
	return out, nil
}

// isToken reports whether s is an HTTP token (RFC 9110).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// toolParamHeaders returns the arguments of a tool that clients mirror into Mcp-Param-*
// headers, and whether the tool exists.
func (s *Server) toolParamHeaders(tool string) ([]paramHeader, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.tools.get(tool)
	if !ok {
		return nil, false
	}
	return e.headers, true
}
