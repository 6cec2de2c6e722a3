package session

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Each MemoryOptions field left at zero takes the default its doc comment states.
func TestMemoryOptionsDefaults(t *testing.T) {
	var zero MemoryOptions
	m := NewMemory(zero)
	defer m.Close()
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "IdleTimeout", Given: zero.IdleTimeout, Got: m.idle, Doc: 30 * time.Minute},
		{Option: "MaxSessions", Given: zero.MaxSessions, Got: m.max, Doc: 10000},
		{Option: "UnusedIdleTimeout", Given: zero.UnusedIdleTimeout, Got: m.unused, Doc: 2 * time.Minute},
		{Option: "ReapInterval", Given: zero.ReapInterval, Got: m.reap, Doc: time.Minute},
	})
}
