package core

import (
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestPerRequestSizes keeps the allocations every request makes in the size classes they were
// fitted to. Call (384 bytes) and modernSession (760, 768 with the malloc header) fill their
// classes exactly: one word more in Call, Session or envelopeStore moves a call on a session to
// 416 bytes and a 2026-07-28 request's session to 896; ephemeralSession (608 + 8) has room for
// three words. Move a field used by few requests elsewhere (as sessionLasting does) rather than
// raise these.
func TestPerRequestSizes(t *testing.T) {
	testutil.FitsSizeClass(t, "Call (a call on a lasting session)", unsafe.Sizeof(Call{}), 384)
	testutil.FitsSizeClass(t, "ephemeralSession (an ephemeral session with its call)", unsafe.Sizeof(ephemeralSession{}), 640)
	testutil.FitsSizeClass(t, "modernSession (the same on 2026-07-28)", unsafe.Sizeof(modernSession{}), 768)
}
