package main

import (
	"context"

	"github.com/mcpkit/mcpkit/core"
)

// addModernTools registers the tools the suite calls on the 2026-07-28 wire. They work on the
// session wire too.
func addModernTools(s *core.Server) {
	s.AddTool(&core.Tool{
		Name:        "test_missing_capability",
		Description: "Needs the client's sampling capability: without it the call fails with -32021.",
		InputSchema: noArgs,
	}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if err := req.RequireClientCapability("sampling"); err != nil {
			return nil, err
		}
		return core.TextResult("Success"), nil
	})

	s.AddTool(&core.Tool{
		Name:        "test_streaming_elicitation",
		Description: "Streams a progress notification before its result, and never sends a request to the client.",
		InputSchema: noArgs,
	}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_ = req.Progress(50, 100, "Halfway there")
		return core.TextResult("Streaming complete"), nil
	})

	s.AddTool(&core.Tool{
		Name:        "test_logging_tool",
		Description: "Sends one info log message, which a 2026-07-28 client receives only when its request names a logLevel.",
		InputSchema: noArgs,
	}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_, _ = req.Log(core.LevelInfo, "test_logger", "Logging tool invoked")
		return core.TextResult("Logging evaluated"), nil
	})

	s.AddTool(&core.Tool{
		Name:        "test_trigger_tool_change",
		Description: "Announces that the tool list changed (to legacy sessions and listen streams).",
		InputSchema: noArgs,
	}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		if err := s.NotifyToolsListChanged(ctx); err != nil {
			return nil, err
		}
		return core.TextResult("Mutation triggered"), nil
	})

	s.AddTool(&core.Tool{
		Name:        "test_trigger_prompt_change",
		Description: "Announces that the prompt list changed (to legacy sessions and listen streams).",
		InputSchema: noArgs,
	}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		if err := s.NotifyPromptsListChanged(ctx); err != nil {
			return nil, err
		}
		return core.TextResult("Mutation triggered"), nil
	})
}
