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

// Each MemoryEventStoreOptions field left at zero takes the default its doc comment states, and
// negative values are refused at construction.
func TestMemoryEventStoreOptionsDefaults(t *testing.T) {
	var zero MemoryEventStoreOptions
	es := NewMemoryEventStore(zero)
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "MemoryEventStoreOptions.MaxEvents", Given: zero.MaxEvents, Got: es.maxEvents, Doc: 256},
		{Option: "MemoryEventStoreOptions.MaxBytes", Given: zero.MaxBytes, Got: es.maxBytes, Doc: 1 << 20},
	})
	for want, build := range map[string]func(){
		"MemoryEventStoreOptions.MaxEvents": func() { NewMemoryEventStore(MemoryEventStoreOptions{MaxEvents: -1}) },
		"MemoryEventStoreOptions.MaxBytes":  func() { NewMemoryEventStore(MemoryEventStoreOptions{MaxBytes: -1}) },
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, want, build) })
	}
}
