package testutil

import (
	"reflect"
	"testing"
)

// Default is one row of a table of documented defaults: an option left at Given (its zero
// value), the value the code then uses (Got, observed after construction), and the default
// the option's doc comment states (Doc, written in the test as the comment says it).
type Default struct {
	Option string
	Given  any
	Got    any
	Doc    any
}

// CheckDefaults fails for every row whose Given is not a zero value or whose Got differs from
// Doc: a default the code does not use, or a doc comment that no longer tells the truth.
func CheckDefaults(t testing.TB, rows []Default) {
	t.Helper()
	for _, r := range rows {
		if r.Given != nil && !reflect.ValueOf(r.Given).IsZero() {
			t.Errorf("%s: given %v, want the zero value (a defaults table checks what zero means)", r.Option, r.Given)
		}
		if !reflect.DeepEqual(r.Got, r.Doc) {
			t.Errorf("%s: zero gives %v (%T), the doc comment says %v (%T)", r.Option, r.Got, r.Got, r.Doc, r.Doc)
		}
	}
}
