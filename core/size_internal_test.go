package core

import (
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestPerRequestSizes keeps the allocations every request makes in the size classes they were
// fitted to: one field more can move an ephemeral session and its call from the 640-byte class
// to the 704-byte one, or a call on a session from 384 bytes to 416. Move a field used by few
// requests elsewhere (as sessionLasting does) rather than raise these.
func TestPerRequestSizes(t *testing.T) {
	testutil.FitsSizeClass(t, "Call (a call on a lasting session)", unsafe.Sizeof(Call{}), 384)
	testutil.FitsSizeClass(t, "ephemeralSession (an ephemeral session with its call)", unsafe.Sizeof(ephemeralSession{}), 640)
	testutil.FitsSizeClass(t, "modernSession (the same on 2026-07-28)", unsafe.Sizeof(modernSession{}), 768)
}
