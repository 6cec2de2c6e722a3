package testutil

import "testing"

// mallocHeader is what the runtime adds to an object past maxNoHeader bytes that holds pointers.
const (
	mallocHeader = 8
	maxNoHeader  = 512
)

// FitsSizeClass fails t when an object of size bytes (unsafe.Sizeof of a type with pointers) is
// allocated in more than class bytes, the malloc header an object past 512 bytes carries
// included: the check that keeps a per-request allocation in the size class it was fitted to.
func FitsSizeClass(t testing.TB, name string, size, class uintptr) {
	t.Helper()
	if size > maxNoHeader {
		size += mallocHeader
	}
	if size > class {
		t.Errorf("%s needs %d bytes (with the malloc header past 512), more than the %d of its size class", name, size, class)
	}
}
