package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/tasks"
)

// A tool that may run as a task: for a 2026-07-28 client that declares the tasks extension,
// tools/call answers with a task handle and the handler runs in the background; its Elicit
// becomes an input request of the task, answered through tasks/update.
func ExampleNew() {
	s := core.NewServer(core.Implementation{Name: "jobs", Version: "1"}, core.Options{
		Extensions: []core.Extension{tasks.New(tasks.Options{TTL: 30 * time.Minute})},
	})
	type In struct {
		Path string `json:"path"`
	}
	core.AddTool(s, &core.Tool{Name: "reindex", Execution: &core.ToolExecution{TaskSupport: tasks.SupportOptional}},
		func(ctx context.Context, req *core.ToolRequest, in In) (*core.CallToolResult, any, error) {
			ok, err := req.Elicit(ctx, &core.ElicitParams{Message: "Reindex " + in.Path + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"yes":{"type":"boolean"}}}`)})
			if err != nil {
				return nil, nil, err
			}
			if ok.Action != "accept" {
				return core.TextResult("left alone"), nil, nil
			}
			select {
			case <-time.After(time.Minute):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return core.TextResult("reindexed " + in.Path), nil, nil
		})
	fmt.Println(s.Capabilities().Extensions)
	// Output: map[io.modelcontextprotocol/tasks:map[]]
}
