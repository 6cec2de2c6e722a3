package core

import "errors"

// ErrUnavailable is wrapped by the errors of a backend the server needs and cannot reach right
// now (a shared store that is down or too slow). An error of a handler or a store that wraps it
// reaches the client as UnavailableError, whatever the request: on HTTP that is 503, as for a
// session store that is down, so the client knows to retry rather than blame its request.
var ErrUnavailable = errors.New("mcpkit: backend unavailable")

// UnavailableError returns the -32603 error of a request that could not be served because a
// backend is unavailable: message "Service unavailable", the detail as data. Transports with a
// status answer it 503 (Error.Unavailable tells them).
func UnavailableError(detail string) *Error {
	return &Error{Code: CodeInternalError, Message: "Service unavailable", Data: detail, unavailable: true}
}

// Unavailable reports whether e was made by UnavailableError (or by WireError of an error
// wrapping ErrUnavailable): a backend could not be reached, and an HTTP transport answers 503.
// It is false for a nil e and for errors decoded from the wire.
func (e *Error) Unavailable() bool { return e != nil && e.unavailable }
