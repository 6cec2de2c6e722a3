package middleware

import (
	"net/http"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/headerval"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Wire messages of the transport-level errors the layers answer with. They match the reference
// behaviour word for word, so clients and tests that compare them keep working.
const (
	msgUnsupportedMediaType = "Unsupported Media Type: Content-Type must be application/json"
	msgInvalidJSON          = "Invalid JSON"
	msgNotSingleObject      = "Invalid Request: JSON-RPC body must be a single request object"
	msgForbiddenHost        = "Forbidden: Invalid Host header"
	msgForbiddenOrigin      = "Forbidden: Invalid Origin header"
	msgInternalServerError  = "Internal server error"
	msgAmbiguousFraming     = "Bad Request: both Content-Length and Transfer-Encoding"
)

// WriteError answers the exchange with a JSON-RPC error response and no error data:
// the given HTTP status, Content-Type application/json, and the body
// {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}. The zero id (absent)
// is written as null. Every layer of this package reports its failures through it, and so can an
// endpoint. It must be called before anything else was written to w.
func WriteError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	writeErrorBody(w, status, transport.Core.EncodeError(id, &jsonrpc.Error{Code: code, Message: message}))
}

// WriteErrorData is WriteError with an error data member: data is encoded as JSON under
// "error.data". A nil data omits the member, exactly like WriteError.
func WriteErrorData(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string, data any) {
	writeErrorBody(w, status, transport.Core.EncodeError(id, &jsonrpc.Error{Code: code, Message: message, Data: data}))
}

func writeErrorBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = headerval.JSON
	h["Content-Length"] = headerval.Length(len(body))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// refuse answers a request with a transport-level error and records the JSON-RPC code and
// message in the request's Exchange (when there is one) so an outer tracing layer can report it.
func refuse(w http.ResponseWriter, r *http.Request, status int, id jsonrpc.ID, code int64, message string) {
	if ex := ExchangeFrom(r.Context()); ex != nil {
		ex.SetError(code, message)
	}
	WriteError(w, status, id, code, message)
}
