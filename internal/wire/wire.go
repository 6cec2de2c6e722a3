// Package wire is core/jsonrpc's codec as core and the kit's transports drive it: the decoder,
// the encoders and what core reads of a decoded message besides its exported fields. None of it
// is API for a server author, so none of it is exported from core/jsonrpc: the package
// implements API with unexported methods and hands it over through internal/corehook; Codec is
// that implementation, checked against API when the program starts.
package wire

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/corehook"
)

// Codec is core/jsonrpc's implementation of API.
var Codec = corehook.JSONRPC.(API)

// API is the codec besides the exported types of core/jsonrpc.
type API interface {
	// DecodeMessage parses one JSON-RPC message (an object) strictly.
	DecodeMessage(data []byte) (*jsonrpc.Message, *jsonrpc.DecodeError)
	// DecodeOwned is DecodeMessage for data the caller hands over and never modifies: the
	// message's raw members (params, result, error) point into data instead of copies of it.
	DecodeOwned(data []byte) (*jsonrpc.Message, *jsonrpc.DecodeError)
	// DecodeBatch parses a JSON array of messages (or one object); the error is for the whole
	// array, and each item carries its own message or error.
	DecodeBatch(data []byte) ([]jsonrpc.BatchItem, *jsonrpc.DecodeError)
	// EncodeResponse encodes a result response; result must be valid JSON.
	EncodeResponse(id jsonrpc.ID, result []byte) []byte
	// EncodeError encodes an error response; an invalid id is written as null.
	EncodeError(id jsonrpc.ID, e *jsonrpc.Error) []byte
	// EncodeNotification encodes a notification; nil params are left out.
	EncodeNotification(method string, params any) ([]byte, error)
	// EncodeRequest encodes a request; nil params are left out.
	EncodeRequest(id jsonrpc.ID, method string, params any) ([]byte, error)
	// EncodeMessage returns a decoded message as JSON-RPC again: a response with its result or
	// error, or a request or notification with its params as received.
	EncodeMessage(m *jsonrpc.Message) []byte
	// AppendID appends the id as JSON (as it was sent, for an id read from the wire).
	AppendID(b []byte, id jsonrpc.ID) []byte
	// IDKey is the id as a map key: equal ids (the same number or the same string) have equal
	// keys.
	IDKey(id jsonrpc.ID) jsonrpc.ID
	// ParseID validates a raw JSON id: an integer, any string, or null (absent).
	ParseID(raw []byte) (jsonrpc.ID, bool)
	// Retry reports whether the decoder saw inputResponses or requestState in params (a retry
	// of an input_required result).
	Retry(m *jsonrpc.Message) bool
	// Arguments returns params.arguments as the decoder kept it (nil when absent), and whether
	// params.name was a string.
	Arguments(m *jsonrpc.Message) (args jsontext.Value, nameString bool)
	// Unavailable reports whether e was marked by MarkUnavailable (core.UnavailableError): HTTP
	// answers it with 503.
	Unavailable(e *jsonrpc.Error) bool
	// MarkUnavailable marks e as the error of a backend that is down and returns it.
	MarkUnavailable(e *jsonrpc.Error) *jsonrpc.Error
	// TypedError builds an error with the generic message for its code and the detail as data.
	TypedError(code int64, detail string) *jsonrpc.Error
	// KnownMethods adds method names the decoder shares instead of allocating them per message.
	// Call it only while the program is initialized.
	KnownMethods(names ...string)
	// KnownMethod returns the shared copy of a method name KnownMethods added.
	KnownMethod(name string) (string, bool)
	// KnownMetaKeys adds params._meta keys the decoder shares instead of allocating them per
	// message. Call it only while the program is initialized.
	KnownMetaKeys(keys ...string)
}
