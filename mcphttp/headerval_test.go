package mcphttp_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/mcpkit/mcpkit/internal/headerval"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// TestSharedHeaderValuesStayIntact drives the default stack through every kind of answer that
// sets the header values all responses share (an SSE answer on a session, a JSON one, a
// 2026-07-28 one, a refusal) and checks that nothing on the way wrote into those values: a
// layer that changed one in place would change it for every response of the process.
func TestSharedHeaderValuesStayIntact(t *testing.T) {
	want := map[string][]string{"application/json": headerval.JSON, "text/event-stream": headerval.EventStream,
		"no-cache": headerval.NoCache, "keep-alive": headerval.KeepAlive, "no": headerval.No}
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	for i := range 3 {
		if w := c.Call(t, 10+i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}); w.Error != nil {
			t.Fatalf("tools/call: %+v", w.Error)
		}
		rep := c.PostModern(t, testutil.ModernRequest(20+i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}))
		if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
			t.Fatalf("2026-07-28 tools/call: %d %s", rep.Status, rep.Body)
		}
		if rep := c.Post(t, `{"jsonrpc":`); rep.Status != http.StatusBadRequest || rep.ContentType() != "application/json" {
			t.Fatalf("a broken body: %d %s", rep.Status, rep.Body)
		}
	}
	for text, v := range want {
		if len(v) != 1 || cap(v) != 1 || v[0] != text {
			t.Errorf("the shared value %q is now %q (capacity %d)", text, v, cap(v))
		}
	}
	for n := range headerval.MaxLength + 1 {
		if v := headerval.Length(n); v[0] != strconv.Itoa(n) {
			t.Fatalf("the shared length %d is now %q", n, v)
		}
	}
}
