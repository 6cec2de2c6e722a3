package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/core"
)

// customHeadersSchema is the input schema of test_custom_headers. Three arguments carry the
// x-mcp-header annotation, so a 2026-07-28 client over Streamable HTTP mirrors them into
// Mcp-Param-Region, Mcp-Param-Priority and Mcp-Param-Dry-Run, and the endpoint checks that the
// headers say what the arguments say (400 -32020 otherwise). The first annotated string
// argument, region, is the one the conformance suite's custom-header scenario exercises.
const customHeadersSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","description":"Where to run; mirrored in the Mcp-Param-Region header.","x-mcp-header":"Region"},` +
	`"priority":{"type":"integer","description":"Scheduling priority; mirrored in the Mcp-Param-Priority header.","x-mcp-header":"Priority"},` +
	`"dryRun":{"type":"boolean","description":"Only pretend; mirrored in the Mcp-Param-Dry-Run header.","x-mcp-header":"Dry-Run"},` +
	`"message":{"type":"string","description":"Free text, not mirrored in any header."}},` +
	`"required":["region"]}`

// addCustomHeadersTool registers test_custom_headers, the tool whose arguments are mirrored in
// Mcp-Param-* headers. It answers with the arguments it received.
func addCustomHeadersTool(s *core.Server) {
	s.AddTool(&core.Tool{
		Name:        "test_custom_headers",
		Description: "Echoes its arguments; region, priority and dryRun are mirrored in Mcp-Param-* headers (x-mcp-header).",
		InputSchema: json.RawMessage(customHeadersSchema),
	}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var in struct {
			Region   string `json:"region"`
			Priority *int   `json:"priority"`
			DryRun   *bool  `json:"dryRun"`
			Message  string `json:"message"`
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return core.ErrorResult("invalid arguments: " + err.Error()), nil
		}
		text := fmt.Sprintf("region=%s", in.Region)
		if in.Priority != nil {
			text += fmt.Sprintf(" priority=%d", *in.Priority)
		}
		if in.DryRun != nil {
			text += fmt.Sprintf(" dryRun=%t", *in.DryRun)
		}
		if in.Message != "" {
			text += " message=" + in.Message
		}
		return core.TextResult(text), nil
	})
}
