package tasks_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/coretest"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// BenchmarkTaskCreate: a tools/call that becomes a task (stored in memory, its handler started in
// the background), answered with the task handle.
func BenchmarkTaskCreate(b *testing.B) {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{MaxTasks: -1, MaxTasksPerPrincipal: -1})}})
	s.AddTool(&core.Tool{Name: "quick", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("ok"), nil
		})
	call := []byte(coretest.Request(1, "tools/call", map[string]any{"name": "quick"}, taskCaps))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ss := transport.NewSession(s, transport.SessionOptions{Ephemeral: true})
		msg, err := transport.Core.DecodeMessage(call)
		if err != nil {
			b.Fatal(err)
		}
		resp := transport.Core.Handle(ss, ctx, msg, nil)
		ss.Close()
		if resp == nil || resp.Error != nil {
			b.Fatalf("%v", resp)
		}
	}
}
