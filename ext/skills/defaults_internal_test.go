package skills

import (
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestOptionsDefaults checks each documented default of Options.
func TestOptionsDefaults(t *testing.T) {
	var zero Options
	x := New(zero)
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "MaxFiles", Given: zero.MaxFiles, Got: x.opts.MaxFiles, Doc: 512},
		{Option: "MaxBytes", Given: zero.MaxBytes, Got: x.opts.MaxBytes, Doc: int64(16 << 20)},
	})
}
