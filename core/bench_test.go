package core_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// toolsCallBody is a typical tools/call request: a progress token in _meta and a few arguments.
var toolsCallBody = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40,"note":"sum these two numbers"},"_meta":{"progressToken":"tok-1"}}}`)

type addIn struct {
	A    int    `json:"a"`
	B    int    `json:"b"`
	Note string `json:"note,omitempty"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(toolsCallBody)))
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(toolsCallBody)
		if derr != nil || msg.Method != "tools/call" {
			b.Fatal(derr)
		}
	}
}

// modernCallBody is a 2026-07-28 tools/call: the envelope in params._meta.
var modernCallBody = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40,"note":"sum these two numbers"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"progressToken":"tok-1"}}}`)

func BenchmarkDecodeRequestModern(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(modernCallBody)))
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(modernCallBody)
		if derr != nil || msg.Method != "tools/call" || msg.Meta("io.modelcontextprotocol/protocolVersion") == nil {
			b.Fatal(derr)
		}
	}
}

func BenchmarkToolsCallTyped(b *testing.B) {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "add"}, func(_ context.Context, _ *core.ToolRequest, in addIn) (*core.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	ss := transport.NewSession(s, transport.SessionOptions{Out: transport.SenderFunc(func(context.Context, []byte) error { return nil })})
	defer ss.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(toolsCallBody)
		if derr != nil {
			b.Fatal(derr)
		}
		resp := transport.Core.Handle(ss, ctx, msg, nil)
		if resp == nil || resp.Error != nil {
			b.Fatalf("unexpected response %+v", resp)
		}
		if out := transport.Core.EncodeResponseMessage(resp); len(out) == 0 {
			b.Fatal("empty response")
		}
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	result := []byte(`{"content":[{"type":"text","text":"{\"sum\":42}"}],"structuredContent":{"sum":42},"isError":false}`)
	id := jsonrpc.IntID(42)
	b.ReportAllocs()
	for b.Loop() {
		resp := core.Response{ID: id, Result: result}
		if out := transport.Core.EncodeResponseMessage(&resp); len(out) == 0 {
			b.Fatal("empty")
		}
	}
}

func BenchmarkEncodeError(b *testing.B) {
	e := jsonrpc.InvalidParams("Tool not found: nope")
	id := jsonrpc.StringID("req-7")
	b.ReportAllocs()
	for b.Loop() {
		if out := transport.Core.EncodeError(id, e); len(out) == 0 {
			b.Fatal("empty")
		}
	}
}

// BenchmarkRequestStateSealOpen seals a small requestState for a tools/call and verifies it
// again: the work an input_required round adds to a request (AES-256-GCM both ways, the
// canonical arguments digest twice).
func BenchmarkRequestStateSealOpen(b *testing.B) {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{
		RequestState: core.RequestStateOptions{Key: make([]byte, 32)},
	})
	msg, derr := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"book","arguments":{"city":"Paris","nights":3,"guests":{"adults":2,"children":[4,9]}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if derr != nil {
		b.Fatal(derr)
	}
	roundTrip, done := core.RequestStateRoundTrip(s, msg)
	defer done()
	const state = `{"round":2,"name":"Alice","hotel":"h-123"}`
	b.ReportAllocs()
	for b.Loop() {
		got, err := roundTrip(state)
		if err != nil || got != state {
			b.Fatalf("round trip gave %q, %v", got, err)
		}
	}
}

// The same tools/call on the 2026-07-28 lifecycle: an ephemeral modern session per request, the
// envelope validated, and the result stamped (resultType, serverInfo).
var modernToolsCallBody = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40,"note":"sum these two numbers"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

func BenchmarkToolsCallTypedModern(b *testing.B) {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "add"}, func(_ context.Context, _ *core.ToolRequest, in addIn) (*core.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(modernToolsCallBody)
		if derr != nil {
			b.Fatal(derr)
		}
		ss := transport.NewSession(s, transport.SessionOptions{Ephemeral: true, Modern: true})
		resp := transport.Core.Handle(ss, ctx, msg, nil)
		ss.Close()
		if resp == nil || resp.Error != nil {
			b.Fatalf("unexpected response %+v", resp)
		}
		if out := transport.Core.EncodeResponseMessage(resp); len(out) == 0 {
			b.Fatal("empty response")
		}
	}
}

// BenchmarkResourceTemplateRead: resources/read resolved through RFC 6570 templates (the match
// of the last of three), legacy session.
func BenchmarkResourceTemplateRead(b *testing.B) {
	srv := newServer(nil)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://a/{id}", Name: "a"}, okResource)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://b/{id}{?q}", Name: "b"}, okResource)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "file:///{+path}{?rev,q}", Name: "files"}, okResource)
	c := newClient(b, srv)
	c.initialize("2025-11-25")
	raw := []byte(body(b, 7, "resources/read", map[string]any{"uri": "file:///docs/guide/intro.md?q=x&rev=2"}))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, derr := transport.Core.DecodeMessage(raw)
		if derr != nil {
			b.Fatal(derr)
		}
		if resp := transport.Core.Handle(c.ss, ctx, msg, nil); resp == nil || resp.Error != nil {
			b.Fatalf("%v", resp)
		}
	}
}
