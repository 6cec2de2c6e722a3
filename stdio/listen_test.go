package stdio_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

const metaSubID = `"io.modelcontextprotocol/subscriptionId":`

// listenServer has a tool and a resource, accepts resource subscriptions, and has no prompts (so
// promptsListChanged is never honored).
func listenServer() *core.Server {
	srv := core.NewServer(core.Implementation{Name: "stdio-test", Version: "1"}, core.Options{SubscribeHandler: core.AcceptSubscription})
	srv.AddTool(&core.Tool{Name: "t"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("ok"), nil
	})
	srv.AddResource(&core.Resource{URI: "test://a", Name: "a"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "a"}}}, nil
	})
	return srv
}

func listenFrame(t *testing.T, id any, filter map[string]any) string {
	return frame(t, id, "subscriptions/listen", map[string]any{"notifications": filter}, envelope("2026-07-28"))
}

// Several subscriptions share the one channel: each is acknowledged first with its honored
// filter, receives only what it asked for, tagged with its id; the client's cancel ends one
// (unanswered) while the other goes on; the end of input ends the rest gracefully (cancelled,
// then the complete result last); Serve returns nil.
func TestListenOverStdio(t *testing.T) {
	srv := listenServer()
	p := serve(t, srv, stdio.Options{})
	a, b := `"listen:0"`, `7`
	p.write(listenFrame(t, "listen:0", map[string]any{"toolsListChanged": true, "promptsListChanged": true}))
	p.write(listenFrame(t, 7, map[string]any{"resourcesListChanged": true, "resourceSubscriptions": []string{"test://a"}}))
	// The two acknowledgements, in either order: nothing else exists yet to come first.
	acks := map[string]msg{}
	for range 2 {
		m := p.next()
		for _, id := range []string{a, b} {
			if strings.Contains(string(m.Params), metaSubID+id) {
				acks[id] = m
			}
		}
	}
	ackA, ackB := acks[a], acks[b]
	for _, tc := range []struct {
		ack     msg
		honored string
	}{{ackA, `"notifications":{"toolsListChanged":true}`}, {ackB, `"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["test://a"]}`}} {
		if tc.ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(tc.ack.Params), tc.honored) {
			t.Fatalf("acknowledgement %s, want the honored filter %s", tc.ack.raw, tc.honored)
		}
		testutil.ValidateDef(t, "2026-07-28", "SubscriptionsAcknowledgedNotification", []byte(tc.ack.raw))
	}

	srv.NotifyToolsListChanged(context.Background())
	srv.NotifyPromptsListChanged(context.Background()) // nobody is told: prompts are not honored
	srv.NotifyResourceUpdated(context.Background(), "test://other")
	srv.NotifyResourceUpdated(context.Background(), "test://a")
	// One frame for each, in either order.
	got := map[string]msg{}
	for range 2 {
		m := p.next()
		for _, id := range []string{a, b} {
			if strings.Contains(string(m.Params), metaSubID+id) {
				got[id] = m
			}
		}
	}
	if m := got[a]; m.Method != core.ToolsListChanged {
		t.Fatalf("%s got %s", a, m.raw)
	}
	testutil.ValidateDef(t, "2026-07-28", "ToolListChangedNotification", []byte(got[a].raw))
	if m := got[b]; m.Method != core.ResourceUpdated || !strings.Contains(string(m.Params), `"uri":"test://a"`) {
		t.Fatalf("%s got %s", b, m.raw)
	}

	// The client cancels b: no answer; a keeps receiving, b does not.
	p.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}` + "\n")
	p.write(`{"jsonrpc":"2.0","id":"sync","method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != `"sync"` {
		t.Fatalf("after cancelling %s: %s", b, m.raw)
	}
	// The cancel is handled in line, before the ping: once the ping is answered the handler has
	// been told; its subscription is closed when the handler returns, so wait for a change
	// that reaches a but must not reach b.
	srv.NotifyResourcesListChanged(context.Background())
	srv.NotifyToolsListChanged(context.Background())
	if m := p.next(); m.Method != core.ToolsListChanged || !strings.Contains(string(m.Params), metaSubID+a) {
		t.Fatalf("after the cancel: %s (the cancelled subscription must get nothing, not even an answer)", m.raw)
	}

	p.in.Close()
	if m := p.next(); m.Method != "notifications/cancelled" || !strings.Contains(string(m.Params), `"requestId":`+a) {
		t.Fatalf("at EOF: %s, want notifications/cancelled for %s", m.raw, a)
	}
	res := p.next()
	if string(res.ID) != a || !strings.Contains(string(res.Result), `"resultType":"complete"`) || !strings.Contains(string(res.Result), metaSubID+a) {
		t.Fatalf("at EOF: %s, want the complete result of %s", res.raw, a)
	}
	testutil.ValidateDef(t, "2026-07-28", "SubscriptionsListenResultResponse", []byte(res.raw))
	if err := p.wait(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("after the last result: %v", rest)
	}
}

// Listen over stdio refuses what HTTP refuses: past the cap (-32603 naming it), without a filter
// (-32602), without the envelope on a legacy session (-32600), a duplicate id (-32600).
func TestListenRefusalsOverStdio(t *testing.T) {
	p := serve(t, listenServer(), stdio.Options{MaxListeners: 1})
	p.write(listenFrame(t, 1, map[string]any{"toolsListChanged": true}))
	if m := p.next(); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first listen: %s", m.raw)
	}
	p.write(listenFrame(t, 2, map[string]any{}))
	wantErr(t, p.next(), "2", -32603, "Service unavailable: maximum concurrent subscriptions/listen streams (1) reached")
	p.write(listenFrame(t, 1, map[string]any{}))
	wantErr(t, p.next(), "1", -32600, "")
	p.write(frame(t, 3, "subscriptions/listen", map[string]any{}, envelope("2026-07-28")))
	wantErr(t, p.next(), "3", -32602, "Invalid params: subscriptions/listen requires a `notifications` filter object")
	p.in.Close()
	p.next() // cancelled
	p.next() // the result
	p.wait()

	l := serve(t, listenServer(), stdio.Options{})
	l.write(initFrame)
	l.next()
	l.write(`{"jsonrpc":"2.0","id":4,"method":"subscriptions/listen","params":{"notifications":{}}}` + "\n")
	wantErr(t, l.next(), "4", -32600, "Invalid Request: subscriptions/listen requires the 2026-07-28 `_meta` envelope")
	l.in.Close()
	l.wait()
}

func TestNegativeMaxListenersPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "MaxListeners") {
			t.Errorf("recovered %v, want a panic naming MaxListeners", r)
		}
	}()
	_ = stdio.Serve(context.Background(), newServer(), stdio.Options{In: strings.NewReader(""), MaxListeners: -1})
}
