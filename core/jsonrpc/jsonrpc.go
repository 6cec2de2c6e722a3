// Package jsonrpc is the JSON-RPC 2.0 codec of the kit: the Message a transport decodes each
// frame into, request ids (ID), errors (Error, DecodeError) and the error codes of JSON-RPC and
// MCP. Core and the kit's transports decode and encode messages with it; a server author meets
// its types in handlers (a *Error returned by a handler reaches the client as is) and in what
// the client and the observer report.
//
// Decoding is strict: exact member names, no duplicate members anywhere in the message, nesting
// at most MaxNesting deep, integer or string ids (any string, echoed byte for byte as sent).
// Besides the JSON-RPC members, the decoder reads in the same pass the few members of params
// MCP routes a request by (_meta, name, uri, taskId), so that nothing parses params again to
// find them.
//
// Zero values: the zero ID is absent (a notification, encoded as null), the zero Message is an
// empty response, the zero Error has code 0 and no message. The decoder and the encoders are
// not exported: the kit's transports reach them, and they do not need to be reached otherwise.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonbody"
)

// JSON-RPC 2.0 and MCP error codes.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603

	// CodeRequestTimeout answers a request whose server-to-client request timed out.
	CodeRequestTimeout int64 = -32001
	// CodeHeaderMismatch reports an HTTP header that disagrees with the body (2026-07-28).
	CodeHeaderMismatch int64 = -32020
	// CodeMissingRequiredClientCapability reports a capability the client did not declare (2026-07-28).
	CodeMissingRequiredClientCapability int64 = -32021
	// CodeUnsupportedProtocolVersion reports a protocol version the server does not speak (2026-07-28).
	CodeUnsupportedProtocolVersion int64 = -32022
	// CodeURLElicitationRequired asks the client to complete URL elicitations (legacy lifecycle only).
	CodeURLElicitationRequired int64 = -32042
)

// MaxNesting is the deepest JSON nesting a message may have; deeper input is a parse error.
const MaxNesting = jsonbody.MaxNesting

// Error is a JSON-RPC error. As a Go error returned by a handler it reaches the client as is:
// its code, message and data. Any other error a handler returns becomes -32603 "Internal error".
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	// Data is optional detail. Errors received from a peer, or decoded from JSON (UnmarshalJSON),
	// carry it as json.RawMessage.
	Data any `json:"data,omitzero"`

	unavailable bool // made by UnavailableError
}

// Error renders the error as "jsonrpc error CODE: MESSAGE: DETAIL", the same for an error built
// in Go and for one received on any transport. DETAIL is Data as the wire carries it: a string
// (a Go string, or a JSON string as received) as its text, any other value as compact JSON. It
// is left out when Data is absent, null, or repeats the message.
func (e *Error) Error() string {
	if d := e.detail(); d != "" && d != e.Message {
		return fmt.Sprintf("jsonrpc error %d: %s: %s", e.Code, e.Message, d)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// UnmarshalJSON decodes a JSON-RPC error object with Data as the json.RawMessage received, as
// the codec decodes the errors of responses, so an error reads the same however it was decoded.
func (e *Error) UnmarshalJSON(b []byte) error {
	var raw struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Error{Code: raw.Code, Message: raw.Message}
	if raw.Data != nil {
		e.Data = raw.Data
	}
	return nil
}

// detail is Data rendered for Error.
func (e *Error) detail() string {
	if s, ok := e.Data.(string); ok {
		return s
	}
	if e.Data == nil {
		return ""
	}
	enc, err := marshal(e.Data) // what the wire carries (received data is a json.RawMessage)
	if err != nil {
		return "" // left out of the wire too (appendError)
	}
	if v := jsontext.Value(enc); v.Kind() == '"' {
		var s string
		if jsonv2.Unmarshal(enc, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, enc) != nil || b.String() == "null" {
		return ""
	}
	return b.String()
}

// NewError returns an error whose data repeats the message, the shape used for server-layer errors.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message, Data: message}
}

// Errorf is NewError with a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return NewError(code, fmt.Sprintf(format, args...))
}

// typedError builds an error with the generic message for its code and the detail in data.
func typedError(code int64, detail string) *Error {
	var msg string
	switch code {
	case CodeParseError:
		msg = "Parse error"
	case CodeInvalidRequest:
		msg = "Invalid Request"
	case CodeMethodNotFound:
		msg = "Method not found"
	case CodeInvalidParams:
		msg = "Invalid params"
	default:
		msg = "Internal error"
	}
	e := &Error{Code: code, Message: msg}
	if detail != "" {
		e.Data = detail
	}
	return e
}

// ParseError returns a -32700 error with the generic message and the detail as data.
func ParseError(detail string) *Error { return typedError(CodeParseError, detail) }

// InvalidParams returns a -32602 error with the generic message and the detail as data.
func InvalidParams(detail string) *Error { return typedError(CodeInvalidParams, detail) }

// InternalError returns a -32603 error with the generic message and the detail as data.
func InternalError(detail string) *Error { return typedError(CodeInternalError, detail) }

// InvalidRequest returns a -32600 error with the generic message and the detail as data.
func InvalidRequest(detail string) *Error { return typedError(CodeInvalidRequest, detail) }

type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
	// idSpelled is a string id whose JSON text as it arrived differs from the canonical encoding
	// of the string (escapes a client chose): s holds that text, so that answers echo it byte
	// for byte, and the string is decoded from it when asked for.
	idSpelled
)

// ID is a JSON-RPC request id: an integer or any string (the empty string included). The zero ID
// is absent (a notification) and encodes as null. An id read from the wire is written back
// exactly as it was sent, escapes and all; two ids are the same id when they carry the same
// integer or the same string, however it was escaped (see Equal).
type ID struct {
	s    string // the string of a string id; the JSON text of a spelled one
	num  int64
	kind idKind
}

// IntID returns an integer id.
func IntID(n int64) ID { return ID{kind: idInt, num: n} }

// StringID returns a string id. Any string is a valid id.
func StringID(s string) ID { return ID{kind: idString, s: s} }

// IsValid reports whether the id is present.
func (id ID) IsValid() bool { return id.kind != idNone }

// Equal reports whether two ids name the same request: the same integer, or the same string
// whatever escapes either was sent with.
func (id ID) Equal(o ID) bool { return id.key() == o.key() }

// key returns the id without its wire spelling, for use as a map key: ids that are Equal have
// the same key.
func (id ID) key() ID {
	if id.kind == idSpelled {
		return StringID(id.text())
	}
	return id
}

// text returns the string of a string id (spelled or not).
func (id ID) text() string {
	if id.kind != idSpelled {
		return id.s
	}
	var s string
	_ = jsonv2.Unmarshal([]byte(id.s), &s) // parseID made it from a valid JSON string
	return s
}

// Raw returns the id as a Go value: int64, string, or nil when absent.
func (id ID) Raw() any {
	switch id.kind {
	case idInt:
		return id.num
	case idString, idSpelled:
		return id.text()
	}
	return nil
}

// String renders the id the way it appears in JSON: 1 or "abc" (as it was sent, for an id read
// from the wire).
func (id ID) String() string { return string(id.appendJSON(nil)) }

func (id ID) appendJSON(b []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(b, id.num, 10)
	case idString:
		return appendString(b, id.s)
	case idSpelled:
		return append(b, id.s...)
	}
	return append(b, "null"...)
}

// MarshalJSON encodes the id.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendJSON(nil), nil }

// UnmarshalJSON decodes and validates an id.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, ok := parseID(b)
	if !ok {
		return errors.New("invalid id")
	}
	*id = v
	return nil
}

// parseID validates a raw JSON id: an integer, any string, or null (absent). Floats, booleans,
// objects and arrays are not ids.
func parseID(raw []byte) (ID, bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch c := raw[0]; {
	case c == 'n':
		return ID{}, string(raw) == "null"
	case c == '"':
		if len(raw) >= 2 && raw[len(raw)-1] == '"' && plainJSONString(raw[1:len(raw)-1]) {
			// Nothing escaped: the text between the quotes is the string and encodes back to
			// the same bytes, so no spelling needs keeping.
			return StringID(string(raw[1 : len(raw)-1])), true
		}
		var s string
		if err := jsonv2.Unmarshal(raw, &s); err != nil {
			return ID{}, false
		}
		if string(appendString(nil, s)) != string(raw) {
			return ID{kind: idSpelled, s: string(raw)}, true
		}
		return StringID(s), true
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return ID{}, false
		}
		return IntID(n), true
	}
	return ID{}, false
}

// plainJSONString reports whether b, the inside of a JSON string, holds no escape, no quote, no
// control character and only valid UTF-8: such text is its own value.
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b)
}

// Message is one decoded JSON-RPC message: a request (method and id), a notification (method, no id)
// or a response (id, result or error).
type Message struct {
	ID     ID
	Method string
	// Params is the raw params value, nil when absent.
	Params json.RawMessage
	// Result is the raw result of a response.
	Result json.RawMessage
	// Error is the error of an error response.
	Error *Error

	// Parsed is set by DecodeMessage: the members of params._meta (see Meta), Name and URI
	// below were read from params in the same pass, so nobody parses params again to find them.
	// Leave it unset on a message built by hand: its _meta is then read from Params.
	Parsed bool
	// retry is set when params carry inputResponses or requestState (a retry of an
	// input_required result), so first calls skip looking for them. It and nameString sit
	// beside Parsed, so that the three share a word.
	retry bool
	// nameString is set when params.name is a string (Name may then be empty).
	nameString bool
	// Name is params.name when it is a string (the target of tools/call and prompts/get).
	Name string
	// URI is params.uri when it is a string (the target of resources/read).
	URI string
	// TaskID is params.taskId when it is a string (the target of tasks/get, tasks/update and
	// tasks/cancel).
	TaskID string

	// arguments is params.arguments as sent (nil when absent), pointing into Params.
	arguments jsontext.Value
	// meta holds the members of params._meta in the order sent, their values pointing into
	// Params.
	meta []metaMember
}

// IsRequest reports whether m is a request (it has a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification (a method and no id).
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response to a server-to-client request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// DecodeError is a framing error: the message could not be accepted. ID is the request id when it
// could be read, so the error response can echo it.
type DecodeError struct {
	ID  ID
	Err *Error
	// Notification is set when the message was readable as a notification (a string method and
	// no id): a notification is never answered, not even with an error, so transports drop it.
	Notification bool
}

func (e *DecodeError) Error() string { return e.Err.Error() }

var (
	errParse       = typedError(CodeParseError, "Invalid JSON")
	errNotObject   = typedError(CodeInvalidRequest, "Request must be an array or a hash")
	errEmptyBatch  = typedError(CodeInvalidRequest, "Request is an empty array")
	errBatchMember = typedError(CodeInvalidRequest, "Request must be an object")
	errVersion     = typedError(CodeInvalidRequest, "JSON-RPC version must be 2.0")
	errBadID       = typedError(CodeInvalidRequest, "Request ID must be a string, an integer or null")
	errBadMethod   = typedError(CodeInvalidRequest, `Method name must be a string and not start with "rpc."`)
	errBadParams   = typedError(CodeInvalidParams, "Method parameters must be an array or an object or null")
	errBadResponse = typedError(CodeInvalidRequest, "Response must carry exactly one of result or error")
)
