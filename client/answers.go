package client

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// ErrInvalidResponse is wrapped by the error of a call whose answer cannot be its response: an
// application/json body that is not valid JSON (invalid UTF-8, a syntax error), is nested deeper
// than jsonrpc.MaxNesting, is not a JSON-RPC response, or answers another request id. The call
// fails as soon as the body is read, with what was wrong, instead of waiting for its timeout.
var ErrInvalidResponse = errors.New("mcpkit/client: invalid response")

// invalidAnswer says why a JSON body the server sent as the whole answer to the request with id
// holds no response to it.
func invalidAnswer(body []byte, id jsonrpc.ID) error {
	if jsontext.Value(body).Kind() == '[' && jsontext.Value(body).IsValid() {
		return fmt.Errorf("%w: the JSON batch holds no response to id %s", ErrInvalidResponse, id)
	}
	m, err := transport.Core.DecodeMessage(body)
	var derr *jsonrpc.DecodeError
	switch {
	case !utf8.Valid(body):
		return fmt.Errorf("%w: the JSON body is not valid UTF-8", ErrInvalidResponse)
	case !jsontext.Value(body).IsValid():
		return fmt.Errorf("%w: the body is not valid JSON", ErrInvalidResponse)
	case errors.As(err, &derr) && derr.Err.Code == jsonrpc.CodeParseError:
		return fmt.Errorf("%w: the JSON body is nested deeper than %d levels", ErrInvalidResponse, jsonrpc.MaxNesting)
	case err != nil:
		return fmt.Errorf("%w: the JSON body is not a JSON-RPC message: %w", ErrInvalidResponse, err)
	case !m.IsResponse():
		return fmt.Errorf("%w: the JSON body is the request or notification %q, not a response", ErrInvalidResponse, m.Method)
	case !m.ID.IsValid() && m.Error != nil:
		return fmt.Errorf("%w: the server answered without an id: %w", ErrInvalidResponse, m.Error)
	case !m.ID.IsValid():
		return fmt.Errorf("%w: the JSON body is a response without an id", ErrInvalidResponse)
	}
	return fmt.Errorf("%w: the JSON body answers id %s, not %s", ErrInvalidResponse, m.ID, id)
}
