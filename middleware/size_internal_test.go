package middleware

import (
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestRecordSizes keeps the record every request allocates in the size classes it was fitted
// to: one field more in Exchange moves the record of a request naming a session, with its claim
// and stream, from the 896-byte class to the 1024-byte one.
func TestRecordSizes(t *testing.T) {
	testutil.FitsSizeClass(t, "exchangeContext (with the request carrying it)", unsafe.Sizeof(exchangeContext{}), 512)
	testutil.FitsSizeClass(t, "sessionExchangeContext (with its claim and stream)", unsafe.Sizeof(sessionExchangeContext{}), 768)
}
