package core

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
const MaxNesting = 64

// Error is a JSON-RPC error. As a Go error returned by a handler it reaches the client as is:
// its code, message and data. Any other error a handler returns becomes -32603 "Internal error".
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	// Data is optional detail. Errors received from a client carry it as jsontext.Value.
	Data any `json:"data,omitzero"`
}

func (e *Error) Error() string {
	if s, ok := e.Data.(string); ok && s != "" && s != e.Message {
		return fmt.Sprintf("jsonrpc error %d: %s: %s", e.Code, e.Message, s)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
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

// InvalidParams returns a -32602 error with the generic message and the detail as data.
func InvalidParams(detail string) *Error { return typedError(CodeInvalidParams, detail) }

// InternalError returns a -32603 error with the generic message and the detail as data.
func InternalError(detail string) *Error { return typedError(CodeInternalError, detail) }

// InvalidRequest returns a -32600 error with the generic message and the detail as data.
func InvalidRequest(detail string) *Error { return typedError(CodeInvalidRequest, detail) }

// asWireError turns any error into the error a client sees: a *Error passes through, anything else
// becomes -32603 with the given detail (never the error's own text).
func asWireError(err error, detail string) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return InternalError(detail)
}

type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
)

// ID is a JSON-RPC request id: an integer or a string. The zero ID is absent (a notification) and
// encodes as null.
type ID struct {
	kind idKind
	num  int64
	str  string
}

// IntID returns an integer id.
func IntID(n int64) ID { return ID{kind: idInt, num: n} }

// StringID returns a string id.
func StringID(s string) ID { return ID{kind: idString, str: s} }

// IsValid reports whether the id is present.
func (id ID) IsValid() bool { return id.kind != idNone }

// Raw returns the id as a Go value: int64, string, or nil when absent.
func (id ID) Raw() any {
	switch id.kind {
	case idInt:
		return id.num
	case idString:
		return id.str
	}
	return nil
}

// String renders the id the way it appears in JSON: 1 or "abc".
func (id ID) String() string { return string(id.appendJSON(nil)) }

func (id ID) appendJSON(b []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(b, id.num, 10)
	case idString:
		return strconv.AppendQuote(b, id.str) // ids are [A-Za-z0-9_-]+, so quoting is exact JSON
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

// parseID validates a raw JSON id: an integer, a string of [A-Za-z0-9_-]+, or null (absent).
func parseID(raw []byte) (ID, bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch c := raw[0]; {
	case c == 'n':
		return ID{}, string(raw) == "null"
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !validIDString(s) {
			return ID{}, false
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

func validIDString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Message is one decoded JSON-RPC message: a request (method and id), a notification (method, no id)
// or a response (id, result or error).
type Message struct {
	ID     ID
	Method string
	// Params is the raw params value, nil when absent.
	Params jsontext.Value
	// Result is the raw result of a response.
	Result jsontext.Value
	// Error is the error of an error response.
	Error *Error
}

// IsRequest reports whether m is a request (it has a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification (a method and no id).
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response to a server-to-client request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// wireMessage is the envelope as decoded, before validation. Member names match exactly and a
// duplicated member anywhere in the message is rejected by the decoder.
type wireMessage struct {
	JSONRPC jsontext.Value `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  jsontext.Value `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   jsontext.Value `json:"error"`
}

// DecodeError is a framing error: the message could not be accepted. ID is the request id when it
// could be read, so the error response can echo it.
type DecodeError struct {
	ID  ID
	Err *Error
}

func (e *DecodeError) Error() string { return e.Err.Error() }

var (
	errParse       = typedError(CodeParseError, "Invalid JSON")
	errNotObject   = typedError(CodeInvalidRequest, "Request must be an array or a hash")
	errEmptyBatch  = typedError(CodeInvalidRequest, "Request is an empty array")
	errBatchMember = typedError(CodeInvalidRequest, "Request must be an object")
	errVersion     = typedError(CodeInvalidRequest, "JSON-RPC version must be 2.0")
	errBadID       = typedError(CodeInvalidRequest, "Request ID must match validation pattern, or be an integer or null")
	errBadMethod   = typedError(CodeInvalidRequest, `Method name must be a string and not start with "rpc."`)
	errBadParams   = typedError(CodeInvalidParams, "Method parameters must be an array or an object or null")
	errBadResponse = typedError(CodeInvalidRequest, "Response must carry exactly one of result or error")
)

// CheckJSON verifies that data is one syntactically valid JSON value nested at most MaxNesting
// deep. It does not allocate.
func CheckJSON(data []byte) bool {
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > MaxNesting {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return jsontext.Value(data).IsValid()
}

// Kind of a top-level JSON body.
const (
	BodyInvalid = iota // not valid JSON, or nested too deep
	BodyObject
	BodyArray
	BodyOther // a scalar
)

// BodyKind classifies data: invalid, object, array or scalar.
func BodyKind(data []byte) int {
	if !CheckJSON(data) {
		return BodyInvalid
	}
	switch firstByte(data) {
	case '{':
		return BodyObject
	case '[':
		return BodyArray
	}
	return BodyOther
}

func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// DecodeMessage decodes one JSON-RPC message (a single object) strictly: exact member names, no
// duplicate members, nesting at most MaxNesting, and the framing rules of JSON-RPC 2.0.
func DecodeMessage(data []byte) (*Message, *DecodeError) {
	switch BodyKind(data) {
	case BodyInvalid:
		return nil, &DecodeError{Err: errParse}
	case BodyObject:
	default:
		return nil, &DecodeError{Err: errNotObject}
	}
	return decodeObject(data)
}

func decodeObject(data []byte) (*Message, *DecodeError) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		// Duplicate member names or invalid UTF-8: the message cannot be read unambiguously.
		return nil, &DecodeError{Err: errParse}
	}
	m := &Message{}
	if w.ID != nil {
		id, ok := parseID(w.ID)
		if !ok {
			return nil, &DecodeError{Err: errBadID}
		}
		m.ID = id
	}
	if string(w.JSONRPC) != `"2.0"` {
		return nil, &DecodeError{ID: m.ID, Err: errVersion}
	}
	if w.Method == nil {
		// A response from the client: exactly one of result and error, and an id.
		if (w.Result == nil) == (w.Error == nil) || !m.ID.IsValid() {
			if w.Result == nil && w.Error == nil {
				return nil, &DecodeError{ID: m.ID, Err: errBadMethod}
			}
			return nil, &DecodeError{ID: m.ID, Err: errBadResponse}
		}
		if w.Error != nil {
			var e Error
			var raw struct {
				Code    int64          `json:"code"`
				Message string         `json:"message"`
				Data    jsontext.Value `json:"data"`
			}
			if err := json.Unmarshal(w.Error, &raw); err != nil {
				return nil, &DecodeError{ID: m.ID, Err: errBadResponse}
			}
			e.Code, e.Message = raw.Code, raw.Message
			if raw.Data != nil {
				e.Data = raw.Data
			}
			m.Error = &e
		} else {
			m.Result = w.Result
		}
		return m, nil
	}
	if w.Method[0] != '"' {
		return nil, &DecodeError{ID: m.ID, Err: errBadMethod}
	}
	if err := json.Unmarshal(w.Method, &m.Method); err != nil || m.Method == "" || len(m.Method) >= 4 && m.Method[:4] == "rpc." {
		return nil, &DecodeError{ID: m.ID, Err: errBadMethod}
	}
	if w.Params != nil {
		switch w.Params[0] {
		case '{', '[':
			m.Params = w.Params
		case 'n':
			// null params are absent params
		default:
			return nil, &DecodeError{ID: m.ID, Err: errBadParams}
		}
	}
	return m, nil
}

// DecodeBatch splits a JSON array body into its elements, each decoded like DecodeMessage. The
// result holds, per element, either a message or a decode error.
func DecodeBatch(data []byte) ([]BatchItem, *DecodeError) {
	var elems []jsontext.Value
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, &DecodeError{Err: errParse}
	}
	if len(elems) == 0 {
		return nil, &DecodeError{Err: errEmptyBatch}
	}
	items := make([]BatchItem, len(elems))
	for i, e := range elems {
		if e.Kind() != '{' {
			items[i].Err = &DecodeError{Err: errBatchMember}
			continue
		}
		items[i].Msg, items[i].Err = decodeObject(e)
	}
	return items, nil
}

// BatchItem is one element of a decoded batch.
type BatchItem struct {
	Msg *Message
	Err *DecodeError
}

// EncodeResponse encodes a success response around an already encoded result.
func EncodeResponse(id ID, result []byte) []byte {
	b := make([]byte, 0, len(result)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = id.appendJSON(b)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// EncodeError encodes an error response. An absent id encodes as null.
func EncodeError(id ID, e *Error) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = id.appendJSON(b)
	b = append(b, `,"error":`...)
	enc, err := json.Marshal(e)
	if err != nil {
		enc, _ = json.Marshal(&Error{Code: CodeInternalError, Message: "Internal error"})
	}
	b = append(b, enc...)
	return append(b, '}')
}

// EncodeNotification encodes a notification with the given params (nil for none).
func EncodeNotification(method string, params any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","method":`)
	m, _ := json.Marshal(method)
	buf.Write(m)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		buf.WriteString(`,"params":`)
		buf.Write(p)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// EncodeRequest encodes a request with the given id and params (nil for none).
func EncodeRequest(id ID, method string, params any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id.appendJSON(nil))
	buf.WriteString(`,"method":`)
	m, _ := json.Marshal(method)
	buf.Write(m)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		buf.WriteString(`,"params":`)
		buf.Write(p)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
