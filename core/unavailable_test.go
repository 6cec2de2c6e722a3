package core_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// TestUnavailableError: an error wrapping ErrUnavailable becomes the one "Service unavailable"
// error transports answer 503; others do not, nor does the same error decoded from the wire.
func TestUnavailableError(t *testing.T) {
	e := core.WireError(fmt.Errorf("store: %w: dial refused", core.ErrUnavailable), "Internal error")
	if !transport.Core.Unavailable(e) || e.Code != jsonrpc.CodeInternalError || e.Message != "Service unavailable" {
		t.Errorf("WireError of an unavailable backend = %+v, unavailable %v", e, transport.Core.Unavailable(e))
	}
	if transport.Core.Unavailable(core.WireError(errors.New("other"), "Internal error")) || transport.Core.Unavailable((*jsonrpc.Error)(nil)) {
		t.Error("an ordinary error counts as unavailable")
	}
	var decoded jsonrpc.Error
	if err := decoded.UnmarshalJSON([]byte(`{"code":-32603,"message":"Service unavailable"}`)); err != nil || transport.Core.Unavailable(&decoded) {
		t.Errorf("a decoded error counts as unavailable: %v", err)
	}
}
