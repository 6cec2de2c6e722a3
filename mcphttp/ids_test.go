package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// oddIDs are string ids outside the old [A-Za-z0-9_-]+ pattern, as JSON text: JSON-RPC 2.0 and
// both schemas allow any string, and each must come back exactly as it was sent.
var oddIDs = []string{
	`""`,
	`"listen:0"`,
	`"a. b/c?d=e&f"`,
	`"zażółć 日本 😀"`,
	`"\u0041\/\"\\"`,
	`"\ud83d\ude00"`,
	`"1"`,
}

// wantEcho checks that the body carries the id member exactly as sent.
func wantEcho(t *testing.T, body []byte, id string) {
	t.Helper()
	if !bytes.Contains(body, []byte(`"id":`+id+`,`)) {
		t.Fatalf("the answer does not echo id %s byte for byte: %s", id, body)
	}
}

// Every string id is served on a legacy session, echoed byte for byte in SSE and JSON answers and
// in errors, and an escaped id is cancelled by its plain spelling.
func TestAnyStringIDLegacy(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts mcphttp.Options
	}{{"sse", mcphttp.Options{}}, {"json", mcphttp.Options{JSONResponse: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newFixture(t, mode.opts)
			c := f.client()
			init := c.Post(t, `{"jsonrpc":"2.0","id":"","method":"initialize","params":`+mustJSON(t, testutil.InitializeParams("2025-11-25"))+`}`)
			wantEcho(t, init.Body, `""`)
			wantResult(t, init.Message(t), `""`)
			c.SessionID = init.Header.Get("Mcp-Session-Id")
			if c.SessionID == "" {
				t.Fatal("initialize with an empty string id made no session")
			}
			c.Post(t, testutil.Notification("notifications/initialized", nil))
			for _, id := range oddIDs {
				rep := c.Post(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
				wantEcho(t, rep.Body, id)
				if got := toolText(t, wantResult(t, rep.Message(t), id)); got != "hi" {
					t.Errorf("id %s: %q", id, got)
				}
				rep = c.Post(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"no-such-tool"}}`)
				wantEcho(t, rep.Body, id)
				if w := rep.Message(t); w.Error == nil || string(w.ID) != id {
					t.Errorf("id %s: unknown tool answered %s", id, rep.Body)
				}
			}

			// A cancel naming the plain spelling reaches the call sent with escapes.
			done := make(chan testutil.Reply, 1)
			go func() {
				done <- c.Post(t, `{"jsonrpc":"2.0","id":"\u0077ait:1","method":"tools/call","params":{"name":"waitctx"}}`)
			}()
			if got := recv(t, f.tools.entered, "the call to start"); got != `"\u0077ait:1"` {
				t.Errorf("the handler sees id %s", got)
			}
			rep := c.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": "wait:1"}))
			wantEmpty(t, rep, http.StatusAccepted)
			if err := recv(t, f.tools.ctxDone, "the call to be cancelled"); err == nil {
				t.Fatal("the call was not cancelled")
			}
			<-done
		})
	}
}

// Every string id is served on 2026-07-28 requests, and a listen stream opened with one (the
// TypeScript SDK v2 uses "listen:0") tags every frame with it exactly as sent.
func TestAnyStringIDModern(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	for _, id := range oddIDs {
		var sent bytes.Buffer // the spelling the request carries: encoding/json escapes & < >
		json.HTMLEscape(&sent, []byte(id))
		id := sent.String()
		rep := f.modern(t, call(json.RawMessage(id), "echo", map[string]any{"text": "hi"}))
		wantEcho(t, rep.Body, id)
		if got := toolText(t, wantResult(t, rep.Message(t), id)); got != "hi" {
			t.Errorf("id %s: %q", id, got)
		}
	}
	for _, id := range []string{`"listen:0"`, `"\u006cisten:1"`, `""`} {
		ls, _ := f.listen(t, json.RawMessage(id), toolsOnly)
		f.server.NotifyToolsListChanged(context.Background())
		wantChange(t, ls.next(t), core.ToolsListChanged, id)
		ls.close()
	}
}
