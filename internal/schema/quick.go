// Package schema is the kit's JSON Schema (2020-12) machinery: schemas derived from Go types
// (For), the full validator compiled self-contained (Compile, Validate), and the one-pass check
// of the hot path (Quick) that settles the usual valid value without decoding it.
package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonbody"
)

// Quick is a JSON Schema (2020-12) compiled for the hot path: it checks a JSON text in one
// pass over its tokens, without building a tree of Go values, and allocates nothing. It covers
// the keywords schemas derived from Go types use (type, properties, required,
// additionalProperties, items, enum, const, the length, size and range bounds, pattern) and
// treats the annotations as such; a schema with any other assertion or applicator ($ref, allOf,
// anyOf, oneOf, not, if, patternProperties, ...) gets no Quick at all.
//
// Its answer is one-sided by design: true means the full validator accepts the value too;
// false means only "not decided here" (a violation, or a case it does not settle exactly, such
// as 1.0 for an integer), and the caller then runs the full validator, which also words the
// error. So what a client sees for an invalid value never depends on this code.
type Quick struct {
	never bool  // the false schema
	types uint8 // typeNull|...; 0 accepts every type

	// objects
	members    map[string]quickMember
	few        []namedMember // the members again when there are few: searched in order (see member)
	required   int           // how many required names (each has a bit in quickMember.bit)
	additional *Quick        // schema of members outside properties; nil accepts any
	minProps   int
	maxProps   int // -1 unbounded

	// arrays
	items    *Quick // nil accepts any
	minItems int
	maxItems int // -1 unbounded

	// strings
	minLen  int
	maxLen  int // -1 unbounded
	pattern *regexp.Regexp

	// numbers
	min, max       *quickBound
	exclMin, exclM *quickBound

	// enum and const: the allowed values, all of them strings, literals or integers
	enum      bool
	enumStr   []string
	enumLit   []string // true, false, null
	enumInt   []int64
	hasChecks bool // some keyword beyond type constrains values: the value must be read
}

// namedMember is a member of a schema with few.
type namedMember struct {
	name string
	quickMember
}

// maxFewMembers is the most members a schema searches in order rather than by hash.
const maxFewMembers = 8

// member returns the declared property name, if there is one.
func (q *Quick) member(name []byte) (quickMember, bool) {
	if q.few == nil {
		m, ok := q.members[string(name)]
		return m, ok
	}
	for i := range q.few {
		if q.few[i].name == string(name) {
			return q.few[i].quickMember, true
		}
	}
	return quickMember{}, false
}

type quickMember struct {
	schema *Quick // nil: not a declared property (additionalProperties applies)
	bit    int    // index among the required names, -1 when not required
}

// quickBound is a numeric bound of minimum, maximum and their exclusive forms.
type quickBound struct {
	f     float64
	i     int64
	exact bool // the bound is an integer that fits int64
}

const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeInteger
	typeString
)

var quickTypes = map[string]uint8{"null": typeNull, "boolean": typeBoolean, "object": typeObject,
	"array": typeArray, "number": typeNumber, "integer": typeInteger, "string": typeString}

// maxQuickRequired is the most required names one object schema may list for the quick check.
const maxQuickRequired = 64

// quickAnnotations are keywords without an effect on validation here: annotations, and the
// keywords that only matter to references ($defs), which quick schemas never have.
var quickAnnotations = map[string]bool{
	"$id": true, "$anchor": true, "$dynamicAnchor": true, "$comment": true, "$defs": true,
	"definitions": true, "title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "contentEncoding": true,
	"contentMediaType": true, "contentSchema": true,
}

// quickUnsupported are the keywords (of 2020-12 and earlier drafts) the quick check does not
// implement: a schema using any of them is checked by the full validator only.
var quickUnsupported = map[string]bool{
	"$ref": true, "$dynamicRef": true, "$recursiveRef": true, "$recursiveAnchor": true,
	"$vocabulary": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true,
	"then": true, "else": true, "prefixItems": true, "contains": true, "minContains": true,
	"maxContains": true, "patternProperties": true, "propertyNames": true,
	"dependentSchemas": true, "dependentRequired": true, "dependencies": true,
	"unevaluatedItems": true, "unevaluatedProperties": true, "additionalItems": true,
	"multipleOf": true,
}

// CompileQuick compiles schema for the quick check, or returns nil when it uses something the
// check does not cover. assertFormat says whether "format" is an assertion (then it is not
// covered) or an annotation.
func CompileQuick(schema []byte, assertFormat bool) *Quick {
	q, ok := quickCompile(jsontext.Value(schema), assertFormat, true)
	if !ok {
		return nil
	}
	return q
}

func quickCompile(v jsontext.Value, assertFormat, root bool) (*Quick, bool) {
	switch string(v) {
	case "true":
		return &Quick{maxProps: -1, maxItems: -1, maxLen: -1}, true
	case "false":
		return &Quick{never: true}, true
	}
	var kw map[string]jsontext.Value
	if v.Kind() != '{' || json.Unmarshal(v, &kw) != nil {
		return nil, false
	}
	q := &Quick{maxProps: -1, maxItems: -1, maxLen: -1}
	for name, val := range kw {
		var ok bool
		switch {
		case quickAnnotations[name]:
			ok = true
		case name == "format":
			ok = !assertFormat
		case name == "$schema":
			ok = root && DefaultDialect(val)
		case quickUnsupported[name]:
			ok = false
		default:
			ok = q.keyword(name, val, assertFormat)
		}
		if !ok {
			return nil, false
		}
	}
	if !q.linkRequired(kw["required"]) {
		return nil, false
	}
	if n := len(q.members); n > 0 && n <= maxFewMembers {
		q.few = make([]namedMember, 0, n)
		for name, m := range q.members {
			q.few = append(q.few, namedMember{name, m})
		}
	}
	q.hasChecks = q.hasChecks || q.enum || q.members != nil || q.additional != nil || q.items != nil
	return q, true
}

// DefaultDialect reports whether a $schema value names the 2020-12 dialect, the kit's default.
func DefaultDialect(v jsontext.Value) bool {
	switch string(v) {
	case `"https://json-schema.org/draft/2020-12/schema"`, `"https://json-schema.org/draft/2020-12/schema#"`:
		return true
	}
	return false
}

// keyword compiles one keyword; unknown keywords are ignored, as the full validator does.
func (q *Quick) keyword(name string, val jsontext.Value, assertFormat bool) bool {
	switch name {
	case "type":
		return q.compileType(val)
	case "properties":
		return q.compileProperties(val, assertFormat)
	case "required":
		return val.Kind() == '[' // linked once properties are known
	case "additionalProperties":
		sub, ok := quickCompile(val, assertFormat, false)
		q.additional = sub
		return ok
	case "items":
		sub, ok := quickCompile(val, assertFormat, false)
		q.items = sub
		return ok
	case "enum":
		return q.compileEnum(val, false)
	case "const":
		return q.compileEnum(val, true)
	case "minProperties":
		return quickCount(val, &q.minProps, &q.hasChecks)
	case "maxProperties":
		return quickCount(val, &q.maxProps, &q.hasChecks)
	case "minItems":
		return quickCount(val, &q.minItems, &q.hasChecks)
	case "maxItems":
		return quickCount(val, &q.maxItems, &q.hasChecks)
	case "minLength":
		return quickCount(val, &q.minLen, &q.hasChecks)
	case "maxLength":
		return quickCount(val, &q.maxLen, &q.hasChecks)
	case "uniqueItems":
		return string(val) == "false"
	case "pattern":
		var p string
		if val.Kind() != '"' || json.Unmarshal(val, &p) != nil {
			return false
		}
		re, err := regexp.Compile(p) // the engine the full validator uses
		q.pattern, q.hasChecks = re, true
		return err == nil
	case "minimum":
		return quickBoundOf(val, &q.min, &q.hasChecks)
	case "maximum":
		return quickBoundOf(val, &q.max, &q.hasChecks)
	case "exclusiveMinimum":
		return quickBoundOf(val, &q.exclMin, &q.hasChecks)
	case "exclusiveMaximum":
		return quickBoundOf(val, &q.exclM, &q.hasChecks)
	}
	return true
}

func (q *Quick) compileType(val jsontext.Value) bool {
	var names []string
	if val.Kind() == '"' {
		var one string
		if json.Unmarshal(val, &one) != nil {
			return false
		}
		names = []string{one}
	} else if val.Kind() != '[' || json.Unmarshal(val, &names) != nil {
		return false
	}
	for _, n := range names {
		bit, ok := quickTypes[n]
		if !ok {
			return false
		}
		q.types |= bit
	}
	return true
}

func (q *Quick) compileProperties(val jsontext.Value, assertFormat bool) bool {
	var props map[string]jsontext.Value
	if val.Kind() != '{' || json.Unmarshal(val, &props) != nil {
		return false
	}
	if q.members == nil {
		q.members = make(map[string]quickMember, len(props))
	}
	for name, raw := range props {
		sub, ok := quickCompile(raw, assertFormat, false)
		if !ok {
			return false
		}
		q.members[name] = quickMember{schema: sub, bit: -1}
	}
	return true
}

// linkRequired gives each required name its bit, adding the names properties does not declare.
func (q *Quick) linkRequired(val jsontext.Value) bool {
	if val == nil {
		return true
	}
	var names []string
	if json.Unmarshal(val, &names) != nil || len(names) > maxQuickRequired {
		return false
	}
	if q.members == nil && len(names) > 0 {
		q.members = make(map[string]quickMember, len(names))
	}
	for _, n := range names {
		m, ok := q.members[n]
		if !ok {
			m = quickMember{bit: -1}
		}
		if m.bit >= 0 {
			continue // listed twice
		}
		m.bit = q.required
		q.required++
		q.members[n] = m
	}
	return true
}

// compileEnum keeps enum (or const) values that are strings, true, false, null or integers; any
// other value (an object, an array, a fraction) leaves the schema to the full validator.
func (q *Quick) compileEnum(val jsontext.Value, single bool) bool {
	var vals []jsontext.Value
	if single {
		vals = []jsontext.Value{val}
	} else if val.Kind() != '[' || json.Unmarshal(val, &vals) != nil {
		return false
	}
	if q.enum {
		return false // enum and const together: left to the full validator
	}
	q.enum = true
	for _, v := range vals {
		switch v.Kind() {
		case '"':
			var s string
			if json.Unmarshal(v, &s) != nil {
				return false
			}
			q.enumStr = append(q.enumStr, s)
		case 't', 'f', 'n':
			q.enumLit = append(q.enumLit, string(v))
		case '0':
			n, ok := plainInt(v)
			if !ok {
				return false
			}
			q.enumInt = append(q.enumInt, n)
		default:
			return false
		}
	}
	return true
}

// quickCount reads a non-negative integer keyword (minLength, maxItems, ...).
func quickCount(val jsontext.Value, dst *int, checks *bool) bool {
	n, ok := plainInt(val)
	if !ok || n < 0 || n > math.MaxInt32 {
		return false
	}
	*dst, *checks = int(n), true
	return true
}

func quickBoundOf(val jsontext.Value, dst **quickBound, checks *bool) bool {
	if val.Kind() != '0' {
		return false
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	b := &quickBound{f: f}
	if n, ok := plainInt(val); ok {
		b.i, b.exact = n, true
	}
	*dst, *checks = b, true
	return true
}

// plainInt parses a JSON number written as an integer (no fraction, no exponent) that fits int64.
func plainInt(v []byte) (int64, bool) {
	if bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// quickChecker is the reusable state of one check.
type quickChecker struct {
	sc      jsonbody.Scanner
	data    []byte // the value checked, while it is
	scratch []byte // unescaped strings
}

var quickCheckers = sync.Pool{New: func() any { return new(quickChecker) }}

// Valid reports whether data (one JSON value, without repeated names) certainly satisfies the
// schema; false means the full validator must decide. A nil schema decides nothing. The value is
// read in one pass (jsonbody.Scanner): what the scanner does not settle (an escaped member
// name) is left to the full validator too.
func (q *Quick) Valid(data []byte) bool {
	if q == nil {
		return false
	}
	qc := quickCheckers.Get().(*quickChecker)
	ok := qc.valid(q, data)
	quickCheckers.Put(qc)
	return ok
}

// valid checks data against q with qc, which keeps no reference to data afterwards.
func (qc *quickChecker) valid(q *Quick, data []byte) bool {
	qc.data = data
	qc.sc.ResetUnique(data)          // arguments the decoder read strictly, or the kit's own encoding
	ok := q.check(qc) && qc.sc.End() // nothing after the value
	qc.sc.Release()
	qc.data = nil
	if cap(qc.scratch) > 4096 {
		qc.scratch = nil
	}
	return ok
}

// value reads the next value and returns its text.
func (qc *quickChecker) value() ([]byte, bool) {
	from, to, ok := qc.sc.Value()
	return qc.data[from:to], ok
}

// check reads one value and reports whether it certainly satisfies q.
func (q *Quick) check(qc *quickChecker) bool {
	if q.never {
		return false
	}
	if q.types == 0 && !q.hasChecks {
		_, ok := qc.value()
		return ok
	}
	switch qc.sc.Peek() {
	case '{':
		return q.allows(typeObject) && q.checkObject(qc)
	case '[':
		return q.allows(typeArray) && q.checkArray(qc)
	case '"':
		return q.allows(typeString) && q.checkString(qc)
	case 't', 'f':
		return q.allows(typeBoolean) && q.checkLiteral(qc)
	case 'n':
		return q.allows(typeNull) && q.checkLiteral(qc)
	}
	return q.checkNumber(qc) // or not a value, which the scanner refuses
}

// allows reports whether the schema's type admits the JSON type bit (numbers are checked apart).
func (q *Quick) allows(bit uint8) bool { return q.types == 0 || q.types&bit != 0 }

func (q *Quick) checkLiteral(qc *quickChecker) bool {
	v, ok := qc.value()
	return ok && (!q.enum || oneOf(q.enumLit, v))
}

// oneOf reports whether b spells one of the strings in list (compared without allocating).
func oneOf(list []string, b []byte) bool {
	for _, s := range list {
		if string(b) == s {
			return true
		}
	}
	return false
}
