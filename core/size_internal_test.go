package core

import (
	"testing"
	"unsafe"
)

// TestPerRequestSizes keeps the allocations every request makes in the size classes they were
// fitted to: an object past 512 bytes also carries an 8-byte malloc header, so one field more
// can move an ephemeral session and its call from the 704-byte class to the 768-byte one, or a
// call on a session from 448 bytes to 480. Move a field used by few requests elsewhere (as
// sessionLasting does) rather than raise these.
func TestPerRequestSizes(t *testing.T) {
	for _, c := range []struct {
		name       string
		size, room uintptr
	}{
		{"Call (a call on a lasting session)", unsafe.Sizeof(Call{}), 448},
		{"ephemeralSession (an ephemeral session with its call), with its malloc header", unsafe.Sizeof(ephemeralSession{}) + 8, 704},
		{"modernSession (the same on 2026-07-28), with its malloc header", unsafe.Sizeof(modernSession{}) + 8, 896},
	} {
		if c.size > c.room {
			t.Errorf("%s is %d bytes, more than the %d of its size class", c.name, c.size, c.room)
		}
	}
}
