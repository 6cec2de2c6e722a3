package headerval

import (
	"strconv"
	"testing"
)

// TestLength checks every shared length against strconv, and the bounds.
func TestLength(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 99, 100, 1023, MaxLength - 1, MaxLength, MaxLength + 1, 1 << 20} {
		v := Length(n)
		if len(v) != 1 || v[0] != strconv.Itoa(n) {
			t.Fatalf("Length(%d) = %q", n, v)
		}
		if cap(v) != 1 {
			t.Fatalf("Length(%d) has capacity %d: an Add would write into the shared table", n, cap(v))
		}
	}
	for n := 0; n <= MaxLength; n++ {
		if got := Length(n)[0]; got != strconv.Itoa(n) {
			t.Fatalf("Length(%d) = %q", n, got)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = Length(1500) }); allocs != 0 {
		t.Fatalf("Length of a shared length allocates %v times", allocs)
	}
}
