package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/stdio"
)

// fuzzServer is a server with a tool that answers, one that reports progress and logs, and a
// resource, so fuzzed frames reach real handlers.
func fuzzServer() *core.Server {
	nop := zerolog.Nop()
	s := core.NewServer(core.Implementation{Name: "fuzz", Version: "1"}, core.Options{Logger: &nop, SubscribeHandler: core.AcceptSubscription})
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&core.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult(string(req.Arguments)), nil
	})
	s.AddTool(&core.Tool{Name: "chatty", InputSchema: obj}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_ = req.Progress(1, 2, "half")
		_, _ = req.Log(core.LevelInfo, "fuzz", "hello")
		return core.TextResult("done"), nil
	})
	s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "r"}}}, nil
	})
	return s
}

// syncWriter is an output safe for the concurrent writes of Serve's answers.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// FuzzServe feeds arbitrary input to stdio.Serve over an in-memory pipe: Serve must return once
// the input ends (no hang, no panic), and everything it wrote must be whole JSON-RPC frames, one
// per line.
func FuzzServe(f *testing.F) {
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	for _, s := range []string{
		"",
		"\n\n",
		init,
		init + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}` + "\n",
		init + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty","_meta":{"progressToken":"p"}}}` + "\n",
		init + `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"x"}]` + "\n",
		init + `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r"}}` + "\n",
		init + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}` + "\n",
		init + `{"jsonrpc":"2.0","id":9,"result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"f","version":"1"}}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"server/discover"}` + "\n",
		"not json\n{\"jsonrpc\":\"2.0\",\"id\":1}\n[]\n[1]\nnull\n",
		strings.Repeat("[", 100) + "\n",
		init + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, // no final newline
	} {
		f.Add([]byte(s))
	}
	srv := fuzzServer()
	f.Fuzz(func(t *testing.T, input []byte) {
		pr, pw := io.Pipe()
		out := &syncWriter{}
		done := make(chan error, 1)
		go func() {
			done <- stdio.Serve(context.Background(), srv, stdio.Options{In: pr, Out: out, MaxLineBytes: 64 << 10})
		}()
		go func() {
			_, _ = pw.Write(input)
			_ = pw.Close()
		}()
		select {
		case <-done:
		case <-time.After(failsafe):
			_ = pr.Close()
			t.Fatalf("Serve did not return after the input ended (input %q)", input)
		}
		out.mu.Lock()
		written := out.buf.Bytes()
		out.mu.Unlock()
		sc := bufio.NewScanner(bytes.NewReader(written))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("output frame %q is not JSON (input %q)", sc.Bytes(), input)
			}
			switch v.(type) {
			case map[string]any, []any:
			default:
				t.Fatalf("output frame %q is not a message or a batch", sc.Bytes())
			}
		}
		if len(written) > 0 && written[len(written)-1] != '\n' {
			t.Fatalf("output does not end with a newline: %q", written)
		}
	})
}
