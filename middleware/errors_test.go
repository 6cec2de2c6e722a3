package middleware

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

func TestWriteError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w http.ResponseWriter)
		code  int
		body  string
	}{
		{"null id", func(w http.ResponseWriter) {
			WriteError(w, 403, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Forbidden: Invalid Host header")
		}, 403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: Invalid Host header"}}`},
		{"string id", func(w http.ResponseWriter) {
			WriteError(w, 404, jsonrpc.StringID("a-1"), jsonrpc.CodeInvalidRequest, "Session not found")
		}, 404, `{"jsonrpc":"2.0","id":"a-1","error":{"code":-32600,"message":"Session not found"}}`},
		{"with data", func(w http.ResponseWriter) {
			WriteErrorData(w, 400, jsonrpc.IntID(3), jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version",
				map[string]any{"supported": []string{"2026-07-28"}})
		}, 400, `{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`},
		{"nil data", func(w http.ResponseWriter) {
			WriteErrorData(w, 500, jsonrpc.ID{}, jsonrpc.CodeInternalError, "Internal server error", nil)
		}, 500, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal server error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tc.write(rec)
			wantError(t, rec.Code, rec.Header(), rec.Body.String(), tc.code, tc.body)
		})
	}
}
