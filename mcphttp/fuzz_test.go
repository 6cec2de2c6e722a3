package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// FuzzHTTPStack sends requests with a fuzzed method, headers and body through the whole default
// stack in process: nothing may panic, no answer may be a 5xx other than 503 (a cap or a
// shutdown), and every JSON answer must be valid JSON.
func FuzzHTTPStack(f *testing.F) {
	const both = "Content-Type: application/json\nAccept: application/json, text/event-stream\n"
	modern := both + "MCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: echo\n"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"f","version":"1"}}`
	for _, s := range []struct{ method, header, body string }{
		{"POST", both, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`},
		{"POST", modern, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},` + meta + `}}`},
		{"POST", both + "MCP-Protocol-Version: 2026-07-28\nMcp-Method: server/discover\n", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`},
		{"POST", both + "MCP-Protocol-Version: 2026-07-28\nMcp-Method: subscriptions/listen\n", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`},
		{"POST", modern + "Mcp-Name: other\n", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`},
		{"POST", both + "Mcp-Session-Id: a\nMcp-Session-Id: b\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", both + "Origin: evil://127.0.0.1\n", `{}`},
		{"POST", both + "Host: [::1]evil.com\n", `{}`},
		{"POST", "Content-Type: text/plain\n", `{}`},
		{"POST", both, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{"POST", both, strings.Repeat("[", 70)},
		{"POST", both + "MCP-Protocol-Version: 1999-01-01\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"GET", "Accept: text/event-stream\nMcp-Session-Id: nope\n", ""},
		{"GET", "Accept: text/event-stream\nMCP-Protocol-Version: 2026-07-28\n", ""},
		{"DELETE", "Mcp-Session-Id: nope\n", ""},
		{"PUT", both, `{}`},
		{"OPTIONS", "", ""},
	} {
		f.Add(s.method, s.header, []byte(s.body))
	}
	nop := zerolog.Nop()
	s := core.NewServer(core.Implementation{Name: "fuzz", Version: "1"}, core.Options{Logger: &nop, SubscribeHandler: core.AcceptSubscription})
	s.AddTool(&core.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult(string(req.Arguments)), nil
		})
	var panicked atomic.Value
	h := mcphttp.New(s, mcphttp.Options{Logger: &nop, OnPanic: func(_ *http.Request, v any) { panicked.Store(v) }})
	f.Cleanup(func() { _ = h.Close() })
	f.Fuzz(func(t *testing.T, method, header string, body []byte) {
		// A listen stream (or anything else that streams) ends with the request's context.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, "http://127.0.0.1:8080/mcp", bytes.NewReader(body))
		if err != nil {
			return // not a method net/http would hand a handler
		}
		for _, line := range strings.Split(header, "\n") {
			k, v, ok := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || !validToken(k) {
				continue
			}
			if strings.EqualFold(k, "Host") {
				req.Host = v
				continue
			}
			req.Header.Add(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if v := panicked.Load(); v != nil {
			t.Fatalf("panic serving %s %q %q: %v", method, header, body, v)
		}
		if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %q %q answered %d: %s", method, header, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Header().Get("Content-Type") == "application/json" && rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %q %q: a JSON answer that is not JSON: %q", method, header, body, rec.Body.Bytes())
		}
	})
}

// validToken reports whether k can be a header name (an RFC 9110 token).
func validToken(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
