package core

import (
	"encoding/json"
	"errors"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/wire"
)

// codec is core/jsonrpc's codec as core drives it (internal/wire).
var codec = wire.Codec

func init() {
	// The notifications and client methods core reads (the request methods it serves are
	// named with builtinMethods) and the _meta keys requests usually carry: decoding them
	// shares these strings instead of allocating them per message.
	codec.KnownMethods("notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/roots/list_changed", "notifications/message", "elicitation/create",
		"sampling/createMessage", "roots/list")
	codec.KnownMetaKeys("progressToken", metakey.ProtocolVersion, metakey.ClientCapabilities,
		metakey.ClientInfo, metakey.LogLevel, metakey.SubscriptionID, metakey.ServerInfo)
}

func encodeResponse(id jsonrpc.ID, result []byte) []byte { return codec.EncodeResponse(id, result) }
func encodeError(id jsonrpc.ID, e *jsonrpc.Error) []byte { return codec.EncodeError(id, e) }
func idKey(id jsonrpc.ID) jsonrpc.ID                     { return codec.IDKey(id) }

func typedError(code int64, detail string) *jsonrpc.Error { return codec.TypedError(code, detail) }

func encodeNotification(method string, params any) ([]byte, error) {
	return codec.EncodeNotification(method, params)
}

func encodeRequest(id jsonrpc.ID, method string, params any) ([]byte, error) {
	return codec.EncodeRequest(id, method, params)
}

// metaValue returns the raw value of a key of params._meta, or nil. For a message the decoder
// did not produce, it reads params.
func metaValue(m *jsonrpc.Message, key string) json.RawMessage {
	if m.Parsed {
		return m.Meta(key)
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

// asWireError turns any error into the error a client sees: a *jsonrpc.Error passes through, an
// error wrapping ErrUnavailable becomes UnavailableError, anything else becomes -32603 with the
// given detail (never the error's own text).
func asWireError(err error, detail string) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrUnavailable) {
		return UnavailableError("a backend the server needs is unavailable; try again later")
	}
	return jsonrpc.InternalError(detail)
}

// appendString appends s as a JSON string; invalid UTF-8 is replaced, never passed through.
func appendString(b []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(b, s) // on error the string is still written, with U+FFFD
	return out
}
