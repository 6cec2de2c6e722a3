package jsonrpc

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/corehook"
)

// kit is the codec as core and the kit's transports drive it: the decoder, the encoders and what
// core reads of a decoded message besides its exported fields. internal/wire declares these
// methods as its API interface and documents them; kit reaches them to the kit through
// internal/corehook, so that they are not part of this package's exported surface.
type kit struct{}

func init() { corehook.JSONRPC = kit{} }

func (kit) DecodeMessage(data []byte) (*Message, *DecodeError)  { return decodeMessage(data) }
func (kit) DecodeOwned(data []byte) (*Message, *DecodeError)    { return decodeOwned(data) }
func (kit) DecodeBatch(data []byte) ([]BatchItem, *DecodeError) { return decodeBatch(data) }
func (kit) EncodeResponse(id ID, result []byte) []byte          { return encodeResponse(id, result) }
func (kit) EncodeError(id ID, e *Error) []byte                  { return encodeError(id, e) }
func (kit) EncodeMessage(m *Message) []byte                     { return encodeMessage(m) }
func (kit) AppendID(b []byte, id ID) []byte                     { return id.appendJSON(b) }
func (kit) IDKey(id ID) ID                                      { return id.key() }
func (kit) ParseID(raw []byte) (ID, bool)                       { return parseID(raw) }
func (kit) Retry(m *Message) bool                               { return m.retry }
func (kit) Arguments(m *Message) (jsontext.Value, bool)         { return m.arguments, m.nameString }
func (kit) Unavailable(e *Error) bool                           { return e != nil && e.unavailable }
func (kit) MarkUnavailable(e *Error) *Error                     { e.unavailable = true; return e }
func (kit) TypedError(code int64, detail string) *Error         { return typedError(code, detail) }
func (kit) KnownMetaKeys(keys ...string)                        { knownMetaKeys = append(knownMetaKeys, keys...) }

func (kit) EncodeNotification(method string, params any) ([]byte, error) {
	return encodeNotification(method, params)
}

func (kit) EncodeRequest(id ID, method string, params any) ([]byte, error) {
	return encodeRequest(id, method, params)
}

func (kit) KnownMethods(names ...string) {
	for _, name := range names {
		knownMethods[name] = name
	}
}

func (kit) KnownMethod(name string) (string, bool) {
	known, ok := knownMethods[name]
	return known, ok
}
