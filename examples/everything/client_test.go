package main

import (
	"context"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
)

// TestGoClientInMemory drives the fixture with the kit's Go client over the in-memory transport,
// in both lifecycles: the in-memory leg of the client interop (scripts/client-interop.sh covers
// stdio and HTTP with real processes).
func TestGoClientInMemory(t *testing.T) {
	for _, lc := range []mcpclient.Lifecycle{mcpclient.Legacy, mcpclient.Modern} {
		t.Run(lc.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := mcpclient.Connect(ctx, &mcpclient.InMemoryTransport{Server: newServer()}, mcpclient.Options{
				Lifecycle: lc,
				Sampling: func(ctx context.Context, p *core.CreateMessageParams) (*core.CreateMessageResult, error) {
					return &core.CreateMessageResult{Role: "assistant", Content: core.ContentList{core.Text("Paris")}, Model: "m"}, nil
				},
				Elicitation: func(ctx context.Context, p *core.ElicitParams) (*core.ElicitResult, error) {
					return &core.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice"}}, nil
				},
				Roots: func(ctx context.Context) ([]core.Root, error) { return []core.Root{{URI: "file:///r"}}, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Modern() != (lc == mcpclient.Modern) {
				t.Fatalf("Modern() = %v", c.Modern())
			}
			tools := 0
			for _, err := range c.ListTools(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				tools++
			}
			if tools < 10 {
				t.Errorf("%d tools", tools)
			}
			for tool, want := range map[string]string{
				"test_simple_text":                           "This is a simple text response for testing.",
				"test_input_required_result_sampling":        "Paris",
				"test_input_required_result_elicitation":     "Alice",
				"test_input_required_result_multiple_inputs": "Roots: 1",
			} {
				res, err := c.CallTool(ctx, tool, map[string]any{})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if got := res.Content[0].Text; !strings.Contains(got, want) {
					t.Errorf("%s = %q, want %q in it", tool, got, want)
				}
			}
			progress := 0
			if _, err := c.CallTool(ctx, "test_tool_with_progress", map[string]any{}, mcpclient.WithProgress(func(mcpclient.Progress) { progress++ })); err != nil || progress == 0 {
				t.Errorf("progress: %d notifications, %v", progress, err)
			}
			if _, err := c.GetPrompt(ctx, "test_simple_prompt", nil); err != nil {
				t.Errorf("prompt: %v", err)
			}
		})
	}
}
