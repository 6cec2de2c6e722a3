package middleware

import (
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestRecordSizes keeps the record every request allocates in the size classes it was fitted
// to: 504 bytes in the 512-byte class for a request naming no session, 664 (672 with the malloc
// header) in the 704-byte class for one naming a session, with its claim and stream. Two pointer
// fields more in Exchange move the first to the 576-byte class.
func TestRecordSizes(t *testing.T) {
	testutil.FitsSizeClass(t, "exchangeContext (with the request carrying it)", unsafe.Sizeof(exchangeContext{}), 512)
	testutil.FitsSizeClass(t, "sessionExchangeContext (with its claim and stream)", unsafe.Sizeof(sessionExchangeContext{}), 704)
}
