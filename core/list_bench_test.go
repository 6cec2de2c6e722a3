package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// listServer has n plain tools, each with a hand-written schema.
func listServer(n int, opts core.Options) *core.Server {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, opts)
	for i := range n {
		s.AddTool(&core.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "a tool"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("ok"), nil
		})
	}
	return s
}

var (
	toolsListBody       = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	modernToolsListBody = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
)

// benchList serves tools/list of s on a legacy session (modern false) or an ephemeral
// 2026-07-28 one, and encodes the answer.
func benchList(b *testing.B, s *core.Server, ctx context.Context, modern bool) {
	body := toolsListBody
	var ss *core.Session
	if modern {
		body = modernToolsListBody
	} else {
		ss = transport.NewSession(s, transport.SessionOptions{Out: transport.SenderFunc(func(context.Context, []byte) error { return nil })})
		defer ss.Close()
		init, _ := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
		transport.Core.Handle(ss, ctx, init, nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(body)
		if derr != nil {
			b.Fatal(derr)
		}
		sess := ss
		if modern {
			sess = transport.NewSession(s, transport.SessionOptions{Ephemeral: true, Modern: true})
		}
		resp := transport.Core.Handle(sess, ctx, msg, nil)
		if modern {
			sess.Close()
		}
		if resp == nil || resp.Error != nil {
			b.Fatalf("unexpected response %+v", resp)
		}
		if out := transport.Core.EncodeResponseMessage(resp); len(out) == 0 {
			b.Fatal("empty response")
		}
	}
}

// BenchmarkToolsList: tools/list of 20 tools, no visibility predicate or filter.
func BenchmarkToolsList(b *testing.B) {
	benchList(b, listServer(20, core.Options{}), context.Background(), false)
}

// BenchmarkToolsListModern: the same on the 2026-07-28 lifecycle.
func BenchmarkToolsListModern(b *testing.B) {
	benchList(b, listServer(20, core.Options{}), context.Background(), true)
}
