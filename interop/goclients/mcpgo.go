package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcpgoPeer answers the server's requests (legacy) and input requests (2026-07-28) for the
// mcp-go client: sampling, elicitation and roots.
//
// mcp-go quirk (v1.2.1): over legacy HTTP it POSTs its answer to a server's request under the
// context of the call the request belongs to, so when the call's result arrives on the call's
// stream before the 202 to that POST, it logs "failed to send response to server ... context
// canceled" although the server received the answer (the call's result depends on it).
type mcpgoPeer struct {
	mu    sync.Mutex
	roots []mcp.Root
}

func (*mcpgoPeer) CreateMessage(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Model: "interop",
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("sampled by mcp-go")}}, nil
}

func (*mcpgoPeer) Elicit(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: formAnswer(r.Params.RequestedSchema)}}, nil
}

func (p *mcpgoPeer) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &mcp.ListRootsResult{Roots: slices.Clone(p.roots)}, nil
}

func (p *mcpgoPeer) addRoot(uri, name string) {
	p.mu.Lock()
	p.roots = append(p.roots, mcp.Root{URI: uri, Name: name})
	p.mu.Unlock()
}

// runMCPGo drives the fixture with the mcp-go client.
func runMCPGo(ctx context.Context, c *checker, modern bool, wire string, target []string) {
	peer := &mcpgoPeer{}
	peer.addRoot(firstRoot, "first")
	opts := []client.ClientOption{client.WithProtocolVersion("2025-11-25"), client.WithLegacyProtocolOnly()}
	if modern {
		opts = []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20260728)}
	}
	opts = append(opts, client.WithSamplingHandler(peer), client.WithElicitationHandler(peer), client.WithRootsHandler(peer))
	var tr transport.Interface
	var err error
	if wire == "http" {
		var topts []transport.StreamableHTTPCOption
		if !modern {
			// mcp-go opens the legacy GET stream (where resource updates and list changes
			// arrive) only when asked to.
			topts = append(topts, transport.WithContinuousListening())
		}
		tr, err = transport.NewStreamableHTTP(target[0], topts...)
	} else {
		tr = transport.NewStdio(target[0], nil, target[1:]...)
	}
	var cl *client.Client
	if err == nil {
		cl = client.NewClient(tr, opts...)
	}
	notes := make(chan mcp.JSONRPCNotification, 64)
	c.check("connect", func() error {
		if err != nil {
			return err
		}
		if err := cl.Start(ctx); err != nil {
			return err
		}
		cl.OnNotification(func(n mcp.JSONRPCNotification) {
			select {
			case notes <- n:
			default:
			}
		})
		req := mcp.InitializeRequest{}
		req.Params.ClientInfo = mcp.Implementation{Name: "mcpkit-interop-mcpgo", Version: "1.0.0"}
		_, err := cl.Initialize(ctx, req)
		return err
	})
	if err != nil {
		return
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		return cl.CallTool(ctx, req)
	}
	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, ct := range r.Content {
			if t, ok := ct.(mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
		return b.String()
	}
	// waitNote waits for a notification of the method, dropping others.
	waitNote := func(method string) (mcp.JSONRPCNotification, bool) {
		for {
			select {
			case n := <-notes:
				if n.Method == method {
					return n, true
				}
			case <-timeAfter():
				return mcp.JSONRPCNotification{}, false
			}
		}
	}

	c.check("tools/list", func() error {
		res, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
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
			case mcp.TextContent:
				got = "text"
			case mcp.ImageContent:
				got = "image"
			case mcp.AudioContent:
				got = "audio"
			case mcp.EmbeddedResource:
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
		if _, err := cl.ListResources(ctx, mcp.ListResourcesRequest{}); err != nil {
			return err
		}
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "test://static-text"
		res, err := cl.ReadResource(ctx, req)
		if err != nil {
			return err
		}
		if len(res.Contents) != 1 {
			return fmt.Errorf("contents %+v", res.Contents)
		}
		return nil
	})
	c.check("prompts", func() error {
		if _, err := cl.ListPrompts(ctx, mcp.ListPromptsRequest{}); err != nil {
			return err
		}
		req := mcp.GetPromptRequest{}
		req.Params.Name, req.Params.Arguments = "test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"}
		res, err := cl.GetPrompt(ctx, req)
		if err != nil {
			return err
		}
		if len(res.Messages) == 0 {
			return errors.New("no messages")
		}
		return nil
	})
	c.check("completion", func() error {
		req := mcp.CompleteRequest{}
		req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}
		req.Params.Argument.Name, req.Params.Argument.Value = "arg1", "val"
		res, err := cl.Complete(ctx, req)
		if err != nil {
			return err
		}
		if len(res.Completion.Values) != 3 {
			return fmt.Errorf("values %v", res.Completion.Values)
		}
		return nil
	})
	c.check("progress", func() error {
		req := mcp.CallToolRequest{}
		req.Params.Name = "test_tool_with_progress"
		req.Params.Meta = &mcp.Meta{ProgressToken: "interop-progress"}
		if _, err := cl.CallTool(ctx, req); err != nil {
			return err
		}
		if _, ok := waitNote("notifications/progress"); !ok {
			return errors.New("no progress notification")
		}
		return nil
	})
	callText := textCallerOf(call, text)
	inputRequiredChecks(c, callText, func(name string) (string, error) {
		req := mcp.GetPromptRequest{}
		req.Params.Name = name
		res, err := cl.GetPrompt(ctx, req)
		if err != nil {
			return "", err
		}
		for _, m := range res.Messages {
			if t, ok := m.Content.(mcp.TextContent); ok {
				return t.Text, nil
			}
		}
		return "", fmt.Errorf("no text message in %+v", res.Messages)
	}, "sampled by mcp-go", 1)
	c.check(logCheck(modern), func() error {
		req := mcp.SetLevelRequest{}
		req.Params.Level = mcp.LoggingLevelDebug // on 2026-07-28 mcp-go sends it in each request's _meta
		if err := cl.SetLevel(ctx, req); err != nil {
			return err
		}
		if _, err := call("test_tool_with_logging", nil); err != nil {
			return err
		}
		if _, ok := waitNote("notifications/message"); !ok {
			return errors.New("no log message")
		}
		return nil
	})
	if !modern {
		c.check("sampling (server-to-client request)", func() error {
			got, err := callText("test_sampling", map[string]any{"prompt": "hi"})
			return expect(got, "LLM response: sampled by mcp-go", err)
		})
		legacyRequestChecks(c, callText, func() error {
			peer.addRoot(secondRoot, "second")
			return cl.RootListChanges(ctx)
		})
		c.check("resource subscription", func() error {
			req := mcp.SubscribeRequest{}
			req.Params.URI = "test://watched-resource"
			if err := cl.Subscribe(ctx, req); err != nil {
				return err
			}
			if _, err := call("interop_trigger_resource_updated", nil); err != nil {
				return err
			}
			if _, ok := waitNote("notifications/resources/updated"); !ok {
				return errors.New("no notifications/resources/updated")
			}
			return nil
		})
	} else {
		var stop func()
		c.check("subscriptions/listen", func() error {
			var err error
			stop, err = cl.ListenAsync(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true,
				ResourcesListChanged: true, ResourceSubscriptions: []string{"test://watched-resource"}}, nil)
			if err != nil {
				return err
			}
			return poll("notifications/resources/updated over listen", func() (bool, error) {
				if _, err := call("interop_trigger_resource_updated", nil); err != nil {
					return false, err
				}
				_, ok := waitNote("notifications/resources/updated")
				return ok, nil
			})
		})
		// The list changes arrive on the same listen stream, closed after them.
		if stop != nil {
			defer stop()
		}
	}
	listChangedCheck(c, callText, func(list string) bool {
		_, ok := waitNote("notifications/" + list + "/list_changed")
		return ok
	})
	c.check("cancellation seen by the server", func() error {
		cctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "interop_slow", map[string]any{"seconds": 60}
			_, err := cl.CallTool(cctx, req)
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
		if !modern && wire == "http" {
			// mcp-go quirk: over legacy HTTP it never sends notifications/cancelled (it only
			// drops the request's connection), and the fixture's request streams are
			// resumable, where a dropped connection is not a cancellation. The call goes on.
			res, err := call("interop_last_cancellation", nil)
			if err != nil {
				return err
			}
			if text(res) != "running" {
				return fmt.Errorf("the quirk changed: the slow call ended as %q", text(res))
			}
			fmt.Println("NOTE mcpgo/legacy/http: mcp-go sends no notifications/cancelled over legacy HTTP; the call went on")
			return nil
		}
		return poll("the server to see the cancellation", func() (bool, error) {
			res, err := call("interop_last_cancellation", nil)
			if err != nil {
				return false, err
			}
			switch t := text(res); {
			case t == "cancelled by the client":
				return true, nil
			case modern && wire == "http" && strings.HasPrefix(t, "ended: "):
				return true, nil // the request's stream closed: the 2026-07-28 HTTP way to cancel
			case t == "running":
				return false, nil
			default:
				return false, fmt.Errorf("the slow call ended as %q", t)
			}
		})
	})
	c.check("close", func() error { return cl.Close() })
}
