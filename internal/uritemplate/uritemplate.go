// Package uritemplate compiles RFC 6570 resource templates (levels 1 to 3) for matching URIs
// back to their variables and for expansion.
package uritemplate

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	rfc6570 "github.com/yosida95/uritemplate/v3"
)

// Template is a resource template compiled for matching and expansion: RFC 6570 levels 1 to 3
// (simple {var}, reserved {+var}, fragment {#var}, label {.var}, path {/var}, path-style
// parameters {;var}, query {?var} and continuation {&var}, several variables per expression).
// Parsing, expansion and the regular expression of everything before the query come from
// github.com/yosida95/uritemplate (its own Match allocates hundreds of times per call, so the
// variables are read from the regular expression's groups here, one group per expression); the
// query is matched here too, so that its parameters may come in any order and a reserved
// expansion before it never swallows it.
type Template struct {
	full *rfc6570.Template
	// base matches the template without its trailing query expressions (all of it when there
	// are none or the query is not separable); baseExprs are its expressions, one group each.
	base      *regexp.Regexp
	baseExprs []templateExpr
	// query lists the variables of the trailing {?...}{&...} expressions; nil when the query is
	// matched as part of base.
	query []string
	// nonEmpty lists the variables of simple and reserved expressions: they must match at least
	// one character, as a path segment does (the other operators mark optional parts).
	nonEmpty []string
	names    []string
}

// Parse compiles a template, refusing what RFC 6570 forbids and what cannot be matched
// back: level 4 modifiers (prefix :N, explode *) and two simple or reserved expressions in a row
// (their boundary is anyone's guess).
func Parse(raw string) (*Template, error) {
	full, err := rfc6570.New(raw)
	if err != nil {
		return nil, fmt.Errorf("mcpkit: resource template %q: %w", raw, err)
	}
	t := &Template{full: full, base: full.Regexp(), names: full.Varnames()}
	exprs := templateExpressions(raw)
	t.baseExprs = exprs
	for i, e := range exprs {
		for _, v := range e.vars {
			if strings.ContainsAny(v, ":*") {
				return nil, fmt.Errorf("mcpkit: resource template %q: %s uses a level 4 modifier (prefix :N or explode *); levels 1 to 3 are supported", raw, raw[e.start:e.end])
			}
		}
		if !e.open() {
			continue
		}
		t.nonEmpty = append(t.nonEmpty, e.vars...)
		if i > 0 && exprs[i-1].open() && exprs[i-1].end == e.start {
			return nil, fmt.Errorf("mcpkit: resource template %q: two expressions in a row (%s) cannot be told apart when matching", raw, raw[exprs[i-1].start:e.end])
		}
	}
	// A trailing run {?a,b}{&c}... with nothing after it is the query: split it off.
	n := len(exprs)
	first := n
	for first > 0 {
		e := exprs[first-1]
		if e.op != "&" && e.op != "?" {
			break
		}
		if first < n && exprs[first].start != e.end {
			break // literal text between two query expressions
		}
		first--
		if e.op == "?" {
			break
		}
	}
	if first < n && exprs[first].op == "?" && exprs[n-1].end == len(raw) && !strings.Contains(raw[:exprs[first].start], "?") {
		base, err := rfc6570.New(raw[:exprs[first].start])
		if err != nil {
			return nil, fmt.Errorf("mcpkit: resource template %q: %w", raw, err)
		}
		t.base, t.baseExprs = base.Regexp(), exprs[:first]
		for _, e := range exprs[first:] {
			t.query = append(t.query, e.vars...)
		}
	}
	if t.base.NumSubexp() != len(t.baseExprs) {
		return nil, fmt.Errorf("mcpkit: resource template %q: cannot be matched (%d groups for %d expressions)", raw, t.base.NumSubexp(), len(t.baseExprs))
	}
	return t, nil
}

// templateExpr is one {...} expression of a template: its operator, variables and place.
type templateExpr struct {
	op         string
	vars       []string
	start, end int
}

// read stores the variables of the expression's matched text (operator prefix excluded) in
// vars, percent-decoded. Names and values are split the way the operator joins them: "," for
// simple, reserved and fragment expansions, the operator itself for labels and path segments,
// name=value pairs for path-style parameters and queries.
func (e templateExpr) read(text string, vars map[string]string) bool {
	var parts []string
	switch e.op {
	case "", "+", "#":
		parts = strings.SplitN(text, ",", len(e.vars))
	case ".", "/":
		parts = strings.SplitN(text, e.op, len(e.vars))
	case ";", "?", "&":
		sep := "&"
		if e.op == ";" {
			sep = ";"
		}
		for _, pair := range strings.Split(text, sep) {
			name, value, _ := strings.Cut(pair, "=")
			if !slices.Contains(e.vars, name) {
				return false
			}
			if _, dup := vars[name]; dup {
				return false
			}
			dec, err := url.PathUnescape(value)
			if err != nil {
				return false
			}
			vars[name] = dec
		}
		return true
	}
	for i, p := range parts {
		dec, err := url.PathUnescape(p)
		if err != nil {
			return false
		}
		vars[e.vars[i]] = dec
	}
	return true
}

// open reports whether the expression is simple or reserved: no prefix marks where it starts.
func (e templateExpr) open() bool { return e.op == "" || e.op == "+" }

// templateExpressions lists the expressions of a template the library has already parsed.
func templateExpressions(raw string) []templateExpr {
	var out []templateExpr
	for off := 0; ; {
		i := strings.IndexByte(raw[off:], '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(raw[off+i:], '}')
		e := templateExpr{start: off + i, end: off + i + j + 1}
		body := raw[e.start+1 : e.end-1]
		if strings.ContainsRune("+#./;?&", rune(body[0])) {
			e.op, body = body[:1], body[1:]
		}
		e.vars = strings.Split(body, ",")
		out = append(out, e)
		off = e.end
	}
}

// match reports whether uri is an expansion of the template and returns its variables,
// percent-decoded. A query variable that is absent is absent from the map.
func (t *Template) Match(uri string) (map[string]string, bool) {
	head, query := uri, ""
	if t.query != nil {
		if i := strings.IndexByte(uri, '?'); i >= 0 {
			head, query = uri[:i], uri[i+1:]
		}
	}
	m := t.base.FindStringSubmatchIndex(head)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.names))
	for i, e := range t.baseExprs {
		if m[2+2*i] < 0 {
			continue // an optional part that is absent
		}
		if !e.read(head[m[2+2*i]:m[3+2*i]], vars) {
			return nil, false
		}
	}
	for _, name := range t.nonEmpty {
		if vars[name] == "" {
			return nil, false
		}
	}
	if query != "" {
		for _, pair := range strings.Split(query, "&") {
			name, value, _ := strings.Cut(pair, "=")
			if !slices.Contains(t.query, name) {
				return nil, false // a parameter the template does not name
			}
			if _, dup := vars[name]; dup {
				return nil, false
			}
			dec, err := url.PathUnescape(value)
			if err != nil {
				return nil, false
			}
			vars[name] = dec
		}
	}
	return vars, true
}

// Expand returns the URI the template names for vars, following RFC 6570 (levels 1 to 3):
// reserved characters are kept in {+var} and {#var} and percent-encoded elsewhere, and an
// absent variable expands to nothing (with its operator's prefix).
func (t *Template) Expand(vars map[string]string) (string, error) {
	vals := make(rfc6570.Values, len(vars))
	for k, v := range vars {
		vals.Set(k, rfc6570.String(v))
	}
	return t.full.Expand(vals)
}
