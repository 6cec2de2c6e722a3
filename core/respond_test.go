package core

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
)

// TestToolWireEncodesAsMarshalAndStamp: a tool result written in one pass (with the 2026-07-28
// members or without) is byte for byte what encoding the result and stamping it gives.
func TestToolWireEncodesAsMarshalAndStamp(t *testing.T) {
	s := NewServer(Implementation{Name: "srv \"q\" <&>", Version: "1\u2028"}, Options{})
	ss := s.newSession(sessionOptions{})
	defer ss.Close()
	c := decodedCall(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	tricky := "a\"b\\c\n\u2028<&>\u00e9\U0001F600\x01"
	results := []*CallToolResult{
		{},
		{Content: []Content{}},
		{Content: []Content{Text(tricky), Image("aGk=", "image/png")}, IsError: true},
		{Content: []Content{Text("x")}, Meta: Meta{}},
		{Content: []Content{Text("x")}, Meta: Meta{"b": 1, "a": []any{"z", nil}, "c": map[string]any{"y": 2, "x": 1}}},
		{Content: []Content{Text("x")}, Meta: Meta{metakey.ServerInfo: "mine", "a": 1}},
		{Content: []Content{Text("x")}, modern: modern{ResultType: "input_required"}},
		{Meta: Meta{"k": tricky}, modern: modern{ResultType: "complete"}},
	}
	enc, err := marshal(map[string]any{"s": tricky, "n": []any{1.5, nil, true}})
	if err != nil {
		t.Fatal(err)
	}
	scs := [][]byte{nil, []byte(`{"sum":42}`), enc} // as the encoder writes structured content
	for i, r := range results {
		for j, sc := range scs {
			for _, text := range []bool{false, true} {
				w := toolWire{res: r, structured: sc}
				want := *r // what finishToolResult made before: a copy with the encoded value set
				if sc != nil {
					want.StructuredContent = rawJSON(sc)
				}
				if text {
					if sc == nil {
						continue
					}
					w.text = sc
					want.Content = []Content{Text(string(sc))}
				}
				legacy, err := marshal(&want)
				if err != nil {
					t.Fatal(err)
				}
				got, err := w.appendTo(nil, nil)
				if err != nil || string(got) != string(legacy) {
					t.Errorf("result %d, content %d, text %v: got %s (%v), want %s", i, j, text, got, err, legacy)
				}
				stamped := c.stampModern(legacy)
				got, err = w.appendTo(nil, s.serverInfoJSON())
				if err != nil || string(got) != string(stamped) {
					t.Errorf("result %d, content %d, text %v, stamped: got %s (%v), want %s", i, j, text, got, err, stamped)
				}
			}
		}
	}
}

// decodedCall decodes body and makes the call of it on ss, as Begin would (without registering
// it).
func decodedCall(t testing.TB, ss *Session, body string) *Call {
	t.Helper()
	m, derr := decodeMessage([]byte(body))
	if derr != nil {
		t.Fatal(derr)
	}
	c := newCall(ss, m, nil)
	c.ctx = context.Background()
	return c
}

// rawJSON is encoded JSON that marshals as itself.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// TestRespondWritesOneMessage: the response of a call is written once, with the result inside
// it, and Encode returns it while the response is as respond made it.
func TestRespondWritesOneMessage(t *testing.T) {
	s := NewServer(Implementation{Name: "srv", Version: "1"}, Options{})
	ss := s.newSession(sessionOptions{})
	defer ss.Close()
	c := decodedCall(t, ss, `{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"x"}}`)
	for _, result := range []any{nil, TextResult("hi"), map[string]any{"b": 2, "a": 1}} {
		resp, err := c.respond(result)
		if err != nil {
			t.Fatal(err)
		}
		want := encodeResponse(resp.ID, resp.Result)
		if got := resp.encode(); string(got) != string(want) {
			t.Fatalf("Encode() = %s, want %s", got, want)
		}
		if got := resp.encode(); &got[0] != &resp.wire[0] {
			t.Fatal("Encode wrote the message again")
		}
		changed := *resp
		changed.Result = []byte(`{"other":true}`)
		if got := changed.encode(); string(got) != string(encodeResponse(resp.ID, changed.Result)) {
			t.Fatalf("Encode after Result changed = %s", got)
		}
		changed = *resp
		changed.ID = jsonrpc.IntID(9)
		if got := changed.encode(); string(got) != string(encodeResponse(changed.ID, resp.Result)) {
			t.Fatalf("Encode after ID changed = %s", got)
		}
	}
}

// TestDecodedMethodNamesAreShared: the name of a method the kit serves is not allocated per
// message.
func TestDecodedMethodNamesAreShared(t *testing.T) {
	for _, method := range []string{"tools/call", "initialize", "notifications/cancelled"} {
		m, derr := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`))
		if derr != nil {
			t.Fatal(derr)
		}
		if known, ok := codec.KnownMethod(method); !ok || unsafe.StringData(m.Method) != unsafe.StringData(known) {
			t.Errorf("method %s was allocated again", method)
		}
	}
	m, derr := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"t\u006fols/call"}`))
	if derr != nil || m.Method != "tools/call" {
		t.Fatalf("escaped method name: %v %v", m, derr)
	}
}

type otherKey struct{}

// TestCallContext: a call's context carries the call and its parent's values, and ending the
// call ends what was derived from it, with the cause.
func TestCallContext(t *testing.T) {
	s := NewServer(Implementation{Name: "srv", Version: "1"}, Options{})
	ss := s.newSession(sessionOptions{})
	defer ss.Close()
	c := decodedCall(t, ss, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.setContext(context.WithValue(context.Background(), otherKey{}, "v"))
	if CallFromContext(c.ctx) != c || c.ctx.Value(otherKey{}) != "v" {
		t.Fatal("the call's context lost the call or its parent's value")
	}
	child, stop := context.WithCancel(c.ctx)
	defer stop()
	if CallFromContext(child) != c {
		t.Fatal("a derived context lost the call")
	}
	c.cancel(ErrCancelled)
	<-child.Done()
	if !errors.Is(context.Cause(child), ErrCancelled) || !errors.Is(context.Cause(c.ctx), ErrCancelled) {
		t.Fatalf("causes %v, %v", context.Cause(child), context.Cause(c.ctx))
	}
}
