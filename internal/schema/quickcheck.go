package schema

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

func (q *Quick) checkObject(qc *quickChecker) bool {
	mark, ok := qc.sc.Open()
	if !ok || q.enum {
		return false // an object never equals an allowed enum value here
	}
	var seen uint64
	count := 0
	for {
		raw, done, ok := qc.sc.NextName(mark)
		if !ok {
			return false
		}
		if done {
			break
		}
		m, declared := q.member(raw[1 : len(raw)-1]) // the scanner reads no escaped name
		if declared && m.bit >= 0 {
			seen |= 1 << m.bit
		}
		sub := q.additional
		if declared && m.schema != nil {
			sub = m.schema
		}
		if !sub.checkMember(qc) {
			return false
		}
		count++
	}
	if seen != (uint64(1)<<q.required)-1 { // 1<<64 is 0 in Go: all 64 bits then
		return false
	}
	return count >= q.minProps && (q.maxProps < 0 || count <= q.maxProps)
}

// checkMember checks a member's value against its schema; nil accepts any value.
func (q *Quick) checkMember(qc *quickChecker) bool {
	if q == nil {
		_, ok := qc.value()
		return ok
	}
	return q.check(qc)
}

func (q *Quick) checkArray(qc *quickChecker) bool {
	if !qc.sc.OpenArray() || q.enum {
		return false
	}
	count := 0
	for first := true; ; first = false {
		done, ok := qc.sc.NextItem(first)
		if !ok {
			return false
		}
		if done {
			break
		}
		if !q.items.checkMember(qc) {
			return false
		}
		count++
	}
	return count >= q.minItems && (q.maxItems < 0 || count <= q.maxItems)
}

func (q *Quick) checkString(qc *quickChecker) bool {
	raw, ok := qc.value()
	if !ok {
		return false
	}
	if !q.hasChecks {
		return true
	}
	s, ok := qc.unquote(raw)
	if !ok {
		return false
	}
	if q.minLen > 0 || q.maxLen >= 0 {
		n := utf8.RuneCount(s)
		if n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
			return false
		}
	}
	if q.pattern != nil && !q.pattern.Match(s) {
		return false
	}
	return !q.enum || oneOf(q.enumStr, s)
}

func (q *Quick) checkNumber(qc *quickChecker) bool {
	raw, ok := qc.value()
	if !ok {
		return false
	}
	n, isInt := plainInt(raw)
	// A fraction or an exponent is decided by the full validator when the type says integer
	// (1.0 is one) or an integer enum applies.
	if !(q.types == 0 || q.types&typeNumber != 0 || isInt && q.types&typeInteger != 0) {
		return false
	}
	if q.enum {
		if !isInt {
			return false
		}
		if !slices.Contains(q.enumInt, n) {
			return false
		}
	}
	if q.min == nil && q.max == nil && q.exclMin == nil && q.exclM == nil {
		return true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return false
	}
	return q.min.below(n, isInt, f, false) && q.max.above(n, isInt, f, false) &&
		q.exclMin.below(n, isInt, f, true) && q.exclM.above(n, isInt, f, true)
}

// below reports whether the value (n when isInt, else f) is certainly at or above the lower
// bound b (strictly above when strict); a nil bound holds always. A float comparison too close
// to call is left to the full validator.
func (b *quickBound) below(n int64, isInt bool, f float64, strict bool) bool {
	if b == nil {
		return true
	}
	if isInt && b.exact {
		return n > b.i || !strict && n == b.i
	}
	return f-b.f > margin(f, b.f)
}

// above reports whether the value is certainly at or below the upper bound b (strictly below
// when strict).
func (b *quickBound) above(n int64, isInt bool, f float64, strict bool) bool {
	if b == nil {
		return true
	}
	if isInt && b.exact {
		return n < b.i || !strict && n == b.i
	}
	return b.f-f > margin(f, b.f)
}

// margin is how far apart two float64 values must be for their order to be certain whatever
// rounding parsing them involved.
func margin(a, b float64) float64 {
	return 1e-9 * math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// unquote returns the text of a JSON string as read (valid for the next read only).
func (qc *quickChecker) unquote(raw jsontext.Value) ([]byte, bool) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	var err error
	qc.scratch, err = jsontext.AppendUnquote(qc.scratch[:0], raw)
	return qc.scratch, err == nil
}
