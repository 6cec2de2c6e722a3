package core

import (
	"errors"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ErrUnavailable is wrapped by the errors of a backend the server needs and cannot reach right
// now (a shared store that is down or too slow). An error of a handler or a store that wraps it
// reaches the client as UnavailableError, whatever the request: on HTTP that is 503, as for a
// session store that is down, so the client knows to retry rather than blame its request.
var ErrUnavailable = errors.New("mcpkit: backend unavailable")

// UnavailableError returns the -32603 error of a request that could not be served because a
// backend is unavailable: message "Service unavailable", the detail as data. Transports with a
// status answer it 503.
func UnavailableError(detail string) *jsonrpc.Error {
	return codec.MarkUnavailable(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Service unavailable", Data: detail})
}
