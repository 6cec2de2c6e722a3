package core

import (
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestPerRequestSizes keeps the allocations every request makes in the size classes they were
// fitted to: one field more can move an ephemeral session and its call from the 704-byte class
// to the 768-byte one, or a call on a session from 448 bytes to 480. Move a field used by few
// requests elsewhere (as sessionLasting does) rather than raise these.
func TestPerRequestSizes(t *testing.T) {
	testutil.FitsSizeClass(t, "Call (a call on a lasting session)", unsafe.Sizeof(Call{}), 448)
	testutil.FitsSizeClass(t, "ephemeralSession (an ephemeral session with its call)", unsafe.Sizeof(ephemeralSession{}), 704)
	testutil.FitsSizeClass(t, "modernSession (the same on 2026-07-28)", unsafe.Sizeof(modernSession{}), 896)
}
