package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text string `json:"text"`
}

// TestCallStorageIsNeverShared: the storage an ephemeral session is allocated with serves one
// call only, and a response is written in its call's own storage: a handler or transport that
// keeps a call or a response (past Run, past the session's Close) finds it unchanged however
// many requests follow on the same session, in flight together or one after the other.
func TestCallStorageIsNeverShared(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{})
	calls := map[string]*core.Call{}
	core.AddTool(s, &core.Tool{Name: "echo"}, func(_ context.Context, req *core.ToolRequest, in echoIn) (*core.CallToolResult, echoOut, error) {
		calls[in.Text] = req.Call
		return nil, echoOut(in), nil
	})
	sessions := map[string]transport.SessionOptions{
		"ephemeral modern":          {Ephemeral: true, Modern: true},
		"ephemeral modern observed": {Ephemeral: true, Modern: true, Observer: &countingObserver{}},
		"ephemeral legacy":          {Ephemeral: true},
		"legacy":                    {},
	}
	for name, opts := range sessions {
		t.Run(name, func(t *testing.T) {
			clear(calls)
			ss := transport.NewSession(s, opts)
			if !opts.Ephemeral {
				m, derr := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
				if derr != nil {
					t.Fatal(derr)
				}
				if r := transport.Core.Handle(ss, t.Context(), m, nil); r == nil || r.Error != nil {
					t.Fatalf("initialize: %+v", r)
				}
			}
			msg := func(id int, text string) []byte {
				meta := ""
				if opts.Modern {
					meta = fmt.Sprintf(`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
						`"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"}}`, text)
				}
				return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}%s}}`, id, text, meta)
			}
			begin := func(id int, text string) *core.Call {
				m, derr := transport.Core.DecodeMessage(msg(id, text))
				if derr != nil {
					t.Fatal(derr)
				}
				c, err := transport.Core.Begin(ss, t.Context(), m, nil)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			// Two calls in flight together, then a third after both answered.
			first, second := begin(1, "one"), begin(2, "two")
			if first == second {
				t.Fatal("two calls in flight share their storage")
			}
			r1 := transport.Core.Run(first)
			want1 := string(transport.Core.EncodeResponseMessage(r1))
			r2 := transport.Core.Run(second)
			third := begin(3, "three")
			r3 := transport.Core.Run(third)
			ss.Close()
			if obs, ok := opts.Observer.(*countingObserver); ok && obs.ended.Load() != 3 {
				t.Fatalf("the observer saw %d operations end, want 3", obs.ended.Load())
			}
			if third == first || third == second || r1 == r2 || r3 == r1 || r3 == r2 {
				t.Fatal("a later call or response reuses an earlier one's storage")
			}
			if got := string(transport.Core.EncodeResponseMessage(r1)); got != want1 {
				t.Fatalf("the first response changed after later calls:\n%s\nwant\n%s", got, want1)
			}
			for i, c := range []struct {
				call *core.Call
				text string
			}{{first, "one"}, {second, "two"}, {third, "three"}} {
				if calls[c.text] != c.call || c.call.ID().String() != fmt.Sprint(i+1) {
					t.Fatalf("call %d: the handler saw %p, Begin gave %p (id %s)", i+1, calls[c.text], c.call, c.call.ID())
				}
				if want := string(msg(i+1, c.text)); fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, c.call.Params()) != want {
					t.Fatalf("call %d kept params %s", i+1, c.call.Params())
				}
				if opts.Modern {
					// Each envelope's clientInfo in storage of its own call's.
					if info := c.call.ClientInfo(); info == nil || info.Name != c.text {
						t.Fatalf("call %d kept clientInfo %+v, want the name %q", i+1, info, c.text)
					}
				}
			}
			if opts.Modern && (first.ClientInfo() == second.ClientInfo() || third.ClientInfo() == first.ClientInfo()) {
				t.Fatal("two calls share the storage of their clientInfo")
			}
		})
	}
}

// countingObserver counts the operations that end.
type countingObserver struct{ ended atomic.Int32 }

func (*countingObserver) StartOperation(ctx context.Context, _ *core.Operation) context.Context {
	return ctx
}

func (o *countingObserver) EndOperation(context.Context, *core.Operation) { o.ended.Add(1) }

func (*countingObserver) SessionEnded(*core.SessionReport) {}

// A message DecodeMessage did not read (built in code) has its _meta read on first use, once
// however many goroutines ask at the same time; a decoded one answers from its own members.
func TestCallMetaOfBuiltMessage(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "echo"}, func(_ context.Context, req *core.ToolRequest, in echoIn) (*core.CallToolResult, echoOut, error) {
		return nil, echoOut(in), nil
	})
	params := `{"name":"echo","arguments":{"text":"x"},"_meta":{"k":"v","progressToken":7}}`
	decoded, derr := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`))
	if derr != nil {
		t.Fatal(derr)
	}
	built := &jsonrpc.Message{ID: decoded.ID, Method: "tools/call", Params: json.RawMessage(params)}
	for name, m := range map[string]*jsonrpc.Message{"decoded": decoded, "built": built} {
		ss := transport.NewSession(s, transport.SessionOptions{Ephemeral: true})
		c, err := transport.Core.Begin(ss, t.Context(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range got {
			wg.Go(func() { got[i] = string(c.Meta("k")) + string(c.ProgressToken()) + string(c.Meta("none")) })
		}
		wg.Wait()
		for i, g := range got {
			if g != `"v"7` {
				t.Fatalf("%s message: goroutine %d read _meta as %s, want \"v\"7", name, i, g)
			}
		}
		transport.Core.Run(c)
		ss.Close()
	}
}
