package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/core"
)

// Payloads the suite looks for: a 1x1 PNG and a tiny WAV file, both base64.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// noArgs is the input schema of a tool that takes no arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// stepDelay is the pause between the notifications of the logging and progress tools.
const stepDelay = 50 * time.Millisecond

// reconnectionDelay is how long test_reconnection works after closing its stream.
const reconnectionDelay = 100 * time.Millisecond

// jsonSchema202012 is the input schema of json_schema_2020_12_tool, kept exactly as the suite
// expects to read it back from tools/list: $schema, $defs with an $anchor, a $ref,
// allOf/anyOf, if/then/else and additionalProperties.
const jsonSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},` +
	`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

// simpleTool registers a tool without arguments that always returns the same content.
func simpleTool(s *core.Server, name, description string, content ...core.Content) {
	s.AddTool(&core.Tool{Name: name, Description: description, InputSchema: noArgs},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return &core.CallToolResult{Content: slices.Clone(content)}, nil
		})
}

// addTools registers the tools of the fixture, test_simple_text first.
func addTools(s *core.Server) {
	simpleTool(s, "test_simple_text", "Returns a simple text content block.",
		core.Text("This is a simple text response for testing."))
	simpleTool(s, "test_image_content", "Returns an image content block (a 1x1 PNG).",
		core.Image(pngBase64, "image/png"))
	simpleTool(s, "test_audio_content", "Returns an audio content block (a short WAV).",
		core.Audio(wavBase64, "audio/wav"))
	simpleTool(s, "test_embedded_resource", "Returns an embedded text resource.",
		core.Embedded(core.ResourceContents{
			URI:      "test://embedded-resource",
			MimeType: "text/plain",
			Text:     "This is an embedded resource content.",
		}))
	simpleTool(s, "test_multiple_content_types", "Returns text, image and embedded resource content together.",
		core.Text("Multiple content types test:"),
		core.Image(pngBase64, "image/png"),
		core.Embedded(core.ResourceContents{
			URI:      "test://mixed-content-resource",
			MimeType: "application/json",
			Text:     `{"test":"data","value":123}`,
		}))

	s.AddTool(&core.Tool{
		Name:        "test_tool_with_logging",
		Description: "Sends three log messages while it runs.",
		InputSchema: noArgs,
	}, toolWithLogging)

	s.AddTool(&core.Tool{
		Name:        "test_tool_with_progress",
		Description: "Reports progress three times (0, 50 and 100 of 100) and returns the progress token.",
		InputSchema: noArgs,
	}, toolWithProgress)

	s.AddTool(&core.Tool{
		Name:        "test_error_handling",
		Description: "Always fails with a tool-level error result.",
		InputSchema: noArgs,
	}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.ErrorResult("This tool intentionally returns an error for testing"), nil
	})

	addServerToClientTools(s)
	addModernTools(s)
	addInputRequiredTools(s)

	s.AddTool(&core.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		InputSchema: json.RawMessage(jsonSchema202012),
	}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("JSON Schema 2020-12 tool called with: " + string(req.Arguments)), nil
	})

	s.AddTool(&core.Tool{
		Name:        "test_reconnection",
		Description: "Returns a text result; the suite uses it to exercise SSE stream resumption.",
		InputSchema: noArgs,
	}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		// The polling pattern: close the connection of this request's stream (the client
		// reconnects with Last-Event-ID), keep working a little, then answer; the endpoint keeps
		// the answer for the reconnected stream. Where the stream is not resumable (stdio, JSON
		// responses, 2026-07-28 requests) the tool just answers.
		if req.CloseStream() == nil {
			select {
			case <-time.After(reconnectionDelay):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return core.TextResult("Reconnection test completed successfully. If you received this, " +
			"the client properly reconnected after stream closure."), nil
	})

	addCustomHeadersTool(s) // last, after the trivial tools the suite looks for first
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func toolWithLogging(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
	steps := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	for i, msg := range steps {
		if i > 0 {
			if err := pause(ctx, stepDelay); err != nil {
				return nil, err
			}
		}
		// A message that cannot be delivered (no stream to carry it) is not the tool's failure.
		_, _ = req.Log(core.LevelInfo, "test_logger", msg)
	}
	return core.TextResult("Tool with logging executed successfully"), nil
}

func toolWithProgress(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
	const total = 100
	for i, done := range []float64{0, 50, 100} {
		if i > 0 {
			if err := pause(ctx, stepDelay); err != nil {
				return nil, err
			}
		}
		_ = req.Progress(done, total, fmt.Sprintf("Completed step %g of %d", done, total))
	}
	return core.TextResult(tokenText(req.ProgressToken())), nil
}

// tokenText shows a progress token as text: a string token without its quotes, a number as
// sent.
func tokenText(token json.RawMessage) string {
	if len(token) == 0 {
		return "no progress token"
	}
	var s string
	if json.Unmarshal(token, &s) == nil {
		return s
	}
	return string(token)
}
