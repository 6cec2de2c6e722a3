package tasks

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestOptionsDefaults checks each documented default of Options.
func TestOptionsDefaults(t *testing.T) {
	var zero Options
	x := New(zero)
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "Store", Given: zero.Store, Got: fmt.Sprintf("%T", x.Store()), Doc: "*tasks.MemoryStore"},
		{Option: "TTL", Given: zero.TTL, Got: x.opts.TTL, Doc: time.Hour},
		{Option: "PollInterval", Given: zero.PollInterval, Got: x.opts.PollInterval, Doc: time.Second},
		{Option: "MaxTasks", Given: zero.MaxTasks, Got: x.opts.MaxTasks, Doc: 10000},
		{Option: "MaxTasksPerPrincipal", Given: zero.MaxTasksPerPrincipal, Got: x.opts.MaxTasksPerPrincipal, Doc: 100},
		{Option: "MaxListenIDs", Given: zero.MaxListenIDs, Got: x.opts.MaxListenIDs, Doc: 1000},
		{Option: "Deferred", Given: zero.Deferred, Got: len(x.deferred), Doc: 0},
	})
}

// TestOptionsInvalid checks that New panics on each invalid value, naming the option.
func TestOptionsInvalid(t *testing.T) {
	testutil.WantPanic(t, "tasks: Options.MaxListenIDs must be >= 0", func() { New(Options{MaxListenIDs: -1}) })
}
