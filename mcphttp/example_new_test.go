package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// New composes the default stack. Keep the handle: Close (or Shutdown, gracefully) ends its
// sessions and stops the session reaper.
func ExampleNew() {
	s := core.NewServer(core.Implementation{Name: "hello", Version: "1.0.0"}, core.Options{})
	s.AddTool(&core.Tool{Name: "ping"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("pong"), nil
	})
	h := mcphttp.New(s, mcphttp.Options{})
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux) // in production: mcphttp.NewHTTPServer
	defer srv.Close()

	post := func(sessionID, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sessionID != "" {
			req.Header.Set("Mcp-Session-Id", sessionID)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), id != "")

	resp = post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping"}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Print(string(body))
	// Output:
	// 200 application/json true
	// 200 text/event-stream
	// data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"pong"}],"isError":false}}
}
