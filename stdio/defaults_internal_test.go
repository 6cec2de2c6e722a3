package stdio

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/listen"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Each Options field left at zero takes the default its doc comment states.
func TestOptionsDefaults(t *testing.T) {
	var zero Options
	c := newConn(core.NewServer(core.Implementation{Name: "d", Version: "1"}, core.Options{}), zero)
	defer c.listen.Close(func(*listen.Listener) {})
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "In", Given: zero.In, Got: c.in, Doc: io.Reader(os.Stdin)},
		{Option: "Out", Given: zero.Out, Got: c.out, Doc: io.Writer(os.Stdout)},
		{Option: "Logger", Given: zero.Logger, Got: c.log, Doc: (*zerolog.Logger)(&log.Logger)},
		{Option: "MaxLineBytes", Given: zero.MaxLineBytes, Got: c.maxLine, Doc: 4 << 20},
		{Option: "MaxInFlight", Given: zero.MaxInFlight, Got: c.maxInFlight, Doc: int64(1000)},
		{Option: "DrainTimeout", Given: zero.DrainTimeout, Got: c.drainT, Doc: 10 * time.Second},
		{Option: "MaxListeners", Given: zero.MaxListeners, Got: c.listen.Max(), Doc: 1000},
	})
}
