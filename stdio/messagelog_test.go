package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// TestLogMessages: with LogMessages, every message served gets one line on the logger (never on
// the protocol channel), with the method, id, outcome and sizes; without it, none.
func TestLogMessages(t *testing.T) {
	for _, on := range []bool{true, false} {
		var logged testutil.SyncBuffer
		logger := zerolog.New(&logged)
		srv := core.NewServer(core.Implementation{Name: "logged", Version: "1"}, core.Options{Logger: new(zerolog.Nop())})
		core.AddTool(srv, &core.Tool{Name: "fail"}, func(context.Context, *core.ToolRequest, struct{}) (*core.CallToolResult, any, error) {
			return nil, nil, errors.New("no")
		})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- stdio.Serve(context.Background(), srv, stdio.Options{In: inR, Out: outW, Logger: &logger, LogMessages: on})
			_ = outW.Close()
		}()
		lines := bufio.NewScanner(outR)
		send := func(frame string) {
			if _, err := io.WriteString(inW, frame+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		next := func() map[string]any {
			if !lines.Scan() {
				t.Fatalf("no answer: %v", lines.Err())
			}
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("not JSON on stdout: %q", lines.Text())
			}
			return m
		}
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		next()
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"fail","arguments":{}}}`)
		next()
		send(`{"jsonrpc":"2.0","id":3,"method":"no/such"}`)
		next()
		_ = inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if lines.Scan() {
			t.Errorf("stdout has more than the answers: %q", lines.Text())
		}
		text := strings.TrimSpace(logged.String())
		if !on {
			if text != "" {
				t.Errorf("LogMessages off, but the log has %q", text)
			}
			continue
		}
		var got []map[string]any
		for _, l := range strings.Split(text, "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			got = append(got, m)
		}
		if len(got) != 4 {
			t.Fatalf("%d log lines, want 4 (initialize, initialized, tools/call, no/such):\n%s", len(got), text)
		}
		want := []map[string]any{
			{"mcp_method": "initialize", "jsonrpc_id": float64(1), "protocol_version": "2025-11-25", "level": "info"},
			{"mcp_method": "notifications/initialized", "level": "info"},
			{"mcp_method": "tools/call", "jsonrpc_id": "two", "tool_error": true, "level": "info"},
			{"mcp_method": "no/such", "jsonrpc_id": float64(3), "error_code": "-32601", "level": "info"},
		}
		for i, w := range want {
			for k, v := range w {
				if got[i][k] != v {
					t.Errorf("line %d: %s = %v, want %v (%v)", i, k, got[i][k], v, got[i])
				}
			}
			if got[i]["transport"] != "stdio" || got[i]["duration"] == nil || got[i]["message"] != "mcp stdio message" {
				t.Errorf("line %d lacks the common fields: %v", i, got[i])
			}
		}
		if got[2]["bytes_out"].(float64) == 0 {
			t.Errorf("the tool's result size is not logged: %v", got[2])
		}
	}
}
