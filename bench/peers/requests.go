package peers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
	acceptBoth    = "application/json, text/event-stream"
)

// Body returns the tools/call request of workload w.
func Body(w Workload) string {
	if w == Modern {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `",` +
			`"io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}`
	}
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
}

// Headers returns the headers of workload w's tools/call, without a session id.
func Headers(w Workload) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", acceptBoth)
	if w == Modern {
		h.Set("MCP-Protocol-Version", modernVersion)
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", "echo")
	} else {
		h.Set("MCP-Protocol-Version", legacyVersion)
	}
	return h
}

// Open prepares workload w against the endpoint at url and returns the headers every tools/call
// carries: for Session, it initializes a session and adds its id.
func Open(ctx context.Context, c *http.Client, url string, w Workload) (http.Header, error) {
	h := Headers(w)
	if w != Session {
		return h, nil
	}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + legacyVersion +
		`","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`
	resp, err := post(ctx, c, url, Headers(Stateless), init)
	if err != nil {
		return nil, err
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return nil, fmt.Errorf("initialize: no session id (status %d)", resp.StatusCode)
	}
	h.Set("Mcp-Session-Id", sid)
	if _, err := post(ctx, c, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return nil, err
	}
	return h, nil
}

// Check sends one tools/call of workload w with headers h and reports an error unless the echo
// came back; on the Modern workload the result must also say "resultType":"complete", which a
// server that read the call as 2025-11-25 would not.
func Check(ctx context.Context, c *http.Client, url string, w Workload, h http.Header) error {
	resp, err := post(ctx, c, url, h, Body(w))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.body, `"structuredContent":{"text":"hello"}`) {
		return fmt.Errorf("tools/call: status %d: %s", resp.StatusCode, resp.body)
	}
	if w == Modern && !strings.Contains(resp.body, `"resultType":"complete"`) {
		return fmt.Errorf("tools/call: not answered as 2026-07-28: %s", resp.body)
	}
	return nil
}

type response struct {
	*http.Response
	body string
}

func post(ctx context.Context, c *http.Client, url string, h http.Header, body string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header = h.Clone()
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	if resp.StatusCode >= 300 {
		return response{}, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return response{resp, string(b)}, nil
}
