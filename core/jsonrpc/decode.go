package jsonrpc

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

func decodeMessage(data []byte) (*Message, *DecodeError) { return decodeWith(data, false) }

// decodeOwned is decodeMessage for data the caller hands over and never modifies (an HTTP body
// read for this message alone): the message's raw members point into data instead of copies.
func decodeOwned(data []byte) (*Message, *DecodeError) { return decodeWith(data, true) }

func decodeWith(data []byte, owned bool) (*Message, *DecodeError) {
	if jsonbody.FirstByte(data) == '{' {
		return decodeObject(data, owned) // nesting checked as it is read
	}
	if !jsonbody.NestingOK(data) {
		return nil, &DecodeError{Err: errParse}
	}
	if !jsontext.Value(data).IsValid() {
		return nil, &DecodeError{Err: invalidJSON(data)}
	}
	return nil, &DecodeError{Err: errNotObject}
}

// msgDecoder is a reusable token reader over one message.
type msgDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
	// meta is where the members of params._meta sit in the message while params is read (their
	// values are pointed into the copy of params by take, once the message is whole).
	meta []metaSpan
	// owned: the message's bytes, data, are the caller's to keep (decodeOwned), the raw members
	// point into them; otherwise they are copies. data is set while a message is read only.
	owned bool
	data  []byte
	// msg is the message while it is read; take moves it to the heap once it is whole, with
	// room for its _meta members.
	msg Message
	// paramsAt is where params starts in the message, once readParams has read it.
	paramsAt int
	// sc reads the usual message in one pass (see scan); scanned is set while it does.
	sc      jsonbody.Scanner
	scanned bool
}

// span is where a value sits in the message: data[off : off+n].
type span struct{ off, n int }

// valueSpan is where the value the decoder just returned (v) sits in the message.
func valueSpan(d *jsontext.Decoder, v jsontext.Value) span {
	end := int(d.InputOffset())
	return span{end - len(v), len(v)}
}

var msgDecoders = sync.Pool{New: func() any { return new(msgDecoder) }}

// envelope is what decodeObject learns while it reads the members of a message. Every member is
// inspected as soon as it is read: the decoder reuses its buffer.
type envelope struct {
	version, id, method, params, result, errorMember bool // which members were present
	versionOK, idOK, methodOK, methodString          bool
	paramsKind                                       jsontext.Kind
}

func decodeObject(data []byte, owned bool) (*Message, *DecodeError) {
	md := msgDecoders.Get().(*msgDecoder)
	m, derr := md.decode(data, owned)
	msgDecoders.Put(md)
	return m, derr
}

// decode reads one message with md: the scanner's single pass when it settles the message (see
// scan; it reads MaxNesting levels at most), the token reader otherwise, once the nesting is
// known to be within MaxNesting (a parse error otherwise).
func (md *msgDecoder) decode(data []byte, owned bool) (*Message, *DecodeError) {
	if m, derr, ok := md.scan(data, owned); ok {
		return m, derr
	}
	if !jsonbody.NestingOK(data) {
		return nil, &DecodeError{Err: errParse}
	}
	return md.decodeTokens(data, owned)
}

// decodeTokens is decode with the token reader alone. The pooled decoder keeps no reference to
// data afterwards: a slice of a larger buffer (a line of a reader's buffer, a small message after
// a large one) must not keep that buffer alive in the pool.
func (md *msgDecoder) decodeTokens(data []byte, owned bool) (*Message, *DecodeError) {
	md.owned, md.data = owned, data
	md.buf = *bytes.NewBuffer(data)
	md.dec.Reset(&md.buf)
	m, derr := md.read(data)
	md.data = nil
	md.buf = bytes.Buffer{}
	md.dec.Reset(&md.buf)
	return m, derr
}

func (md *msgDecoder) read(data []byte) (*Message, *DecodeError) {
	d := &md.dec
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, &DecodeError{Err: errParse}
	}
	m := &md.msg
	defer md.forget()
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
		if string(name) == "params" && d.PeekKind() == '{' {
			// The one params shape worth reading member by member: in the same pass as the
			// rest of the message, not validated first and read again.
			env.params, env.paramsKind = true, '{'
			if err := md.readParams(m, data); err != nil {
				return nil, &DecodeError{Err: parseError(err)}
			}
			continue
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
	return env.check(md.take(), errRaw)
}

// forget drops what md held of the message it read: the pooled decoder must keep nothing alive.
func (md *msgDecoder) forget() {
	md.msg = Message{}
	clear(md.meta)
	md.meta = md.meta[:0]
}

// member takes in one member of the message (params only when it is not an object: readParams
// reads an object); false means the member could not be read.
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
		if env.paramsKind == '[' {
			m.Params = md.keep(val)
		}
	case "result":
		env.result = true
		m.Result = md.keep(val)
	case "error":
		env.errorMember = true
		*errRaw = md.keep(val)
	}
	return true
}

// keep returns the bytes of the value the decoder just returned (v), as the message keeps them:
// a copy, or (owned) where they sit in the message, capped so that an append to them cannot
// write over what follows.
func (md *msgDecoder) keep(v jsontext.Value) []byte {
	switch {
	case !md.owned:
		return bytes.Clone(v)
	case md.scanned:
		return v[:len(v):len(v)] // the scanner's values are where they sit in the message
	}
	sp := valueSpan(&md.dec, v)
	return md.data[sp.off : sp.off+sp.n : sp.off+sp.n]
}

// readParams reads the params object the decoder is at (data is the whole message): it keeps a
// copy of it in m.Params (owned: the bytes where it sits) and picks _meta, name, uri, taskId and arguments out of it as it goes,
// the kept values pointing into the copy. The error is the decoder's (or errParse for a _meta
// key it cannot read).
func (md *msgDecoder) readParams(m *Message, data []byte) error {
	d := &md.dec
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	start := int(d.InputOffset()) - 1 // at the '{' just read
	var args span
	for d.PeekKind() == '"' {
		raw, err := d.ReadValue()
		if err != nil {
			return err
		}
		name, retry := paramName(raw)
		m.retry = m.retry || retry
		var done bool
		switch name {
		case "_meta":
			done, err = md.readMeta(d)
		case "name", "uri", "taskId":
			done, err = readTarget(d, m, name)
		case "arguments":
			var v jsontext.Value
			if v, err = d.ReadValue(); err == nil {
				args, done = valueSpan(d, v), true
			}
		}
		if err != nil {
			return err
		}
		if !done {
			if err := d.SkipValue(); err != nil {
				return err
			}
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	md.keepParams(m, data, start, int(d.InputOffset()), args)
	return nil
}

// keepParams keeps the params object read at data[start:end] in m.Params (owned: the bytes
// where it sits; otherwise a copy), with params.arguments (args) pointing into it.
func (md *msgDecoder) keepParams(m *Message, data []byte, start, end int, args span) {
	if md.owned {
		m.Params = data[start:end:end]
	} else {
		m.Params = bytes.Clone(data[start:end])
	}
	if args.n > 0 {
		off := args.off - start
		m.arguments = jsontext.Value(m.Params[off : off+args.n : off+args.n])
	}
	md.paramsAt = start // take points the _meta members into m.Params
}

// paramName returns the name of a params member when it is one readParams keeps ("" for
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
	if !setTarget(m, name, v) {
		return false, errParse
	}
	return true, nil
}

// setTarget sets params.name, uri or taskId from its JSON string v; false when v cannot be read.
func setTarget(m *Message, name string, v jsontext.Value) bool {
	s, ok := unquoteString(v)
	if !ok {
		return false
	}
	switch name {
	case "name":
		m.Name, m.nameString = s, true
	case "uri":
		m.URI = s
	default:
		m.TaskID = s
	}
	return true
}

// knownMethods holds the name of every method and notification the kit serves (core names them
// when it is initialized), so that decoding one does not allocate its name again.
var knownMethods = map[string]string{}

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

func decodeBatch(data []byte) ([]BatchItem, *DecodeError) {
	switch jsonbody.Kind(data) {
	case jsonbody.Invalid:
		return nil, &DecodeError{Err: invalidJSON(data)}
	case jsonbody.Object:
		msg, derr := decodeObject(data, false)
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
		items[i].Msg, items[i].Err = decodeObject(e, false)
	}
	return items, nil
}

// BatchItem is one element of a decoded batch.
type BatchItem struct {
	Msg *Message
	Err *DecodeError
}

// encodeResponse encodes a success response around an already encoded result.
func encodeResponse(id ID, result []byte) []byte {
	b := make([]byte, 0, len(result)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = id.appendJSON(b)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// encodeError encodes an error response. An absent id encodes as null.
func encodeError(id ID, e *Error) []byte {
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

// encodeNotification encodes a notification with the given params (nil for none).
func encodeNotification(method string, params any) ([]byte, error) {
	b := make([]byte, 0, 64+len(method))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// encodeRequest encodes a request with the given id and params (nil for none).
func encodeRequest(id ID, method string, params any) ([]byte, error) {
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

// encodeMessage returns a decoded message as JSON-RPC again: a response with its result or
// error, or a request or notification with its params as received.
func encodeMessage(m *Message) []byte {
	switch {
	case m.IsResponse() && m.Error != nil:
		return encodeError(m.ID, m.Error)
	case m.IsResponse():
		return encodeResponse(m.ID, m.Result)
	}
	var params any
	if m.Params != nil {
		params = m.Params
	}
	var b []byte
	var err error
	if m.IsRequest() {
		b, err = encodeRequest(m.ID, m.Method, params)
	} else {
		b, err = encodeNotification(m.Method, params)
	}
	if err != nil {
		return nil
	}
	return b
}

// marshal encodes v with map members sorted, as core does: the same value always encodes to
// the same bytes.
func marshal(v any) ([]byte, error) { return jsonv2.Marshal(v, deterministic) }

var deterministic = jsonv2.Deterministic(true)
