package testutil

import (
	"fmt"
	"strings"
	"testing"
)

// WantPanic runs f and fails the test unless f panics with a message containing want (the name
// of the option or the misuse the panic must name).
func WantPanic(t testing.TB, want string, f func()) {
	t.Helper()
	msg, panicked := panicOf(f)
	switch {
	case !panicked:
		t.Errorf("no panic, want one naming %q", want)
	case !strings.Contains(msg, want):
		t.Errorf("panic %q does not name %q", msg, want)
	}
}

// panicOf runs f and returns the text of its panic, if any.
func panicOf(f func()) (msg string, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			msg, panicked = fmt.Sprint(v), true
		}
	}()
	f()
	return "", false
}
