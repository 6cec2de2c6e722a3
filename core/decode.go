package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonbody"
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
			return nil, &DecodeError{Err: invalidJSON(data)}
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
			return nil, &DecodeError{Err: parseError(err)}
		}
		name := []byte(rawName[1 : len(rawName)-1])
		if bytes.IndexByte(name, '\\') >= 0 {
			if name, err = jsontext.AppendUnquote(nameBuf[:0], rawName); err != nil {
				return nil, &DecodeError{Err: errParse}
			}
		}
		val, err := d.ReadValue()
		if err != nil {
			return nil, &DecodeError{Err: parseError(err)}
		}
		if !md.member(m, &env, &errRaw, name, val) {
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
		return nil, &DecodeError{Err: invalidJSON(data)}
	case jsonbody.Object:
		msg, derr := decodeObject(data)
		return []BatchItem{{Msg: msg, Err: derr}}, nil
	case jsonbody.Other:
		return nil, &DecodeError{Err: errNotObject}
	}
	var elems []jsontext.Value
	if err := jsonv2.Unmarshal(data, &elems); err != nil {
		return nil, &DecodeError{Err: parseError(err)}
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

// parseError is the -32700 error of a message the JSON reader refused with err: "Invalid JSON",
// naming the member when a name is repeated, so that the sender can tell what to fix.
func parseError(err error) *Error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) || !errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return errParse
	}
	return typedError(CodeParseError, "Invalid JSON: duplicate member "+strconv.Quote(se.JSONPointer.LastToken())+" at "+string(se.JSONPointer))
}

// invalidJSON is the -32700 error of data, which is not valid JSON: it reads data again to learn
// why (a rare path).
func invalidJSON(data []byte) *Error {
	var v jsontext.Value
	return parseError(jsonv2.Unmarshal(data, &v))
}
