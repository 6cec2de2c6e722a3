package core_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// TestRequestStateKeyRing: a token sealed with the current key opens on a replica that lists
// that key among its old ones (mid-rotation), a replica that has rotated keeps opening tokens of
// the key it retired, and a key that is in neither place is refused.
func TestRequestStateKeyRing(t *testing.T) {
	opts := func(current []byte, old ...[]byte) *core.Options {
		return &core.Options{RequestState: core.RequestStateOptions{Key: current, OldKeys: old, TTL: time.Minute}}
	}
	before := newMRTR(t, opts(key(1)), stateEcho)           // not rotated yet
	during := newMRTR(t, opts(key(1), key(2)), stateEcho)   // knows the next key
	after := newMRTR(t, opts(key(2), key(1)), stateEcho)    // rotated, still opens key 1
	stranger := newMRTR(t, opts(key(3), key(4)), stateEcho) // another ring altogether
	tool := map[string]any{"name": "t", "arguments": map[string]any{"a": 1}}
	issue := func(h *mrtrHarness) string {
		w := newClient(t, h.srv).modernCallCtx(as("alice"), "tools/call", tool, nil)
		return wantInputRequired(t, w, "CallToolResult").state(t)
	}
	open := func(h *mrtrHarness, token string) *wire {
		return newClient(t, h.srv).modernCallCtx(as("alice"), "tools/call", with(tool, "requestState", token), nil)
	}
	for _, c := range []struct {
		name     string
		from, to *mrtrHarness
	}{
		{"old key, on a rotated replica", before, after},
		{"old key, mid-rotation", before, during},
		{"new key, on a replica that lists it as old", after, during},
		{"new key, on its own ring", after, after},
	} {
		if got := complete(t, open(c.to, issue(c.from)), "CallToolResult"); got != "state=issued" {
			t.Errorf("%s: completed with %q", c.name, got)
		}
	}
	w := open(stranger, issue(after))
	wantError(t, w, -32602, badState, badState)
	// A replica that never had the new key cannot open its tokens: rotate OldKeys first.
	wantError(t, open(before, issue(after)), -32602, badState, badState)
}

func TestRequestStateOldKeyLength(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(sprint(r), "RequestState.OldKeys[1] must be 32 bytes, not 5") {
			t.Fatalf("panic %v, want the bad old key named", r)
		}
	}()
	core.NewServer(core.Implementation{Name: "x", Version: "1"}, core.Options{
		RequestState: core.RequestStateOptions{OldKeys: [][]byte{key(1), make([]byte, 5)}},
	})
}

// persisted records every state the Persist hook was given.
type persisted struct {
	mu   sync.Mutex
	list []core.SessionState
	fail error
}

func (p *persisted) persist(_ context.Context, st core.SessionState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, st)
	return p.fail
}

func (p *persisted) last(t *testing.T) core.SessionState {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.list) == 0 {
		t.Fatal("nothing was persisted")
	}
	return p.list[len(p.list)-1]
}

func (p *persisted) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.list)
}

// TestSessionStatePersistAndRestore: initialize, setLevel, subscribe and unsubscribe write the
// state through the hook, and a session built from that state on another server (a replica)
// behaves as initialized: same version, capabilities, level and subscriptions.
func TestSessionStatePersistAndRestore(t *testing.T) {
	srv := newServer(&core.Options{SubscribeHandler: core.AcceptSubscription})
	c := newClient(t, srv)
	p := &persisted{}
	transport.Core.SetHooks(c.ss, transport.SessionHooks{Persist: p.persist})
	c.initialize(core.Version20250618)
	if st := p.last(t); !st.Initialized || st.ProtocolVersion != core.Version20250618 || st.ClientInfo == nil || st.ClientInfo.Name != "test-client" || !st.ClientCapabilities.Has("sampling") {
		t.Fatalf("initialize persisted %+v", st)
	}
	c.result("logging/setLevel", map[string]any{"level": "error"}, "", nil)
	c.result("resources/subscribe", map[string]any{"uri": "test://b"}, "", nil)
	c.result("resources/subscribe", map[string]any{"uri": "test://a"}, "", nil)
	n := p.count()
	c.result("resources/subscribe", map[string]any{"uri": "test://a"}, "", nil) // no change
	if p.count() != n {
		t.Error("a subscription the session already had was written again")
	}
	c.result("resources/unsubscribe", map[string]any{"uri": "test://b"}, "", nil)
	st := p.last(t)
	if st.LogLevel != core.LevelError || !slices.Equal(st.Subscriptions, []string{"test://a"}) {
		t.Fatalf("persisted %+v", st)
	}

	replica := newServer(&core.Options{SubscribeHandler: core.AcceptSubscription})
	rs := transport.NewSession(replica, transport.SessionOptions{ID: "s1", State: &st})
	defer rs.Close()
	if !rs.Initialized() || rs.ProtocolVersion() != core.Version20250618 || rs.LogLevel() != core.LevelError || !rs.Subscribed("test://a") || rs.Subscribed("test://b") {
		t.Fatalf("rebuilt session: init=%v version=%q level=%q", rs.Initialized(), rs.ProtocolVersion(), rs.LogLevel())
	}
	if got := transport.Core.State(rs); got.ProtocolVersion != st.ProtocolVersion || !rs.ClientCapabilities().Has("sampling") {
		t.Fatalf("rebuilt state %+v", got)
	}
	// A rebuilt session serves requests at once and refuses a second initialize.
	resp := replyOn(rs, body(t, 1, "initialize", map[string]any{
		"protocolVersion": core.Version20250618, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "x", "version": "1"},
	}), nil)
	wantError(t, parseWire(t, resp), -32600, "Invalid Request", "Invalid Request: Server already initialized")
	if w := parseWire(t, replyOn(rs, body(t, 2, "ping", nil), nil)); w.Error != nil {
		t.Fatalf("ping on the rebuilt session: %s", w)
	}
	// Restore replaces the state (a change made on another replica).
	transport.Core.Restore(rs, core.SessionState{Initialized: true, ProtocolVersion: core.Version20250618, LogLevel: core.LevelDebug})
	if rs.LogLevel() != core.LevelDebug || rs.Subscribed("test://a") {
		t.Fatal("Restore did not replace the state")
	}
}

// TestSessionStatePersistFailure: a state that cannot be saved answers -32603 and says so.
func TestSessionStatePersistFailure(t *testing.T) {
	c := newClient(t, newServer(nil))
	transport.Core.SetHooks(c.ss, transport.SessionHooks{Persist: (&persisted{fail: errors.New("store down")}).persist})
	w := c.send(body(t, 1, "initialize", map[string]any{
		"protocolVersion": core.Version20250618, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "x", "version": "1"},
	}))
	wantError(t, w, -32603, "Internal error", "Service unavailable: the session could not be saved")
}

// TestSessionForwardAndDeliver: a client response no local request waits for and a cancel for a
// call that does not run here go to the Forward hook; Deliver on the session that waits hands
// the answer to its request and the cancel to its call, and never forwards.
func TestSessionForwardAndDeliver(t *testing.T) {
	srv := newServer(nil)
	asked := make(chan string, 1)
	srv.AddTool(&core.Tool{Name: "ask", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		res, err := req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 5, Messages: []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("hi")}}}})
		if err != nil {
			return nil, err
		}
		return core.TextResult(res.Model), nil
	})
	srv.AddTool(&core.Tool{Name: "wait", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		asked <- "running"
		<-ctx.Done()
		return core.TextResult("cancelled"), nil
	})
	holder := newClient(t, srv) // the replica running the calls
	holder.initialize(core.Version20250618)
	other := transport.NewSession(srv, transport.SessionOptions{ID: "same", State: &core.SessionState{Initialized: true, ProtocolVersion: core.Version20250618}})
	defer other.Close()
	forwarded := make(chan *jsonrpc.Message, 4)
	transport.Core.SetHooks(other, transport.SessionHooks{Forward: func(_ context.Context, m *jsonrpc.Message) { forwarded <- m }})

	path := newSink()
	done := make(chan []byte, 1)
	go func() { done <- replyOn(holder.ss, body(t, 7, "tools/call", map[string]any{"name": "ask"}), path) }()
	req := path.next(t)
	if req.Method != "sampling/createMessage" {
		t.Fatalf("sent %s", req)
	}
	answer := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"role":"assistant","model":"m1","content":{"type":"text","text":"ok"}}}`
	if replyOn(other, answer, nil) != nil {
		t.Fatal("a response got a reply")
	}
	m := await(t, forwarded, "the forwarded answer")
	if !m.IsResponse() {
		t.Fatalf("forwarded %+v", m)
	}
	if transport.Core.Deliver(other, m) {
		t.Fatal("Deliver on a session that waits for nothing took the answer")
	}
	if !transport.Core.Deliver(holder.ss, m) {
		t.Fatal("the waiting session did not take the answer")
	}
	if got := parseWire(t, await(t, done, "the tool's response")); got.Error != nil || !strings.Contains(string(got.Result), "m1") {
		t.Fatalf("tools/call answered %s", got)
	}

	go func() {
		done <- replyOn(holder.ss, body(t, 8, "tools/call", map[string]any{"name": "wait"}), newSink())
	}()
	await(t, asked, "the call to run")
	if replyOn(other, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`, nil) != nil {
		t.Fatal("a notification got a reply")
	}
	m = await(t, forwarded, "the forwarded cancel")
	if m.Method != "notifications/cancelled" || !transport.Core.Deliver(holder.ss, m) {
		t.Fatalf("the cancel was not delivered: %+v", m)
	}
	if b := await(t, done, "the cancelled call to end"); b != nil {
		t.Fatalf("a cancelled call answered %s", b)
	}
}

// TestSessionRemotePath: with no local session-level path, Notify takes the remote one; a local
// path always wins, and broadcasts never take the remote one.
func TestSessionRemotePath(t *testing.T) {
	srv := newServer(nil)
	ss := transport.NewSession(srv, transport.SessionOptions{ID: "s", State: &core.SessionState{Initialized: true, ProtocolVersion: core.Version20250618}})
	defer ss.Close()
	remote := newSink()
	transport.Core.SetHooks(ss, transport.SessionHooks{Remote: remote})
	if err := ss.Notify(context.Background(), "notifications/message", map[string]any{"level": "info", "data": "x"}); err != nil {
		t.Fatal(err)
	}
	if w := remote.next(t); w.Method != "notifications/message" {
		t.Fatalf("remote got %s", w)
	}
	if err := srv.NotifyToolsListChanged(context.Background()); err != nil {
		t.Fatal(err)
	}
	local := newSink()
	transport.Core.SetOut(ss, local)
	if err := srv.NotifyToolsListChanged(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := local.next(t); w.Method != core.ToolsListChanged {
		t.Fatalf("local got %s", w)
	}
	if got := remote.all(t); len(got) != 1 {
		t.Fatalf("the remote path got %d messages, want the one notification (broadcasts stay local)", len(got))
	}
}
