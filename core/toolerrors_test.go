package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestToolErrorIsResultOnBothLifecycles: a plain error (wrapped or not) is an isError result on
// a legacy session and on a 2026-07-28 request alike, valid against each version's schema.
func TestToolErrorIsResultOnBothLifecycles(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "fails"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, fmt.Errorf("lookup failed: %w", errors.New("no such city: Atlantis"))
	})
	type cityOut struct {
		Temp int `json:"temp"`
	}
	core.AddTool(srv, &core.Tool{Name: "typed-fails"}, func(context.Context, *core.ToolRequest, struct{}) (*core.CallToolResult, cityOut, error) {
		return nil, cityOut{}, errors.New("weather service down")
	})
	want := map[string]string{
		"fails":       `{"content":[{"type":"text","text":"lookup failed: no such city: Atlantis"}],"isError":true}`,
		"typed-fails": `{"content":[{"type":"text","text":"weather service down"}],"isError":true}`,
	}

	legacy := newClient(t, srv)
	legacy.initialize("2025-11-25")
	for tool, body := range want {
		w := legacy.result("tools/call", map[string]any{"name": tool}, "CallToolResult", nil)
		if string(w.Result) != body {
			t.Errorf("legacy %s: %s, want %s", tool, w.Result, body)
		}
	}

	modern := newClient(t, srv)
	for tool := range want {
		w := modern.call("tools/call", withMeta(map[string]any{"name": tool}, modernMeta(nil)))
		members := checkModernResult(t, w, "CallToolResult")
		if string(members["isError"]) != "true" || !strings.Contains(string(members["content"]), "text") {
			t.Errorf("modern %s: %s", tool, w.Result)
		}
		if _, ok := members["structuredContent"]; ok {
			t.Errorf("modern %s: an error carries no structured output: %s", tool, w.Result)
		}
	}
}

// TestToolLoggerDefaultsToZerologGlobal: with no Options.Logger, a tool's error and a panic are
// logged through zerolog's global logger (stderr unless the program changed it); a pointer to
// zerolog.Nop() silences the server.
func TestToolLoggerDefaultsToZerologGlobal(t *testing.T) {
	buf := newErrorLog()
	saved := log.Logger
	log.Logger = zerolog.New(buf)
	t.Cleanup(func() { log.Logger = saved })

	build := func(opts *core.Options) *core.Server {
		srv := core.NewServer(core.Implementation{Name: "t", Version: "1"}, optionsOf(opts))
		srv.AddTool(&core.Tool{Name: "fails"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return nil, errors.New("disk full")
		})
		srv.AddTool(&core.Tool{Name: "panics"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			panic("the panic value")
		})
		return srv
	}
	c := newClient(t, build(nil))
	c.callTool("fails", nil)
	c.call("tools/call", map[string]any{"name": "panics"})
	got := buf.raw()
	for _, want := range []string{`"level":"error"`, `"tool":"fails"`, `"error":"disk full"`, "the panic value", "goroutine "} {
		if !strings.Contains(got, want) {
			t.Errorf("the default log lacks %s:\n%s", want, got)
		}
	}

	buf.reset()
	nop := zerolog.Nop()
	c = newClient(t, build(&core.Options{Logger: &nop}))
	c.callTool("fails", nil)
	c.call("tools/call", map[string]any{"name": "panics"})
	if buf.raw() != "" {
		t.Errorf("a Nop logger still let lines through the global one: %s", buf.raw())
	}
}

// TestHandlerErrorsLogged: the plain error of a handler other than a tool is -32603 without its
// text, and the text is logged; a *jsonrpc.Error is the handler's answer, not logged.
func TestHandlerErrorsLogged(t *testing.T) {
	elog := newErrorLog()
	srv := newServer(&core.Options{Logger: elog.logger()})
	srv.HandleMethod("x/fails", func(context.Context, *core.Call) (any, error) {
		return nil, errors.New("secret connection string")
	})
	srv.HandleMethod("x/typed", func(context.Context, *core.Call) (any, error) {
		return nil, jsonrpc.InvalidParams("bad x")
	})
	srv.AddPrompt(&core.Prompt{Name: "p"}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return nil, errors.New("prompt store offline")
	})
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	w := c.call("x/fails", nil)
	wantError(t, w, -32603, "Internal error", "Internal error handling x/fails request")
	if strings.Contains(w.String(), "secret") {
		t.Errorf("the error text reached the client: %s", w)
	}
	wantError(t, c.call("x/typed", nil), -32602, "Invalid params", "bad x")
	if w := c.call("prompts/get", map[string]any{"name": "p"}); w.Error == nil || strings.Contains(w.String(), "offline") {
		t.Errorf("prompt error: %s", w)
	}
	got := elog.String()
	for _, want := range []string{"x/fails: secret connection string", "prompt store offline"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "bad x") {
		t.Errorf("a typed protocol error was logged as a failure:\n%s", got)
	}
}

// TestNeedInputError: on a 2026-07-28 request Elicit, CreateMessage, ListRoots and Ping fail with
// a *NeedInputError naming the method and NeedInput (still ErrRequestsRefused); a tool that
// returns it unhandled is -32603, logged, not shown to the model.
func TestNeedInputError(t *testing.T) {
	elog := newErrorLog()
	var got []error
	srv := newServer(&core.Options{Logger: elog.logger()})
	srv.AddTool(&core.Tool{Name: "ask"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_, e1 := req.Elicit(ctx, &core.ElicitParams{Message: "name?"})
		_, e2 := req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 1})
		_, e3 := req.ListRoots(ctx)
		e4 := req.Ping(ctx)
		got = []error{e1, e2, e3, e4}
		return nil, e1
	})
	c := newClient(t, srv)
	caps := map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
	w := c.call("tools/call", withMeta(map[string]any{"name": "ask"}, modernMeta(map[string]any{metaCaps: caps})))
	wantModernError(t, w, -32603)
	if strings.Contains(w.String(), "NeedInput") {
		t.Errorf("the handler's mistake reached the model: %s", w)
	}
	for i, method := range []string{"elicitation/create", "sampling/createMessage", "roots/list", "ping"} {
		var ni *core.NeedInputError
		if !errors.As(got[i], &ni) || ni.Method != method {
			t.Errorf("%s: %v (%T), want *NeedInputError", method, got[i], got[i])
			continue
		}
		if !errors.Is(got[i], core.ErrRequestsRefused) || !strings.Contains(got[i].Error(), "core.NeedInput") || !strings.Contains(got[i].Error(), method) {
			t.Errorf("%s: %q", method, got[i])
		}
	}
	if !strings.Contains(elog.String(), "NeedInput") {
		t.Errorf("the mistake was not logged: %s", elog)
	}
	testutil.ValidateDef(t, modernVersion, "JSONRPCErrorResponse", w.raw)
}
