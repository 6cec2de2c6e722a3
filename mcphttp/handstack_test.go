package mcphttp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// The stack of docs/http.md's "Compose your own stack" (handStack, with no auth) is exactly the one
// mcphttp.New composes: both answer a table of requests (refusals of every layer included) with
// the same status, headers that matter and body, the session id aside.
func TestHandStackIsTheDefault(t *testing.T) {
	tl := newTools()
	s := newServer(tl)
	addModernTools(s, tl)
	def := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = def.Close() })
	hand, closeHand := handStack(s, func(next http.Handler) http.Handler { return next })
	t.Cleanup(closeHand)

	type request struct {
		name, method, body string
		session            bool // send the session id initialize returned
		hdr                []string
	}
	modernCall := call(7, "echo", map[string]any{"text": "hi"})
	// Calls that stream: the SSE layers' streams, progress first, then the response.
	legacyProgress := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"progress","arguments":{"steps":2},"_meta":{"progressToken":"p"}}}`
	modernProgress := withMeta(10, "tools/call", map[string]any{"name": "progress", "arguments": map[string]any{"steps": 2}}, map[string]any{"progressToken": "p"})
	modernHdr := func(body string, extra ...string) []string {
		var h []string
		for k, vs := range testutil.ModernHeaders(body) {
			h = append(h, k, vs[0])
		}
		return append(append(h, "Accept", testutil.AcceptBoth), extra...)
	}
	table := []request{
		{"PUT", http.MethodPut, "", false, nil},
		{"PATCH modern", http.MethodPatch, "", false, []string{"MCP-Protocol-Version", "2026-07-28"}},
		{"GET without Accept", http.MethodGet, "", true, nil},
		{"POST not acceptable", http.MethodPost, ping, true, []string{"Accept", "application/json"}},
		{"POST text/plain", http.MethodPost, ping, true, []string{"Accept", testutil.AcceptBoth, "Content-Type", "text/plain"}},
		{"POST parse error", http.MethodPost, `{"jsonrpc":`, true, []string{"Accept", testutil.AcceptBoth}},
		{"POST array", http.MethodPost, `[]`, true, []string{"Accept", testutil.AcceptBoth}},
		{"POST missing session", http.MethodPost, ping, false, []string{"Accept", testutil.AcceptBoth}},
		{"POST unknown session", http.MethodPost, ping, false, []string{"Accept", testutil.AcceptBoth, "Mcp-Session-Id", "nope"}},
		{"POST empty version", http.MethodPost, ping, true, []string{"Accept", testutil.AcceptBoth, "MCP-Protocol-Version", ""}},
		{"POST envelope on legacy", http.MethodPost, modernCall, true, []string{"Accept", testutil.AcceptBoth, "MCP-Protocol-Version", "2025-11-25"}},
		{"POST ping", http.MethodPost, ping, true, []string{"Accept", testutil.AcceptBoth}},
		{"POST tools/call", http.MethodPost, testutil.CallTool(3, "echo", map[string]any{"text": "x"}, nil), true, []string{"Accept", testutil.AcceptBoth}},
		{"POST tools/call with progress", http.MethodPost, legacyProgress, true, []string{"Accept", testutil.AcceptBoth}},
		{"GET empty version", http.MethodGet, "", true, []string{"Accept", "text/event-stream", "MCP-Protocol-Version", ""}},
		{"DELETE unknown", http.MethodDelete, "", false, []string{"Mcp-Session-Id", "nope"}},
		{"modern tools/call", http.MethodPost, modernCall, false, modernHdr(modernCall)},
		{"modern tools/call with progress", http.MethodPost, modernProgress, false, modernHdr(modernProgress)},
		{"modern not acceptable", http.MethodPost, modernCall, false, modernHdr(modernCall, "Accept", "application/json")},
		{"modern Mcp-Method missing", http.MethodPost, modernCall, false, []string{"Accept", testutil.AcceptBoth, "MCP-Protocol-Version", "2026-07-28"}},
		{"modern name mismatch", http.MethodPost, modernCall, false, modernHdr(modernCall, "Mcp-Name", "other")},
		{"modern unknown version", http.MethodPost, modernCall, false, modernHdr(modernCall, "MCP-Protocol-Version", "1900-01-01")},
		{"modern unknown method", http.MethodPost, withMeta(8, "nope/nope", nil, nil), false, modernHdr(withMeta(8, "nope/nope", nil, nil))},
		{"DELETE", http.MethodDelete, "", true, nil},
		{"POST after DELETE", http.MethodPost, ping, true, []string{"Accept", testutil.AcceptBoth}},
	}
	answers := func(h http.Handler) []string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c := testutil.NewClient(srv.URL, srv.Client())
		c.Initialize(t)
		sid := c.SessionID
		var out []string
		for _, tc := range table {
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			} else {
				body = strings.NewReader("")
			}
			req, err := http.NewRequestWithContext(context.Background(), tc.method, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.session {
				req.Header.Set("Mcp-Session-Id", sid)
			}
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			rep := c.Do(t, req)
			b := bytes.ReplaceAll(rep.Body, []byte(sid), []byte("<sid>"))
			out = append(out, tc.name+": "+http.StatusText(rep.Status)+" "+rep.Header.Get("Allow")+" "+rep.ContentType()+" "+string(b))
		}
		return out
	}
	want, got := answers(def), answers(hand)
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("default: %s\nhand:    %s", want[i], got[i])
		}
	}
	// The table reaches every layer's refusals, not only successes, and the streams of both SSE
	// layers.
	for _, needle := range []string{"text/event-stream", `"method":"notifications/progress"`, "Method Not Allowed", "Not Acceptable", "Unsupported Media Type", "-32700", "Missing session ID",
		"Session not found", "Unsupported protocol version", "-32020", "-32022", "-32601"} {
		if !strings.Contains(strings.Join(want, "\n"), needle) {
			t.Errorf("no answer of the table carries %q", needle)
		}
	}
}
