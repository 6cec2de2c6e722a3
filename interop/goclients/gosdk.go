package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runGoSDK drives the fixture with the go-sdk client.
func runGoSDK(ctx context.Context, c *checker, modern bool, transport string, target []string) {
	progress := make(chan float64, 16)
	logs := make(chan string, 16)
	// One channel per list; the handlers never block (a poll may trigger more than it reads).
	changed := map[string]chan struct{}{"tools": make(chan struct{}, 1), "prompts": make(chan struct{}, 1), "resources": make(chan struct{}, 1)}
	note := func(list string) {
		select {
		case changed[list] <- struct{}{}:
		default:
		}
	}
	updated := make(chan string, 4)
	var sampled atomic.Bool
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params.Progress
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			logs <- fmt.Sprint(r.Params.Data)
		},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note("tools") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note("prompts") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note("resources") },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled.Store(true)
			return &mcp.CreateMessageResult{Model: "interop", Role: "assistant", Content: &mcp.TextContent{Text: "sampled by go-sdk"}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: formAnswer(r.Params.RequestedSchema)}, nil
		},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop-gosdk", Version: "1.0.0"}, opts)
	client.AddRoots(&mcp.Root{URI: firstRoot, Name: "first"})
	var tr mcp.Transport
	if transport == "http" {
		tr = &mcp.StreamableClientTransport{Endpoint: target[0]}
	} else {
		tr = &mcp.CommandTransport{Command: exec.Command(target[0], target[1:]...)}
	}
	so := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	if modern {
		so.ProtocolVersion = "2026-07-28"
	}
	var cs *mcp.ClientSession
	c.check("connect", func() (err error) {
		cs, err = client.Connect(ctx, tr, so)
		return err
	})
	if cs == nil {
		return
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, ct := range r.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
		return b.String()
	}

	c.check("tools/list", func() error {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range res.Tools {
			if t.Name == "interop_slow" {
				return nil
			}
		}
		return errors.New("interop_slow is not listed")
	})
	c.check("tools/call content types", func() error {
		for name, want := range map[string]string{"test_simple_text": "text", "test_image_content": "image",
			"test_audio_content": "audio", "test_embedded_resource": "resource"} {
			res, err := call(name, nil)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if len(res.Content) == 0 {
				return fmt.Errorf("%s: no content", name)
			}
			var got string
			switch res.Content[0].(type) {
			case *mcp.TextContent:
				got = "text"
			case *mcp.ImageContent:
				got = "image"
			case *mcp.AudioContent:
				got = "audio"
			case *mcp.EmbeddedResource:
				got = "resource"
			}
			if got != want {
				return fmt.Errorf("%s: content %T, want %s", name, res.Content[0], want)
			}
		}
		return nil
	})
	c.check("tool error is isError", func() error {
		res, err := call("test_error_handling", nil)
		if err != nil {
			return err
		}
		if !res.IsError {
			return errors.New("isError is false")
		}
		return nil
	})
	c.check("x-mcp-header arguments", func() error {
		res, err := call("test_custom_headers", map[string]any{"region": "eu-west", "priority": 3, "dryRun": true})
		if err != nil {
			return err
		}
		if res.IsError || !strings.Contains(text(res)+fmt.Sprint(res.StructuredContent), "eu-west") {
			return fmt.Errorf("answer %q", text(res))
		}
		return nil
	})
	c.check("resources", func() error {
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			return err
		}
		if len(list.Resources) == 0 {
			return errors.New("no resources")
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
		if err != nil {
			return err
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "static text") {
			return fmt.Errorf("contents %+v", res.Contents)
		}
		return nil
	})
	c.check("prompts", func() error {
		if _, err := cs.ListPrompts(ctx, nil); err != nil {
			return err
		}
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
		if err != nil {
			return err
		}
		if len(res.Messages) == 0 {
			return errors.New("no messages")
		}
		return nil
	})
	c.check("completion", func() error {
		res, err := cs.Complete(ctx, &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
			Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "val"},
		})
		if err != nil {
			return err
		}
		if len(res.Completion.Values) != 3 {
			return fmt.Errorf("values %v", res.Completion.Values)
		}
		return nil
	})
	c.check("progress", func() error {
		p := &mcp.CallToolParams{Name: "test_tool_with_progress"}
		p.SetProgressToken("interop-progress")
		if _, err := cs.CallTool(ctx, p); err != nil {
			return err
		}
		_, err := within(progress, "progress notification")
		return err
	})
	c.check(logCheck(modern), func() error {
		p := &mcp.CallToolParams{Name: "test_tool_with_logging"}
		if modern {
			// go-sdk v1.8.0 has no client setting for the 2026-07-28 per-request log level (its
			// SetLoggingLevel sends logging/setLevel, which that lifecycle no longer has): set
			// the _meta key by hand.
			p.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": "debug"}
		} else if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			return err
		}
		if _, err := cs.CallTool(ctx, p); err != nil {
			return err
		}
		_, err := within(logs, "log message")
		return err
	})
	if !modern {
		// Sampling is a server-to-client request of the legacy lifecycle.
		c.check("sampling (server-to-client request)", func() error {
			res, err := call("test_sampling", map[string]any{"prompt": "hi"})
			if err != nil {
				return err
			}
			if !sampled.Load() || !strings.Contains(text(res), "sampled by go-sdk") {
				return fmt.Errorf("answer %q", text(res))
			}
			return nil
		})
	}
	callText := textCallerOf(call, text)
	inputRequiredChecks(c, callText, func(name string) (string, error) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		if err != nil {
			return "", err
		}
		for _, m := range res.Messages {
			if t, ok := m.Content.(*mcp.TextContent); ok {
				return t.Text, nil
			}
		}
		return "", fmt.Errorf("no text message in %+v", res.Messages)
	}, "sampled by go-sdk", 1)
	if !modern {
		legacyRequestChecks(c, callText, func() error {
			client.AddRoots(&mcp.Root{URI: secondRoot, Name: "second"}) // sends notifications/roots/list_changed
			return nil
		})
	}
	c.check("resource subscription", func() error {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
			return err
		}
		// On 2026-07-28 Subscribe opens a listen stream in the background: trigger until the
		// update arrives (the first trigger may come before the stream is acknowledged).
		return poll("notifications/resources/updated", func() (bool, error) {
			if _, err := call("interop_trigger_resource_updated", nil); err != nil {
				return false, err
			}
			select {
			case uri := <-updated:
				return uri == "test://watched-resource", nil
			case <-timeAfter():
				return false, nil
			}
		})
	})
	// On 2026-07-28 go-sdk opens a subscriptions/listen stream for the lists it has handlers for.
	listChangedCheck(c, callText, func(list string) bool {
		select {
		case <-changed[list]:
			return true
		case <-timeAfter():
			return false
		}
	})
	c.check("cancellation seen by the server", func() error {
		cctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "interop_slow", Arguments: map[string]any{"seconds": 60}})
			done <- err
		}()
		if err := poll("interop_slow to start", func() (bool, error) {
			res, err := call("interop_last_cancellation", nil)
			return err == nil && text(res) == "running", err
		}); err != nil {
			stop()
			return err
		}
		stop()
		if _, err := within(done, "end of the cancelled call"); err != nil {
			return err
		}
		return poll("the server to see the cancellation", func() (bool, error) {
			res, err := call("interop_last_cancellation", nil)
			if err != nil {
				return false, err
			}
			switch t := text(res); {
			case t == "cancelled by the client":
				return true, nil
			case modern && transport == "http" && strings.HasPrefix(t, "ended: "):
				// go-sdk quirk on 2026-07-28 over HTTP: it cancels by closing the request's
				// stream instead of sending notifications/cancelled; the server sees the
				// stream close as the cancellation.
				return true, nil
			case t == "running":
				return false, nil
			}
			return false, fmt.Errorf("the slow call ended as %q", text(res))
		})
	})
	c.check("close", func() error { return cs.Close() })
}
