package transport_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// TestCoreDrivesASession checks that core filled the slot with an implementation of API and that
// a session driven through it answers: decode, handle, encode.
func TestCoreDrivesASession(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{})
	ss := transport.NewSession(s, transport.SessionOptions{})
	defer ss.Close()
	msg, err := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp := transport.Core.Handle(ss, context.Background(), msg, nil)
	if resp == nil || resp.Error != nil {
		t.Fatalf("ping: %+v", resp)
	}
	if got, want := string(transport.Core.EncodeResponseMessage(resp)), `{"jsonrpc":"2.0","id":7,"result":{}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := transport.Core.EncodeMessage(msg); string(got) != `{"jsonrpc":"2.0","id":7,"method":"ping"}` {
		t.Fatalf("re-encoded request: %s", got)
	}
	if _, err := transport.Core.DecodeMessage([]byte(`{`)); err == nil {
		t.Fatal("invalid JSON decoded")
	}
}
