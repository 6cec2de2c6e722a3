package core

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// A state sealed for one large integer argument must not open for its float64 neighbour: ids
// above 2^53 are common and handlers decode them exactly.
func TestRequestStateBindsLargeIntegersExactly(t *testing.T) {
	s := NewServer(Implementation{Name: "x", Version: "1"}, Options{})
	ss := s.newSession(sessionOptions{})
	defer ss.Close()
	call := func(args string) *Call {
		return decodedCall(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"transfer","arguments":`+args+`}}`)
	}
	token, err := s.sealer.seal(call(`{"account":9007199254740993}`), "confirmed")
	if err != nil {
		t.Fatal(err)
	}
	if _, werr := s.sealer.open(call(`{"account":9007199254740992}`), token); werr == nil {
		t.Fatal("a state sealed for account 9007199254740993 opened for account 9007199254740992")
	}
	if got, werr := s.sealer.open(call(`{ "account" : 9007199254740993 }`), token); werr != nil || got != "confirmed" {
		t.Fatalf("the same arguments written differently: %q, %v", got, werr)
	}
}

// Results a handler shares between calls are never changed by the server.
func TestSharedCompletionResultUnchanged(t *testing.T) {
	values := make([]string, 150)
	for i := range values {
		values[i] = "v"
	}
	shared := &CompleteResult{Completion: Completion{Values: values}}
	s := NewServer(Implementation{Name: "x", Version: "1"}, Options{
		CompletionHandler: func(context.Context, *CompleteRequest) (*CompleteResult, error) { return shared, nil },
	})
	s.AddPrompt(&Prompt{Name: "p"}, func(context.Context, *PromptRequest) (*GetPromptResult, error) { return nil, nil })
	ss := s.newSession(sessionOptions{})
	defer ss.Close()
	m, derr := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`))
	if derr != nil {
		t.Fatal(derr)
	}
	resp := ss.serveMessage(context.Background(), m, nil)
	if resp == nil || resp.Error != nil {
		t.Fatalf("completion failed: %+v", resp)
	}
	if len(shared.Completion.Values) != 150 || shared.Completion.HasMore || shared.Completion.Total != nil {
		t.Fatalf("the shared result was changed: %d values, hasMore=%v", len(shared.Completion.Values), shared.Completion.HasMore)
	}
}

// Nothing of a request follows its response: a goroutine the handler left behind is refused.
func TestNothingAfterTheResponse(t *testing.T) {
	s := NewServer(Implementation{Name: "x", Version: "1"}, Options{})
	leaked := make(chan *Call, 1)
	s.AddTool(&Tool{Name: "bg"}, func(_ context.Context, req *ToolRequest) (*CallToolResult, error) {
		leaked <- req.Call
		return TextResult("done"), nil
	})
	var sent [][]byte
	out := senderFunc(func(_ context.Context, msg []byte) error { sent = append(sent, msg); return nil })
	ss := s.newSession(sessionOptions{Out: out})
	defer ss.Close()
	m, derr := decodeMessage([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bg","_meta":{"progressToken":"p"}}}`))
	if derr != nil {
		t.Fatal(derr)
	}
	if resp := ss.serveMessage(context.Background(), m, nil); resp == nil || resp.Error != nil {
		t.Fatalf("tools/call: %+v", resp)
	}
	c := <-leaked
	if err := c.Progress(50, 100, "still going"); !errors.Is(err, ErrCallOver) {
		t.Errorf("Progress after the response = %v, want ErrCallOver", err)
	}
	if _, err := c.Log(LevelEmergency, "", "late"); !errors.Is(err, ErrCallOver) {
		t.Errorf("Log after the response = %v, want ErrCallOver", err)
	}
	if err := c.Notify("notifications/custom", nil); !errors.Is(err, ErrCallOver) {
		t.Errorf("Notify after the response = %v, want ErrCallOver", err)
	}
	if len(sent) != 0 {
		t.Errorf("sent after the response: %q", sent)
	}
}

// A session cannot grow its subscriptions without bound.
func TestSubscriptionCap(t *testing.T) {
	s := NewServer(Implementation{Name: "x", Version: "1"}, Options{SubscribeHandler: AcceptSubscription, MaxSubscriptions: 2})
	ss := s.newSession(sessionOptions{})
	defer ss.Close()
	sub := func(id int, uri string) *Response {
		m, derr := decodeMessage([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, id, uri)))
		if derr != nil {
			t.Fatal(derr)
		}
		return ss.serveMessage(context.Background(), m, nil)
	}
	for i, uri := range []string{"a://1", "a://2", "a://1"} { // the same URI again is no new entry
		if r := sub(i, uri); r.Error != nil {
			t.Fatalf("subscribe %s: %+v", uri, r.Error)
		}
	}
	if r := sub(9, "a://3"); r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("a third subscription past the cap: %+v", r)
	}
	if !ss.Subscribed("a://2") || ss.Subscribed("a://3") {
		t.Fatal("the refused subscription changed the session's set")
	}
}

// senderFunc adapts a function to Sender.
type senderFunc func(ctx context.Context, msg []byte) error

func (f senderFunc) Send(ctx context.Context, msg []byte) error { return f(ctx, msg) }
