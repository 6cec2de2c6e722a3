package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
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

// ID is a JSON-RPC request id: an integer or any string (the empty string included). The zero ID
// is absent (a notification) and encodes as null. An id read from the wire is written back
// exactly as it was sent, escapes and all; two ids are the same id when they carry the same
// integer or the same string, however it was escaped (see Equal).
type ID struct {
	kind idKind
	num  int64
	str  string
	// raw is the id's JSON text as it arrived, kept only when it differs from the canonical
	// encoding of str (escapes a client chose), so that answers echo it byte for byte.
	raw string
}

// IntID returns an integer id.
func IntID(n int64) ID { return ID{kind: idInt, num: n} }

// StringID returns a string id. Any string is a valid id.
func StringID(s string) ID { return ID{kind: idString, str: s} }

// IsValid reports whether the id is present.
func (id ID) IsValid() bool { return id.kind != idNone }

// Equal reports whether two ids name the same request: the same integer, or the same string
// whatever escapes either was sent with.
func (id ID) Equal(o ID) bool { return id.Key() == o.Key() }

// Key returns the id without its wire spelling, for use as a map key: ids that are Equal have
// the same Key.
func (id ID) Key() ID {
	id.raw = ""
	return id
}

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

// String renders the id the way it appears in JSON: 1 or "abc" (as it was sent, for an id read
// from the wire).
func (id ID) String() string { return string(id.appendJSON(nil)) }

func (id ID) appendJSON(b []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(b, id.num, 10)
	case idString:
		if id.raw != "" {
			return append(b, id.raw...)
		}
		return appendString(b, id.str)
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
		id := StringID(s)
		if string(appendString(nil, s)) != string(raw) {
			id.raw = string(raw)
		}
		return id, true
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

	// Parsed is set by DecodeMessage: Meta, Name and URI below were read from params in the same
	// pass, so nobody parses params again to find them.
	Parsed bool
	// Meta holds the members of params._meta (nil when absent), as sent.
	Meta map[string]json.RawMessage
	// Name is params.name when it is a string (the target of tools/call and prompts/get).
	Name string
	// URI is params.uri when it is a string (the target of resources/read).
	URI string
	// TaskID is params.taskId when it is a string (the target of tasks/get, tasks/update and
	// tasks/cancel).
	TaskID string

	// retry is set when params carry inputResponses or requestState (a retry of an
	// input_required result), so first calls skip looking for them.
	retry bool
	// nameString is set when params.name is a string (Name may then be empty).
	nameString bool
	// arguments is params.arguments as sent (nil when absent), pointing into Params.
	arguments jsontext.Value
}

// MetaValue returns the raw value of a key of params._meta, or nil. For a message DecodeMessage
// did not produce, it reads params.
func (m *Message) MetaValue(key string) json.RawMessage {
	if m.Parsed {
		return m.Meta[key]
	}
	return paramsMeta(m.Params)[key]
}

// paramsMeta reads params._meta.
func paramsMeta(params []byte) map[string]json.RawMessage {
	if !rawObject(params) {
		return nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta
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

// DecodeMessage decodes one JSON-RPC message (a single object) strictly: exact member names, no
// duplicate members anywhere, nesting at most MaxNesting, and the framing rules of JSON-RPC 2.0.
// The message does not retain data. A non-nil error is always a *DecodeError (reach it with
// errors.As): it carries the error response to send and the request id to echo.
func DecodeMessage(data []byte) (*Message, error) {
	m, derr := decodeMessage(data)
	if derr != nil {
		return nil, derr
	}
	return m, nil
}

func decodeMessage(data []byte) (*Message, *DecodeError) {
	if !jsonbody.NestingOK(data) {
		return nil, &DecodeError{Err: errParse}
	}
	if jsonbody.FirstByte(data) != '{' {
		if !jsontext.Value(data).IsValid() {
			return nil, &DecodeError{Err: errParse}
		}
		return nil, &DecodeError{Err: errNotObject}
	}
	return decodeObject(data)
}

// msgDecoder is a reusable token reader over one message.
type msgDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
	// pbuf and pdec read the params object while dec is in the middle of the message.
	pbuf bytes.Buffer
	pdec jsontext.Decoder
}

// validatedJSON are the options of decoders that read again what a decoder has validated
// already: the checks for duplicate names are not made twice.
var validatedJSON = []jsontext.Options{jsontext.AllowDuplicateNames(true)}

var msgDecoders = sync.Pool{New: func() any { return new(msgDecoder) }}

// envelope is what decodeObject learns while it reads the members of a message. Every member is
// inspected as soon as it is read: the decoder reuses its buffer.
type envelope struct {
	version, id, method, params, result, errorMember bool // which members were present
	versionOK, idOK, methodOK, methodString          bool
	paramsKind                                       jsontext.Kind
}

func decodeObject(data []byte) (*Message, *DecodeError) {
	md := msgDecoders.Get().(*msgDecoder)
	md.buf = *bytes.NewBuffer(data)
	md.dec.Reset(&md.buf)
	m, derr := md.read(data)
	md.buf = bytes.Buffer{} // do not keep the caller's bytes alive in the pool
	md.dec.Reset(&md.buf)
	msgDecoders.Put(md)
	return m, derr
}

func (md *msgDecoder) read(data []byte) (*Message, *DecodeError) {
	d := &md.dec
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, &DecodeError{Err: errParse}
	}
	m := &Message{}
	var env envelope
	var errRaw jsontext.Value
	var nameBuf [16]byte
	for d.PeekKind() == '"' {
		rawName, err := d.ReadValue()
		if err != nil {
			return nil, &DecodeError{Err: errParse}
		}
		name := []byte(rawName[1 : len(rawName)-1])
		if bytes.IndexByte(name, '\\') >= 0 {
			if name, err = jsontext.AppendUnquote(nameBuf[:0], rawName); err != nil {
				return nil, &DecodeError{Err: errParse}
			}
		}
		val, err := d.ReadValue()
		if err != nil || !md.member(m, &env, &errRaw, name, val) {
			return nil, &DecodeError{Err: errParse}
		}
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, &DecodeError{Err: errParse}
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, &DecodeError{Err: errParse} // trailing data after the object
	}
	m.Parsed = true
	return env.check(m, errRaw)
}

// member takes in one member of the message; false means params could not be read.
func (md *msgDecoder) member(m *Message, env *envelope, errRaw *jsontext.Value, name []byte, val jsontext.Value) bool {
	switch string(name) {
	case "jsonrpc":
		env.version = true
		env.versionOK = string(val) == `"2.0"`
	case "id":
		env.id = true
		m.ID, env.idOK = parseID(val)
	case "method":
		env.method = true
		if val.Kind() == '"' {
			env.methodString = true
			if s, ok := methodName(val); ok {
				m.Method, env.methodOK = s, s != "" && !strings.HasPrefix(s, "rpc.")
			}
		}
	case "params":
		env.params = true
		env.paramsKind = val.Kind()
		switch env.paramsKind {
		case '{':
			m.Params = bytes.Clone(val)
			return md.readParamsFields(m, m.Params)
		case '[':
			m.Params = bytes.Clone(val)
		}
	case "result":
		env.result = true
		m.Result = bytes.Clone(val)
	case "error":
		env.errorMember = true
		*errRaw = bytes.Clone(val)
	}
	return true
}

// readParamsFields picks _meta, name, uri, taskId and arguments out of a params object already
// known to be valid. What it keeps points into params: nothing is copied.
func (md *msgDecoder) readParamsFields(m *Message, params []byte) bool {
	md.pbuf = *bytes.NewBuffer(params)
	d := &md.pdec
	d.Reset(&md.pbuf, validatedJSON...)
	defer func() {
		md.pbuf = bytes.Buffer{}
		d.Reset(&md.pbuf)
	}()
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	for d.PeekKind() == '"' {
		raw, err := d.ReadValue()
		if err != nil {
			return false
		}
		name, retry := paramName(raw)
		m.retry = m.retry || retry
		var done bool
		switch name {
		case "_meta":
			done, err = readMeta(d, m)
		case "name", "uri", "taskId":
			done, err = readTarget(d, m, name)
		case "arguments":
			var v jsontext.Value
			v, err = d.ReadValue()
			m.arguments, done = v, true
		}
		if err != nil {
			return false
		}
		if !done && d.SkipValue() != nil {
			return false
		}
	}
	return true
}

// paramName returns the name of a params member when it is one readParamsFields keeps ("" for
// the others), and whether it marks a retry of an input_required result.
func paramName(raw jsontext.Value) (name string, retry bool) {
	switch string(raw) {
	case `"_meta"`:
		return "_meta", false
	case `"name"`:
		return "name", false
	case `"uri"`:
		return "uri", false
	case `"taskId"`:
		return "taskId", false
	case `"arguments"`:
		return "arguments", false
	case `"inputResponses"`, `"requestState"`:
		return "", true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return "", false
	}
	// An escaped spelling of a name is the same name: read it the way every other decoder in
	// the process will.
	u, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return "", false
	}
	switch name := string(u); name {
	case "inputResponses", "requestState":
		return "", true
	case "_meta", "name", "uri", "taskId", "arguments":
		return name, false
	}
	return "", false
}

// readMeta reads the members of params._meta when it is an object; done is false when the
// value was left unread (it is not an object).
func readMeta(d *jsontext.Decoder, m *Message) (done bool, err error) {
	if d.PeekKind() != '{' {
		return false, nil
	}
	if _, err := d.ReadToken(); err != nil {
		return false, err
	}
	m.Meta = make(map[string]json.RawMessage, 2)
	for d.PeekKind() == '"' {
		k, err := d.ReadValue()
		if err != nil {
			return false, err
		}
		key, ok := metaKey(k)
		if !ok {
			return false, errParse
		}
		v, err := d.ReadValue()
		if err != nil {
			return false, err
		}
		m.Meta[key] = json.RawMessage(v)
	}
	_, err = d.ReadToken()
	return true, err
}

// knownMetaKeys are the _meta keys requests usually carry: they are not allocated again per
// request.
var knownMetaKeys = [...]string{"progressToken", MetaProtocolVersion, MetaClientCapabilities,
	MetaClientInfo, MetaLogLevel, MetaSubscriptionID, MetaServerInfo}

// metaKey returns the text of a quoted _meta key, shared for the well-known ones.
func metaKey(raw jsontext.Value) (string, bool) {
	inner := raw[1 : len(raw)-1]
	for _, k := range knownMetaKeys {
		if string(inner) == k {
			return k, true
		}
	}
	return unquoteString(raw)
}

// readTarget reads params.name, uri or taskId when it is a string; done is false when the value
// was left unread.
func readTarget(d *jsontext.Decoder, m *Message, name string) (done bool, err error) {
	if d.PeekKind() != '"' {
		return false, nil
	}
	v, err := d.ReadValue()
	if err != nil {
		return false, err
	}
	s, ok := unquoteString(v)
	if !ok {
		return false, errParse
	}
	switch name {
	case "name":
		m.Name, m.nameString = s, true
	case "uri":
		m.URI = s
	default:
		m.TaskID = s
	}
	return true, nil
}

// knownMethods holds the name of every method and notification the kit serves (the request
// methods are added with builtinMethods), so that decoding one does not allocate its name again.
var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/roots/list_changed", "notifications/message", "elicitation/create",
		"sampling/createMessage", "roots/list"} {
		m[name] = name
	}
	return m
}()

// methodName decodes a method name, shared for the names the kit knows.
func methodName(v jsontext.Value) (string, bool) {
	if name, ok := knownMethods[string(v[1:len(v)-1])]; ok {
		return name, true
	}
	return unquoteString(v)
}

// unquoteString decodes a JSON string value; it allocates only the result.
func unquoteString(v jsontext.Value) (string, bool) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return string(b), err == nil
}

// check applies the JSON-RPC framing rules, in the order the errors are reported.
func (env *envelope) check(m *Message, errRaw jsontext.Value) (*Message, *DecodeError) {
	if env.id && !env.idOK {
		return nil, &DecodeError{Err: errBadID}
	}
	notification := env.methodString && !m.ID.IsValid()
	if !env.version || !env.versionOK {
		return nil, &DecodeError{ID: m.ID, Err: errVersion, Notification: notification}
	}
	if !env.method {
		return env.checkResponse(m, errRaw)
	}
	if !env.methodOK {
		return nil, &DecodeError{ID: m.ID, Err: errBadMethod, Notification: notification}
	}
	if env.params {
		switch env.paramsKind {
		case '{', '[':
		case 'n': // null params are absent params
		default:
			return nil, &DecodeError{ID: m.ID, Err: errBadParams, Notification: notification}
		}
	}
	m.Result = nil
	return m, nil
}

// checkResponse accepts a client's response: exactly one of result and error, and an id (an
// error response may have a null id: the client could not read our request).
func (env *envelope) checkResponse(m *Message, errRaw jsontext.Value) (*Message, *DecodeError) {
	m.Params = nil
	switch {
	case !env.result && !env.errorMember:
		return nil, &DecodeError{ID: m.ID, Err: errBadMethod}
	case env.result && env.errorMember, env.result && !m.ID.IsValid():
		return nil, &DecodeError{ID: m.ID, Err: errBadResponse}
	case env.result:
		return m, nil
	}
	var raw struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if errRaw.Kind() != '{' || jsonv2.Unmarshal(errRaw, &raw) != nil {
		return nil, &DecodeError{ID: m.ID, Err: errBadResponse}
	}
	m.Error = &Error{Code: raw.Code, Message: raw.Message}
	if raw.Data != nil {
		m.Error.Data = raw.Data
	}
	return m, nil
}

// DecodeBatch splits a JSON array body into its elements, each decoded like DecodeMessage. The
// result holds, per element, either a message or a decode error. A body that is not valid JSON
// is a parse error, one that is not an array is "Request must be an array or a hash", and an
// empty array is "Request is an empty array". A non-nil error is always a *DecodeError.
func DecodeBatch(data []byte) ([]BatchItem, error) {
	items, derr := decodeBatch(data)
	if derr != nil {
		return nil, derr
	}
	return items, nil
}

func decodeBatch(data []byte) ([]BatchItem, *DecodeError) {
	switch jsonbody.Kind(data) {
	case jsonbody.Invalid:
		return nil, &DecodeError{Err: errParse}
	case jsonbody.Object:
		msg, derr := decodeObject(data)
		return []BatchItem{{Msg: msg, Err: derr}}, nil
	case jsonbody.Other:
		return nil, &DecodeError{Err: errNotObject}
	}
	var elems []jsontext.Value
	if err := jsonv2.Unmarshal(data, &elems); err != nil {
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
	b := make([]byte, 0, 96+len(e.Message)*2)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = id.appendJSON(b)
	b = append(b, `,"error":`...)
	return append(appendError(b, e), '}')
}

// appendError appends e as a JSON-RPC error object. Data that cannot be encoded is left out.
func appendError(b []byte, e *Error) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	switch d := e.Data.(type) {
	case nil:
	case string:
		b = append(b, `,"data":`...)
		b = appendString(b, d)
	default:
		if enc, err := marshal(d); err == nil {
			b = append(b, `,"data":`...)
			b = append(b, enc...)
		}
	}
	return append(b, '}')
}

// appendString appends s as a JSON string; invalid UTF-8 is replaced, never passed through.
func appendString(b []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(b, s) // on error the string is still written, with U+FFFD
	return out
}

// EncodeNotification encodes a notification with the given params (nil for none).
func EncodeNotification(method string, params any) ([]byte, error) {
	b := make([]byte, 0, 64+len(method))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// EncodeRequest encodes a request with the given id and params (nil for none).
func EncodeRequest(id ID, method string, params any) ([]byte, error) {
	b := make([]byte, 0, 80+len(method))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = id.appendJSON(b)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

func appendParams(b []byte, params any) ([]byte, error) {
	if params != nil {
		p, err := marshal(params)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"params":`...)
		b = append(b, p...)
	}
	return append(b, '}'), nil
}
