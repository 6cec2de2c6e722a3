package redisstore_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
)

// Two replicas share their legacy sessions on one Redis: a session initialized on the first is
// served by the second, as behind a round-robin load balancer. Each replica (a process of its
// own in production) has its own client and router on the same Redis and key prefix.
func Example() {
	url := exampleRedis().URL() // in production: "redis://redis.internal:6379/0"
	replica := func() (*httptest.Server, func()) {
		rdb, err := redisstore.NewClient(url)
		if err != nil {
			log.Fatal(err)
		}
		router := redisstore.NewRouter(rdb, redisstore.Options{Prefix: "example:"})
		s := core.NewServer(core.Implementation{Name: "replicated", Version: "1.0.0"}, core.Options{
			Broadcaster: redisstore.NewBroadcaster(router),
		})
		s.AddTool(&core.Tool{Name: "greet"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("Hello from any replica!"), nil
		})
		h := mcphttp.New(s, mcphttp.Options{
			Store:        redisstore.NewSessions(router, redisstore.SessionsOptions{}),
			JSONResponse: true,
		})
		srv := httptest.NewServer(h)
		return srv, func() { srv.Close(); _ = h.Close(); _ = router.Close(); _ = rdb.Close() }
	}
	a, stopA := replica()
	defer stopA()
	b, stopB := replica()
	defer stopB()

	post := func(url, sid, body string) (string, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), strings.TrimSpace(string(data))
	}
	sid, _ := post(a.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	post(b.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, answer := post(b.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet"}}`)
	fmt.Println(answer)
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello from any replica!"}],"isError":false}}
}
