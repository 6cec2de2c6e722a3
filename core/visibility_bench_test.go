package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// BenchmarkToolsListFiltered: tools/list of 20 tools behind a server-wide filter that hides
// half of them (the price of a view per caller, against BenchmarkToolsList).
func BenchmarkToolsListFiltered(b *testing.B) {
	odd := func(_ context.Context, v *core.View) bool { return !strings.HasSuffix(v.Name(), "1") }
	benchList(b, listServer(20, core.Options{Visibility: odd}), context.Background(), false)
}

// BenchmarkToolsCallFiltered: BenchmarkToolsCallTyped behind a server-wide filter.
func BenchmarkToolsCallFiltered(b *testing.B) {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{
		Visibility: func(context.Context, *core.View) bool { return true }})
	core.AddTool(s, &core.Tool{Name: "add"}, func(_ context.Context, _ *core.ToolRequest, in addIn) (*core.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	ss := transport.NewSession(s, transport.SessionOptions{Out: transport.SenderFunc(func(context.Context, []byte) error { return nil })})
	defer ss.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(toolsCallBody)
		if derr != nil {
			b.Fatal(derr)
		}
		if resp := transport.Core.Handle(ss, ctx, msg, nil); resp == nil || resp.Error != nil {
			b.Fatalf("unexpected response %+v", resp)
		}
	}
}
