package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/stdio"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// fixture is a server with a little of everything, and what its handlers saw.
type fixture struct {
	server    *core.Server
	cancelled chan struct{}
	started   chan struct{}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{cancelled: make(chan struct{}, 8), started: make(chan struct{}, 8)}
	s := core.NewServer(core.Implementation{Name: "fixture", Version: "1.2.3"}, core.Options{PageSize: 2, Instructions: "be nice"})
	core.AddTool(s, &core.Tool{Name: "add", Description: "Adds."},
		func(ctx context.Context, req *core.ToolRequest, in addIn) (*core.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	s.AddTool(&core.Tool{Name: "fail", Description: "Fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			return core.ErrorResult("it broke"), nil
		})
	s.AddTool(&core.Tool{Name: "progress", Description: "Reports progress.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				_ = req.Progress(float64(i), 3, fmt.Sprintf("step %d", i))
			}
			_, _ = req.Log(core.LevelWarning, "fixture", "careful")
			return core.TextResult("done"), nil
		})
	s.AddTool(&core.Tool{Name: "block", Description: "Waits for cancellation.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			f.started <- struct{}{}
			<-ctx.Done()
			f.cancelled <- struct{}{}
			return nil, ctx.Err()
		})
	s.AddTool(&core.Tool{Name: "ask", Description: "Asks for a name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if r, ok := req.ElicitResponse("who"); ok {
				return core.TextResult(fmt.Sprintf("%s/%v/%v", r.Action, r.Content["name"], r.Content["age"])), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{"who": core.ElicitInput(core.ElicitParams{
				Message:         "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer","default":36}}}`),
			})}, "asked")
		})
	s.AddTool(&core.Tool{Name: "sample", Description: "Samples.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if r, ok := req.SamplingResponse("s"); ok {
				if roots, ok := req.RootsResponse("r"); ok {
					return core.TextResult(fmt.Sprintf("%s %d", r.Content[0].Text, len(roots.Roots))), nil
				}
			}
			return nil, core.NeedInput(map[string]core.InputRequest{
				"s": core.SamplingInput(core.CreateMessageParams{MaxTokens: 5, Messages: []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("hi")}}}}),
				"r": core.RootsInput(),
			}, "")
		})
	s.AddPrompt(&core.Prompt{Name: "greet", Description: "Greets.", Arguments: []core.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("Hello " + req.Arguments["who"])}}}, nil
		})
	s.AddResource(&core.Resource{URI: "test://a", Name: "a"}, func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "test://a", Text: "A"}}}, nil
	})
	f.server = s
	return f
}

// handlers answers every server request kind.
func handlers(o *client.Options) *client.Options {
	o.Elicitation = func(ctx context.Context, p *core.ElicitParams) (*core.ElicitResult, error) {
		return &core.ElicitResult{Action: "accept", Content: map[string]any{"age": 7}}, nil
	}
	o.Sampling = func(ctx context.Context, p *core.CreateMessageParams) (*core.CreateMessageResult, error) {
		return &core.CreateMessageResult{Role: "assistant", Content: core.ContentList{core.Text("sampled")}, Model: "m"}, nil
	}
	o.Roots = func(ctx context.Context) ([]core.Root, error) {
		return []core.Root{{URI: "file:///a"}, {URI: "file:///b"}}, nil
	}
	return o
}

// transports returns a fresh transport of each kind to the fixture's server.
func transports(t *testing.T, f *fixture) map[string]func() client.Transport {
	return map[string]func() client.Transport{
		"memory": func() client.Transport { return &client.InMemoryTransport{Server: f.server} },
		"http": func() client.Transport {
			srv := httptest.NewServer(mcphttp.New(f.server, mcphttp.Options{}))
			t.Cleanup(srv.Close)
			return &client.HTTPTransport{URL: srv.URL}
		},
		"stdio": func() client.Transport {
			cr, sw := io.Pipe() // server to client
			sr, cw := io.Pipe() // client to server
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = stdio.Serve(context.Background(), f.server, stdio.Options{In: sr, Out: sw})
				sw.Close()
			}()
			t.Cleanup(func() { sr.Close(); <-done })
			return &client.IOTransport{Reader: cr, Writer: cw}
		},
	}
}

var lifecycles = []client.Lifecycle{client.Legacy, client.Modern, client.Auto}

func eachCombination(t *testing.T, fn func(t *testing.T, f *fixture, c *client.Client, lc client.Lifecycle)) {
	for name, mk := range transports(t, newFixture(t)) {
		for _, lc := range lifecycles {
			t.Run(name+"/"+lc.String(), func(t *testing.T) {
				f := newFixture(t)
				tr := transports(t, f)[name]()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				c, err := client.Connect(ctx, tr, *handlers(&client.Options{Lifecycle: lc, Info: core.Implementation{Name: "tester", Version: "9"}}))
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer c.Close()
				_ = mk
				fn(t, f, c, lc)
			})
		}
	}
}

func TestLifecycles(t *testing.T) {
	eachCombination(t, func(t *testing.T, f *fixture, c *client.Client, lc client.Lifecycle) {
		wantModern := lc != client.Legacy
		if c.Modern() != wantModern {
			t.Fatalf("Modern() = %v, want %v", c.Modern(), wantModern)
		}
		wantVersion := core.LatestHandshakeVersion
		if wantModern {
			wantVersion = core.Version20260728
		}
		if c.ProtocolVersion() != wantVersion {
			t.Errorf("ProtocolVersion = %q, want %q", c.ProtocolVersion(), wantVersion)
		}
		if got := c.ServerInfo(); got.Name != "fixture" || got.Version != "1.2.3" {
			t.Errorf("ServerInfo = %+v", got)
		}
		if c.ServerCapabilities().Tools == nil {
			t.Errorf("no tools capability: %+v", c.ServerCapabilities())
		}
		if err := c.Ping(context.Background()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

func TestCalls(t *testing.T) {
	eachCombination(t, func(t *testing.T, f *fixture, c *client.Client, lc client.Lifecycle) {
		ctx := context.Background()
		var names []string
		for tool, err := range c.ListTools(ctx) {
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, ","); got != "add,fail,progress,block,ask,sample" {
			t.Errorf("tools over pages = %s", got)
		}
		out, res, err := client.CallToolAs[addOut](ctx, c, "add", addIn{A: 2, B: 40})
		if err != nil || out.Sum != 42 || res == nil {
			t.Errorf("add = %+v, %v", out, err)
		}
		_, _, err = client.CallToolAs[addOut](ctx, c, "fail", nil)
		var terr *client.ToolError
		if !errors.As(err, &terr) || !strings.Contains(err.Error(), "it broke") {
			t.Errorf("fail: %v", err)
		}
		res, err = c.CallTool(ctx, "ask", map[string]any{})
		if err != nil || res.Content[0].Text != "accept/Ada/7" {
			t.Errorf("ask (input with defaults): %+v, %v", res, err)
		}
		res, err = c.CallTool(ctx, "sample", nil)
		if err != nil || res.Content[0].Text != "sampled 2" {
			t.Errorf("sample: %+v, %v", res, err)
		}
		_, err = c.CallTool(ctx, "missing", nil)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Errorf("unknown tool: %v", err)
		}
		pr, err := c.GetPrompt(ctx, "greet", map[string]string{"who": "Bob"})
		if err != nil || pr.Messages[0].Content.Text != "Hello Bob" {
			t.Errorf("GetPrompt: %+v, %v", pr, err)
		}
		rr, err := c.ReadResource(ctx, "test://a")
		if err != nil || rr.Contents[0].Text != "A" {
			t.Errorf("ReadResource: %+v, %v", rr, err)
		}
		n := 0
		for _, err := range c.ListResources(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		for _, err := range c.ListPrompts(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 2 {
			t.Errorf("resources+prompts = %d", n)
		}
	})
}

func TestProgressAndLogs(t *testing.T) {
	for name, mk := range transports(t, newFixture(t)) {
		_ = mk
		for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
			t.Run(name+"/"+lc.String(), func(t *testing.T) {
				f := newFixture(t)
				var mu sync.Mutex
				var logs []string
				c, err := client.Connect(context.Background(), transports(t, f)[name](), client.Options{Lifecycle: lc,
					OnLog: func(ctx context.Context, m client.LogMessage) {
						mu.Lock()
						logs = append(logs, string(m.Level)+":"+string(m.Data))
						mu.Unlock()
					}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if err := c.SetLoggingLevel(context.Background(), core.LevelInfo); err != nil {
					t.Fatal(err)
				}
				var steps []string
				res, err := c.CallTool(context.Background(), "progress", nil, client.WithProgress(func(p client.Progress) {
					steps = append(steps, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message))
				}))
				if err != nil || res.Content[0].Text != "done" {
					t.Fatalf("progress: %v", err)
				}
				if got := strings.Join(steps, ","); got != "1/3 step 1,2/3 step 2,3/3 step 3" {
					t.Errorf("progress = %q", got)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(logs) != 1 || logs[0] != `warning:"careful"` {
					t.Errorf("logs = %q", logs)
				}
			})
		}
	}
}

// await receives from ch, failing the test after a bound instead of hanging when what never
// happens.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func TestCancellation(t *testing.T) {
	eachCombination(t, func(t *testing.T, f *fixture, c *client.Client, lc client.Lifecycle) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, "block", nil)
			errc <- err
		}()
		await(t, f.started, "the tool to start")
		cancel()
		if err := await(t, errc, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
		await(t, f.cancelled, "the server's handler to be cancelled")
		// A deadline works the same way.
		_, err := c.CallTool(context.Background(), "block", nil, client.WithTimeout(50*time.Millisecond))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("deadline: %v", err)
		}
		// On a loaded machine the deadline can pass before the request reaches the handler; then
		// there is nothing to cancel (and a late start is cancelled by Close).
		select {
		case <-f.started:
			await(t, f.cancelled, "the server's handler to be cancelled when the deadline passed")
		default:
		}
	})
}

// TestInMemoryLeavesNoGoroutine closes clients mid-call and checks that nothing is left running.
func TestInMemoryLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
		f := newFixture(t)
		c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: f.server}, *handlers(&client.Options{Lifecycle: lc}))
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.CallTool(context.Background(), "block", nil)
			errc <- err
		}()
		await(t, f.started, "the tool to start")
		if _, err := c.CallTool(context.Background(), "ask", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		sub, err := c.Listen(context.Background(), client.ListenFilter{ToolsListChanged: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := await(t, errc, "the call in flight to fail"); !errors.Is(err, client.ErrClosed) {
			t.Errorf("call in flight at Close: %v", err)
		}
		await(t, f.cancelled, "the handler of the call in flight to be cancelled")
		if !errors.Is(sub.Err(), client.ErrClosed) {
			t.Errorf("listen open at Close: %v", sub.Err())
		}
		if _, err := c.CallTool(context.Background(), "add", addIn{}); !errors.Is(err, client.ErrClosed) {
			t.Errorf("call after Close: %v", err)
		}
	}
}

// TestInputRoundsBounded: a server that keeps asking gets MaxInputRounds answers, then the call
// fails with ErrTooManyInputRounds; a server request without a handler fails the call clearly.
func TestInputRoundsBounded(t *testing.T) {
	f := newFixture(t)
	rounds := 0
	f.server.AddTool(&core.Tool{Name: "forever", Description: "Always asks.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			rounds++
			return nil, core.NeedInput(map[string]core.InputRequest{"r": core.RootsInput()}, fmt.Sprint(rounds))
		})
	c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: f.server}, *handlers(&client.Options{Lifecycle: client.Modern, MaxInputRounds: 3}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(context.Background(), "forever", nil)
	if !errors.Is(err, client.ErrTooManyInputRounds) || rounds != 4 {
		t.Errorf("after %d requests: %v", rounds, err)
	}

	bare, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: f.server}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	// Without a roots handler the client declares no roots: the server's capability gate answers.
	if _, err := bare.CallTool(context.Background(), "forever", nil); err == nil {
		t.Error("a call needing roots succeeded without a roots handler")
	}
}

func TestOptionsPanics(t *testing.T) {
	for name, o := range map[string]*client.Options{
		"lifecycle": {Lifecycle: client.Lifecycle(9)},
		"version":   {ProtocolVersion: "2026-07-28"},
		"rounds":    {MaxInputRounds: -1},
		"serving":   {MaxServerRequests: -1},
		"url mode":  {URLElicitation: true},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Options.") {
					t.Errorf("panic = %v", r)
				}
			}()
			_, _ = client.Connect(context.Background(), &client.InMemoryTransport{Server: newFixture(t).server}, *o)
		})
	}
}

// TestLegacyExtras: completion, resource subscriptions, roots changes and url-mode elicitation
// on a legacy session, over every transport that has one.
func TestLegacyExtras(t *testing.T) {
	for _, name := range []string{"memory", "http", "stdio"} {
		t.Run(name, func(t *testing.T) {
			rootsChanged := make(chan struct{}, 1)
			s := core.NewServer(core.Implementation{Name: "extras", Version: "1"}, core.Options{
				SubscribeHandler: core.AcceptSubscription,
				CompletionHandler: func(ctx context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
					return &core.CompleteResult{Completion: core.Completion{Values: []string{req.Argument.Value + "1", req.Context["lang"]}}}, nil
				},
				OnRootsListChanged: func(ctx context.Context, s *core.Session) { rootsChanged <- struct{}{} },
			})
			s.AddPrompt(&core.Prompt{Name: "p", Description: "P.", Arguments: []core.PromptArgument{{Name: "a"}}},
				func(ctx context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
					return &core.GetPromptResult{Messages: []core.PromptMessage{}}, nil
				})
			s.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
				return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "test://r", Text: "r"}}}, nil
			})
			s.AddTool(&core.Tool{Name: "login", Description: "URL elicitation.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
					res, err := req.Elicit(ctx, &core.ElicitParams{Mode: "url", Message: "Log in", URL: "https://example.com/login"})
					if err != nil {
						return nil, err
					}
					return core.TextResult(res.Action), nil
				})
			updates := make(chan string, 4)
			f := &fixture{server: s}
			var gotURL string
			c, err := client.Connect(context.Background(), transports(t, f)[name](), client.Options{
				Lifecycle:      client.Legacy,
				URLElicitation: true,
				Elicitation: func(ctx context.Context, p *core.ElicitParams) (*core.ElicitResult, error) {
					gotURL = p.URL
					return &core.ElicitResult{Action: "accept"}, nil
				},
				Roots: func(ctx context.Context) ([]core.Root, error) { return nil, nil },
				OnNotification: func(ctx context.Context, n client.Notification) {
					if n.Method == "notifications/resources/updated" {
						updates <- string(n.Params)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			cr, err := c.Complete(ctx, core.CompleteRef{Type: "ref/prompt", Name: "p"}, core.CompleteArgument{Name: "a", Value: "v"}, map[string]string{"lang": "go"})
			if err != nil || strings.Join(cr.Completion.Values, ",") != "v1,go" {
				t.Errorf("Complete: %+v, %v", cr, err)
			}
			if err := c.Subscribe(ctx, "test://r"); err != nil {
				t.Fatal(err)
			}
			if err := s.NotifyResourceUpdated(ctx, "test://r"); err != nil {
				t.Fatal(err)
			}
			select {
			case p := <-updates:
				if !strings.Contains(p, "test://r") {
					t.Errorf("update params %s", p)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no resources/updated")
			}
			if err := c.Unsubscribe(ctx, "test://r"); err != nil {
				t.Error(err)
			}
			if err := c.RootsChanged(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case <-rootsChanged:
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not hear of the roots change")
			}
			res, err := c.CallTool(ctx, "login", nil)
			if err != nil || res.Content[0].Text != "accept" || gotURL != "https://example.com/login" {
				t.Errorf("url elicitation: %+v, %v, %q", res, err, gotURL)
			}
		})
	}
}
