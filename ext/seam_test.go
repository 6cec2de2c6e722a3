// Package ext_test shows that core's extension seam is enough for an extension of its own: a
// third one, beside ext/tasks and ext/skills, with one method and one capability entry.
package ext_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/coretest"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

const echoID = "com.example/echo"

// echo is the smallest extension: echo/say answers its params.text, and the extension is offered
// (capabilities.extensions["com.example/echo"] = {"maxText": 64}) while on is set.
type echo struct {
	on    atomic.Bool
	calls atomic.Int64
}

func (e *echo) Bind(*core.Server) core.ExtensionSpec {
	return core.ExtensionSpec{
		ID:       echoID,
		Name:     "echo",
		Settings: map[string]any{"maxText": 64},
		Offered:  e.on.Load,
		Methods: []core.ExtensionMethod{{Method: "echo/say", Handle: func(_ context.Context, c *core.Call) (any, error) {
			e.calls.Add(1)
			var p struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(c.Params(), &p); err != nil || p.Text == "" {
				return nil, jsonrpc.InvalidParams("text must be a non-empty string")
			}
			return map[string]any{"text": p.Text}, nil
		}}},
	}
}

func TestThirdExtension(t *testing.T) {
	e := &echo{}
	s := core.NewServer(core.Implementation{Name: "seam", Version: "1"}, core.Options{Extensions: []core.Extension{e}})

	// Not offered: no capability entry, and its method is refused as core refuses a method of a
	// capability the server does not offer.
	w := coretest.Send(t, s, "", nil, "echo/say", map[string]any{"text": "hi"})
	coretest.WantError(t, w, jsonrpc.CodeInternalError, "Internal error", "Server does not support echo (required for echo/say)")
	if ext := discoverExtensions(t, s); ext != nil {
		t.Errorf("extensions before the extension is offered: %v", ext)
	}

	e.on.Store(true)
	ext := discoverExtensions(t, s)
	if got, _ := json.Marshal(ext[echoID]); string(got) != `{"maxText":64}` {
		t.Errorf("server/discover extensions = %v", ext)
	}
	r := coretest.OK(t, s, "", nil, "echo/say", map[string]any{"text": "hi"})
	if r["text"] != "hi" || r["resultType"] != "complete" {
		t.Errorf("echo/say = %v, want the text and the 2026-07-28 members", r)
	}
	w = coretest.Send(t, s, "", nil, "echo/say", map[string]any{})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Invalid params", "text must be a non-empty string")

	// The legacy lifecycle sees the same entry in initialize.
	ss := transport.NewSession(s, transport.SessionOptions{})
	defer ss.Close()
	msg, err := transport.Core.DecodeMessage([]byte(testutil.Initialize(1, "2025-11-25")))
	if err != nil {
		t.Fatal(err)
	}
	resp := testutil.DecodeWire(t, transport.Core.EncodeResponseMessage(transport.Core.Handle(ss, context.Background(), msg, nil)))
	var init struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(resp.Result, &init); err != nil || string(init.Capabilities.Extensions[echoID]) != `{"maxText":64}` {
		t.Errorf("initialize = %s", resp.Result)
	}
	if e.calls.Load() != 2 {
		t.Errorf("echo/say handler ran %d times, want 2", e.calls.Load())
	}
	// The methods of extensions are theirs: HandleMethod cannot take them over.
	testutil.WantPanic(t, `"echo/say" is a method of extension "com.example/echo"`, func() {
		s.HandleMethod("echo/say", func(context.Context, *core.Call) (any, error) { return nil, nil })
	})
}

func discoverExtensions(t *testing.T, s *core.Server) map[string]any {
	t.Helper()
	caps, _ := coretest.OK(t, s, "", nil, "server/discover", nil)["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	return ext
}

// bad is an extension declaring whatever a test gives it.
type bad core.ExtensionSpec

func (b bad) Bind(*core.Server) core.ExtensionSpec { return core.ExtensionSpec(b) }

func handle(context.Context, *core.Call) (any, error) { return nil, nil }

// Registration refuses, naming it, what would make two owners of one name.
func TestExtensionRegistrationPanics(t *testing.T) {
	impl := core.Implementation{Name: "x", Version: "1"}
	method := func(name string) []core.ExtensionMethod {
		return []core.ExtensionMethod{{Method: name, Handle: handle}}
	}
	for _, tc := range []struct {
		name string
		exts []core.Extension
		want string
	}{
		{"nil", []core.Extension{nil}, "Options.Extensions[0] is nil"},
		{"no id", []core.Extension{bad{}}, "declares no ID"},
		{"twice", []core.Extension{bad{ID: "a"}, bad{ID: "a"}}, `extension "a" is given twice`},
		{"core method", []core.Extension{bad{ID: "a", Methods: method("tools/call")}}, `method "tools/call" is served by core`},
		{"notification", []core.Extension{bad{ID: "a", Methods: method("notifications/x")}}, `method "notifications/x"`},
		{"no handler", []core.Extension{bad{ID: "a", Methods: []core.ExtensionMethod{{Method: "a/b"}}}}, `method "a/b" has no handler`},
		{"duplicate method", []core.Extension{bad{ID: "a", Methods: method("a/b")}, bad{ID: "b", Methods: method("a/b")}}, `method "a/b" is served by extension "a" already`},
		{"tasks method", []core.Extension{tasks.New(tasks.Options{}), bad{ID: "b", Methods: method("tasks/get")}}, `method "tasks/get" is served by extension "io.modelcontextprotocol/tasks"`},
		{"listen member", []core.Extension{bad{ID: "a", Listen: &core.ListenMember{Name: "ids"}}}, "ListenMember needs a Name, a Method and Admit"},
		{"one tasks extension, two servers", nil, "tasks: the extension is bound to a server already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.WantPanic(t, tc.want, func() {
				if tc.exts == nil {
					x := tasks.New(tasks.Options{})
					core.NewServer(impl, core.Options{Extensions: []core.Extension{x}})
					core.NewServer(impl, core.Options{Extensions: []core.Extension{x}})
				}
				core.NewServer(impl, core.Options{Extensions: tc.exts})
			})
		})
	}
	sk := skills.New(skills.Options{})
	core.NewServer(impl, core.Options{Extensions: []core.Extension{sk}})
	testutil.WantPanic(t, "skills: the extension is bound to a server already", func() {
		core.NewServer(impl, core.Options{Extensions: []core.Extension{sk}})
	})
}
