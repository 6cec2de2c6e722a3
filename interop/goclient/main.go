// Command goclient drives a server with the kit's Go client (package client) and checks what
// comes back: the interop half of `make interop` that tests the client rather than the server.
//
//	goclient -target kit|ts -lifecycle auto|legacy|modern -http URL
//	goclient -target kit|ts -lifecycle auto|legacy|modern -stdio COMMAND [ARGS...]
//
// Target kit is examples/everything; target ts is the official TypeScript reference server
// (@modelcontextprotocol/server-everything), which speaks the legacy lifecycle only. It prints one
// line per check and exits non-zero when one fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
)

func main() {
	target := flag.String("target", "kit", "kit (examples/everything) or ts (the TypeScript reference server)")
	lifecycle := flag.String("lifecycle", "auto", "auto, legacy or modern")
	url := flag.String("http", "", "Streamable HTTP endpoint")
	useStdio := flag.Bool("stdio", false, "spawn the command given as arguments and speak stdio")
	flag.Parse()
	var tr client.Transport
	switch {
	case *url != "":
		tr = &client.HTTPTransport{URL: *url}
	case *useStdio && flag.NArg() > 0:
		tr = &client.CommandTransport{Command: exec.Command(flag.Arg(0), flag.Args()[1:]...)}
	default:
		fmt.Fprintln(os.Stderr, "goclient: need -http URL or -stdio COMMAND")
		os.Exit(2)
	}
	lc := map[string]client.Lifecycle{"auto": client.Auto, "legacy": client.Legacy, "modern": client.Modern}[*lifecycle]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := &run{}
	opts := client.Options{
		Lifecycle: lc,
		Info:      core.Implementation{Name: "mcpkit-interop", Version: "1.0.0"},
		Sampling: func(ctx context.Context, p *core.CreateMessageParams) (*core.CreateMessageResult, error) {
			return &core.CreateMessageResult{Role: "assistant", Content: core.ContentList{core.Text("sampled by Go")}, Model: "go-model", StopReason: "endTurn"}, nil
		},
		Elicitation: func(ctx context.Context, p *core.ElicitParams) (*core.ElicitResult, error) {
			return &core.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice", "username": "alice", "email": "alice@example.com"}}, nil
		},
		Roots: func(ctx context.Context) ([]core.Root, error) {
			return []core.Root{{URI: "file:///interop", Name: "interop"}}, nil
		},
		OnNotification: func(ctx context.Context, n client.Notification) {
			if n.Method == "notifications/tools/list_changed" {
				r.toolsChanged.Add(1)
			}
		},
	}
	c, err := client.Connect(ctx, tr, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goclient: connect:", err)
		os.Exit(1)
	}
	r.c = c
	r.check("connect", func() error {
		if lc == client.Modern && !c.Modern() || lc == client.Legacy && c.Modern() {
			return fmt.Errorf("lifecycle %s, negotiated modern=%v", lc, c.Modern())
		}
		if *target == "ts" && c.Modern() {
			return errors.New("the TypeScript server is legacy-only, yet the client chose 2026-07-28")
		}
		fmt.Printf("  server %s %s, protocol %s\n", c.ServerInfo().Name, c.ServerInfo().Version, c.ProtocolVersion())
		return nil
	})
	r.check("ping", func() error { return c.Ping(ctx) })
	if *target == "ts" {
		r.typescript(ctx)
	} else {
		r.kit(ctx)
	}
	r.check("close", c.Close)
	if r.failed > 0 {
		fmt.Printf("goclient: %d of %d checks failed\n", r.failed, r.total)
		os.Exit(1)
	}
	fmt.Printf("goclient: all %d checks passed\n", r.total)
}

type run struct {
	c             *client.Client
	total, failed int
	toolsChanged  atomic.Int32
}

func (r *run) check(name string, fn func() error) {
	r.total++
	if err := fn(); err != nil {
		r.failed++
		fmt.Printf("FAIL %s: %v\n", name, err)
		return
	}
	fmt.Printf("ok   %s\n", name)
}

// text returns the text of a tool result's blocks.
func text(res *core.CallToolResult) string {
	var parts []string
	for _, b := range res.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " ")
}

// expect calls a tool and checks that its text contains want.
func (r *run) expect(ctx context.Context, tool string, args any, want string, opts ...client.CallOption) {
	r.check("tools/call "+tool, func() error {
		res, err := r.c.CallTool(ctx, tool, args, opts...)
		if err != nil {
			return err
		}
		if res.IsError || !strings.Contains(text(res), want) {
			return fmt.Errorf("result %q (isError %v), want text containing %q", text(res), res.IsError, want)
		}
		return nil
	})
}

func (r *run) counts(ctx context.Context) {
	r.check("lists", func() error {
		var n [4]int
		for _, err := range r.c.ListTools(ctx) {
			if err != nil {
				return err
			}
			n[0]++
		}
		for _, err := range r.c.ListPrompts(ctx) {
			if err != nil {
				return err
			}
			n[1]++
		}
		for _, err := range r.c.ListResources(ctx) {
			if err != nil {
				return err
			}
			n[2]++
			if n[2] >= 50 {
				break
			}
		}
		for _, err := range r.c.ListResourceTemplates(ctx) {
			if err != nil {
				return err
			}
			n[3]++
		}
		if n[0] == 0 || n[1] == 0 || n[2] == 0 {
			return fmt.Errorf("tools %d, prompts %d, resources %d: want some of each", n[0], n[1], n[2])
		}
		fmt.Printf("  %d tools, %d prompts, %d+ resources, %d templates\n", n[0], n[1], n[2], n[3])
		return nil
	})
}

// readFirstResource reads the first listed resource.
func (r *run) readFirstResource(ctx context.Context) {
	r.check("resources/read", func() error {
		for res, err := range r.c.ListResources(ctx) {
			if err != nil {
				return err
			}
			rr, err := r.c.ReadResource(ctx, res.URI)
			if err != nil {
				return fmt.Errorf("%s: %w", res.URI, err)
			}
			if len(rr.Contents) == 0 {
				return fmt.Errorf("%s: no contents", res.URI)
			}
			return nil
		}
		return errors.New("no resources")
	})
}

func progressOpt(n *atomic.Int32) client.CallOption {
	return client.WithProgress(func(client.Progress) { n.Add(1) })
}

// kit checks examples/everything.
func (r *run) kit(ctx context.Context) {
	r.counts(ctx)
	r.expect(ctx, "test_simple_text", map[string]any{}, "This is a simple text response for testing.")
	var steps atomic.Int32
	r.expect(ctx, "test_tool_with_progress", map[string]any{}, "", progressOpt(&steps))
	r.check("progress notifications", func() error {
		if steps.Load() == 0 {
			return errors.New("none arrived")
		}
		return nil
	})
	r.expect(ctx, "test_input_required_result_sampling", map[string]any{}, "sampled by Go")
	r.expect(ctx, "test_input_required_result_elicitation", map[string]any{}, "Alice")
	r.expect(ctx, "test_input_required_result_multiple_inputs", map[string]any{}, "Roots: 1")
	r.check("tools/call test_error_handling", func() error {
		res, err := r.c.CallTool(ctx, "test_error_handling", map[string]any{})
		if err != nil {
			return err
		}
		if !res.IsError {
			return errors.New("want an isError result")
		}
		return nil
	})
	r.check("prompts/get test_prompt_with_arguments", func() error {
		res, err := r.c.GetPrompt(ctx, "test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"})
		if err != nil {
			return err
		}
		if len(res.Messages) == 0 {
			return errors.New("no messages")
		}
		return nil
	})
	r.readFirstResource(ctx)
	if r.c.Modern() {
		r.expect(ctx, "test_custom_headers", map[string]any{"region": "eu west", "priority": 3, "query": "q"}, "")
		caps := r.c.ServerCapabilities()
		if caps.Tools != nil && caps.Tools.ListChanged {
			r.check("subscriptions/listen", func() error { return r.listenToolsChanged(ctx) })
		}
	} else {
		r.expect(ctx, "test_sampling", map[string]any{"prompt": "hi"}, "sampled by Go")
		r.check("logging/setLevel", func() error { return r.c.SetLoggingLevel(ctx, core.LevelDebug) })
	}
}

// listenToolsChanged opens a subscriptions/listen stream for tools/list_changed, triggers a
// change and waits for the notification.
func (r *run) listenToolsChanged(ctx context.Context) error {
	got := make(chan string, 4)
	sub, err := r.c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) { got <- n.Method })
	if err != nil {
		return err
	}
	defer sub.Close()
	if !sub.Honored.ToolsListChanged {
		return errors.New("toolsListChanged not honored")
	}
	if _, err := r.c.CallTool(ctx, "test_trigger_tool_change", map[string]any{}); err != nil {
		return err
	}
	select {
	case m := <-got:
		if m != "notifications/tools/list_changed" {
			return fmt.Errorf("got %s", m)
		}
	case <-time.After(10 * time.Second):
		return errors.New("no notification within 10 s")
	}
	return nil
}

// typescript checks the TypeScript reference server.
func (r *run) typescript(ctx context.Context) {
	r.counts(ctx)
	r.expect(ctx, "echo", map[string]any{"message": "hello from Go"}, "Echo: hello from Go")
	r.expect(ctx, "get-sum", map[string]any{"a": 2, "b": 40}, "is 42")
	var steps atomic.Int32
	r.expect(ctx, "trigger-long-running-operation", map[string]any{"duration": 1, "steps": 2}, "", progressOpt(&steps))
	r.check("progress notifications", func() error {
		if steps.Load() == 0 {
			return errors.New("none arrived")
		}
		return nil
	})
	r.check("structured output", func() error {
		type weather struct {
			Temperature float64 `json:"temperature"`
			Conditions  string  `json:"conditions"`
			Humidity    float64 `json:"humidity"`
		}
		w, _, err := client.CallToolAs[weather](ctx, r.c, "get-structured-content", map[string]any{"location": "Chicago"})
		if err != nil {
			return err
		}
		if w.Conditions == "" {
			return fmt.Errorf("decoded %+v", w)
		}
		return nil
	})
	// The server registers its sampling and roots tools once initialize is over, and says so
	// with a list change; wait for the tool rather than race it.
	r.check("conditional tools", func() error {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			for t, err := range r.c.ListTools(ctx) {
				if err != nil {
					return err
				}
				if t.Name == "trigger-sampling-request" {
					return nil
				}
			}
		}
		return errors.New("trigger-sampling-request never appeared")
	})
	r.expect(ctx, "trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 10}, "sampled by Go")
	r.expect(ctx, "get-roots-list", map[string]any{}, "file:///interop")
	r.check("prompts/get simple-prompt", func() error {
		res, err := r.c.GetPrompt(ctx, "simple-prompt", nil)
		if err != nil {
			return err
		}
		if len(res.Messages) == 0 {
			return errors.New("no messages")
		}
		return nil
	})
	r.readFirstResource(ctx)
	r.check("logging/setLevel", func() error { return r.c.SetLoggingLevel(ctx, core.LevelDebug) })
}
