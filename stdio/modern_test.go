package stdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// envelope is a complete 2026-07-28 _meta with the given protocol version.
func envelope(version string) map[string]any {
	return map[string]any{
		metakey.ProtocolVersion:    version,
		metakey.ClientCapabilities: map[string]any{"roots": map[string]any{}},
		metakey.ClientInfo:         map[string]any{"name": "c", "version": "1"},
	}
}

// frame encodes one request line; meta (when set) goes in params._meta.
func frame(t *testing.T, id any, method string, params map[string]any, meta map[string]any) string {
	t.Helper()
	if meta != nil {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = meta
	}
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// wantErr checks an error frame.
func wantErr(t *testing.T, m msg, id string, code int64, data string) {
	t.Helper()
	if m.Error == nil || string(m.ID) != id || m.Error.Code != code {
		t.Fatalf("want error %d for id %s, got %s", code, id, m.raw)
	}
	if data != "" && string(m.Error.Data) != `"`+data+`"` {
		t.Errorf("data %s, want %q", m.Error.Data, data)
	}
}

// TestEraLockOverStdio: the process is one connection; its first successful era-distinctive
// request decides the lifecycle for good, and a failed one decides nothing.
func TestEraLockOverStdio(t *testing.T) {
	removedInit := "Method not found: initialize is not part of the modern lifecycle (SEP-2575)"
	t.Run("discover then initialize", func(t *testing.T) {
		p := serve(t, addServer(), stdio.Options{})
		p.write(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}` + "\n")
		m := p.next()
		if m.Error != nil || string(m.ID) != "1" {
			t.Fatalf("discover: %s", m.raw)
		}
		testutil.ValidateDef(t, "2026-07-28", "DiscoverResult", m.Result)
		var r struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		jsonv2.Unmarshal(m.Result, &r)
		if string(r.Capabilities["tools"]) != `{"listChanged":true}` {
			t.Errorf("stdio delivers list changes (subscriptions/listen), yet discover offers %s", r.Capabilities["tools"])
		}
		p.write(initFrame)
		wantErr(t, p.next(), "0", -32601, removedInit)
		p.write(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
		wantErr(t, p.next(), "2", -32602, "Invalid params: missing or invalid `io.modelcontextprotocol/protocolVersion`, `io.modelcontextprotocol/clientCapabilities` in `_meta`")
		p.write(frame(t, 3, "tools/list", nil, envelope("2026-07-28")))
		if m := p.next(); m.Error != nil || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
			t.Errorf("modern tools/list: %s", m.raw)
		}
		p.in.Close()
		p.wait()
	})
	t.Run("initialize then a modern request", func(t *testing.T) {
		p := serve(t, addServer(), stdio.Options{})
		p.write(initFrame)
		if m := p.next(); m.Error != nil {
			t.Fatalf("initialize: %s", m.raw)
		}
		p.write(frame(t, 1, "tools/list", nil, envelope("2026-07-28")))
		wantErr(t, p.next(), "1", -32600, "Invalid Request: the session already negotiated the legacy lifecycle via `initialize`")
		p.write(frame(t, 2, "server/discover", nil, envelope("2026-07-28")))
		wantErr(t, p.next(), "2", -32600, "")
		p.write(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n")
		if m := p.next(); m.Error != nil || strings.Contains(string(m.Result), "resultType") {
			t.Errorf("legacy tools/list: %s", m.raw)
		}
		p.in.Close()
		p.wait()
	})
	t.Run("failed modern requests do not lock", func(t *testing.T) {
		p := serve(t, addServer(), stdio.Options{})
		p.write(frame(t, 1, "tools/list", nil, envelope("2027-01-01")))
		m := p.next()
		wantErr(t, m, "1", -32022, "")
		testutil.ValidateDef(t, "2026-07-28", "UnsupportedProtocolVersionError", []byte(m.raw))
		p.write(frame(t, 2, "initialize", testutil.InitializeParams("2025-11-25"), envelope("2026-07-28")))
		wantErr(t, p.next(), "2", -32601, removedInit) // the first frame, claiming modern
		p.write(frame(t, 3, "tools/call", map[string]any{"name": "nope"}, envelope("2026-07-28")))
		wantErr(t, p.next(), "3", -32602, "Tool not found: nope")
		p.write(initFrame)
		if m := p.next(); m.Error != nil || string(m.ID) != "0" {
			t.Fatalf("initialize after failed modern requests: %s", m.raw)
		}
		p.in.Close()
		p.wait()
	})
}

// rootsServer has a tool that asks the client for its roots and reports how the wait ended.
func rootsServer() (*core.Server, chan error) {
	ended := make(chan error, 4)
	srv := newServer()
	srv.AddTool(&core.Tool{Name: "roots"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		res, err := req.ListRoots(ctx)
		ended <- err
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return core.TextResult(strings.Join(uris, ",")), nil
	})
	return srv, ended
}

const rootsInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}` + "\n"

// TestClientRequestOverStdio: a handler's request goes out on stdout; the reader keeps serving
// frames while it waits, and the client's answer on stdin completes it.
func TestClientRequestOverStdio(t *testing.T) {
	srv, ended := rootsServer()
	p := serve(t, srv, stdio.Options{})
	p.write(rootsInit)
	p.next()
	p.write(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots"}}` + "\n")
	req := p.next()
	if req.Method != "roots/list" || req.ID == nil || string(req.ID)[0] != '"' {
		t.Fatalf("want a roots/list request, got %s", req.raw)
	}
	testutil.ValidateDef(t, "2025-11-25", "ListRootsRequest", []byte(req.raw))
	// The reader is not blocked by the waiting handler.
	p.write(`{"jsonrpc":"2.0","id":6,"method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != "6" || string(m.Result) != "{}" {
		t.Fatalf("ping while a request waits: %s", m.raw)
	}
	// An answer to an unknown id is dropped; the real answer completes the call.
	p.write(`{"jsonrpc":"2.0","id":"not-ours","result":{"roots":[]}}` + "\n")
	p.write(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"roots":[{"uri":"file:///w"},{"uri":"file:///v"}]}}` + "\n")
	if err := await(t, ended, "the answer"); err != nil {
		t.Fatal(err)
	}
	if m := p.next(); string(m.ID) != "5" || !strings.Contains(string(m.Result), "file:///w,file:///v") {
		t.Errorf("tools/call: %s", m.raw)
	}
	p.in.Close()
	if err := p.wait(); err != nil {
		t.Error(err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("unexpected frames %v", rest)
	}
}

// TestEOFFailsClientRequestWait: when stdin ends, a handler waiting for the client's answer is
// released at once (not after the 10-minute default timeout) and nothing is sent to the gone
// client but the call's own answer.
func TestEOFFailsClientRequestWait(t *testing.T) {
	srv, ended := rootsServer()
	p := serve(t, srv, stdio.Options{})
	p.write(rootsInit)
	p.next()
	p.write(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots"}}` + "\n")
	if m := p.next(); m.Method != "roots/list" {
		t.Fatalf("want roots/list, got %s", m.raw)
	}
	p.in.Close()
	if err := await(t, ended, "the wait to end"); !errors.Is(err, core.ErrInputEnded) {
		t.Errorf("wait ended with %v, want the end of input", err)
	}
	if err := p.wait(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	rest := p.rest()
	// The tool returned the wait's error: an isError result the model can read.
	if len(rest) != 1 || string(rest[0].ID) != "5" || !strings.Contains(string(rest[0].Result), `"isError":true`) ||
		!strings.Contains(string(rest[0].Result), "input has ended") {
		t.Errorf("frames after EOF: %v", rest)
	}
}

// TestNoClientRequestsOnModernStdio: a 2026-07-28 request cannot make server-to-client
// requests; nothing is written but its answer.
func TestNoClientRequestsOnModernStdio(t *testing.T) {
	srv, ended := rootsServer()
	p := serve(t, srv, stdio.Options{})
	p.write(frame(t, 1, "tools/call", map[string]any{"name": "roots"}, envelope("2026-07-28")))
	if err := await(t, ended, "the refusal"); !errors.Is(err, core.ErrRequestsRefused) {
		t.Errorf("ListRoots on a modern request = %v", err)
	}
	if m := p.next(); string(m.ID) != "1" || m.Error == nil || m.Error.Code != -32603 {
		t.Errorf("answer %s", m.raw)
	}
	p.in.Close()
	p.wait()
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("unexpected frames %v", rest)
	}
}
