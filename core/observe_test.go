package core_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// endedOp is what a test keeps of an ended operation.
type endedOp struct {
	Method, Target, ErrorType, ProtocolVersion string
	ErrorCode                                  int64
	ToolError                                  bool
	Result                                     []byte
	Transport                                  core.Transport
	Start, End                                 time.Time
}

func snapshot(op *core.Operation) endedOp {
	return endedOp{Method: op.Method, Target: op.Target, ErrorCode: op.ErrorCode, ErrorType: op.ErrorType,
		ToolError: op.ToolError, Result: op.Result, ProtocolVersion: op.ProtocolVersion, Transport: op.Transport,
		Start: op.Start, End: op.End}
}

// recordingObserver keeps what it is told, in order.
type recordingObserver struct {
	mu       sync.Mutex
	started  []string
	ended    []endedOp
	sessions []core.SessionReport
}

func (r *recordingObserver) StartOperation(ctx context.Context, op *core.Operation) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, op.Method)
	return ctx
}

func (r *recordingObserver) EndOperation(_ context.Context, op *core.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, snapshot(op))
}

func (r *recordingObserver) SessionEnded(s *core.SessionReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions = append(r.sessions, *s)
}

// observedServer has a tool "wait" that says it runs on running (when not nil), then waits for
// block to close and fails.
func observedServer(obs core.Observer, running, block chan struct{}) *core.Server {
	nop := zerolog.Nop()
	s := core.NewServer(core.Implementation{Name: "o", Version: "1"}, core.Options{Observer: obs, Logger: &nop})
	core.AddTool(s, &core.Tool{Name: "wait"}, func(ctx context.Context, _ *core.ToolRequest, _ struct{}) (*core.CallToolResult, any, error) {
		if running != nil {
			close(running)
		}
		<-block
		return nil, nil, errors.New("late failure")
	})
	return s
}

func decode(t *testing.T, raw string) *jsonrpc.Message {
	t.Helper()
	m, err := transport.Core.DecodeMessage([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const initRaw = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestObserverSeesEveryMessage: requests, notifications and the session's end reach the server's
// observer, with the outcome and the session's transport.
func TestObserverSeesEveryMessage(t *testing.T) {
	rec := &recordingObserver{}
	block := make(chan struct{})
	close(block)
	s := observedServer(rec, nil, block)
	ss := transport.NewSession(s, transport.SessionOptions{Transport: transport.Pipe})
	ctx := context.Background()
	transport.Core.Handle(ss, ctx, decode(t, initRaw), nil)
	transport.Core.Handle(ss, ctx, decode(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	transport.Core.Handle(ss, ctx, decode(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`), nil)
	transport.Core.Handle(ss, ctx, decode(t, `{"jsonrpc":"2.0","id":3,"method":"nope"}`), nil)
	ss.Close()
	ss.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ended) != 4 || len(rec.started) != 4 {
		t.Fatalf("started %v, ended %d", rec.started, len(rec.ended))
	}
	if e := rec.ended[0]; e.Method != "initialize" || e.ProtocolVersion != "2025-11-25" || e.Transport != transport.Pipe || e.End.Before(e.Start) {
		t.Errorf("initialize: %+v", e)
	}
	if e := rec.ended[2]; e.Target != "wait" || !e.ToolError || e.ErrorCode != 0 || len(e.Result) == 0 {
		t.Errorf("tool error: %+v", e)
	}
	if e := rec.ended[3]; e.ErrorCode != jsonrpc.CodeMethodNotFound {
		t.Errorf("unknown method: %+v", e)
	}
	if len(rec.sessions) != 1 || rec.sessions[0].ProtocolVersion != "2025-11-25" || rec.sessions[0].End.Before(rec.sessions[0].Start) {
		t.Errorf("session reports %+v, want one", rec.sessions)
	}
}

// TestTransportOperationHandover: an operation a transport started is filled in by core, and
// when the transport releases it while core still serves the request, it is ended only once the
// request is over, with the final outcome.
func TestTransportOperationHandover(t *testing.T) {
	running, block := make(chan struct{}), make(chan struct{})
	s := observedServer(nil, running, block)
	ss := transport.NewSession(s, transport.SessionOptions{})
	transport.Core.Handle(ss, context.Background(), decode(t, initRaw), nil)

	op := &core.Operation{Method: "tools/call"}
	ctx := transport.Core.WithOperation(context.Background(), op)
	call, err := transport.Core.Begin(ss, ctx, decode(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *core.Response)
	go func() { done <- transport.Core.Run(call) }()
	<-running // core claimed the operation before the handler ran

	// A second message in the same exchange (a batch) never takes the same operation.
	other, err := transport.Core.Begin(ss, ctx, decode(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	transport.Core.Run(other)

	ended := make(chan endedOp, 1)
	transport.Core.Release(op, func() { ended <- snapshot(op) })
	select {
	case e := <-ended:
		t.Fatalf("ended while core still serves the request: %+v", e)
	default:
	}
	close(block)
	<-done
	e := <-ended
	if !e.ToolError || e.End.IsZero() {
		t.Errorf("the ending did not see the outcome: %+v", e)
	}
	if e.Method != "tools/call" {
		t.Errorf("the operation was taken by another message: %q", e.Method)
	}
}

func TestObserversComposition(t *testing.T) {
	if transport.Core.Observers() != nil || transport.Core.Observers(nil, nil) != nil {
		t.Error("no observer must compose to nil")
	}
	a := &recordingObserver{}
	if transport.Core.Observers(nil, a) != core.Observer(a) {
		t.Error("one observer must compose to itself")
	}
	b := &recordingObserver{}
	both := transport.Core.Observers(a, b)
	op := &core.Operation{Method: "m"}
	both.EndOperation(both.StartOperation(context.Background(), op), op)
	both.SessionEnded(&core.SessionReport{})
	if len(a.ended) != 1 || len(b.ended) != 1 || len(a.sessions) != 1 || len(b.sessions) != 1 {
		t.Errorf("a %+v, b %+v", a, b)
	}
}

// failingSender is a session-level path on which every send fails.
type failingSender struct{}

func (failingSender) Send(context.Context, []byte) error { return errors.New("the path is gone") }

// switchedObserver is a recordingObserver with an Enabled method the test flips.
type switchedObserver struct {
	recordingObserver
	on atomic.Bool
}

func (o *switchedObserver) Enabled() bool { return o.on.Load() }

// TestObserverEnabled: while an observer reports through Enabled that it records nothing, core
// starts no operation for a request, a notification or a server-to-client request (neither
// StartOperation nor EndOperation is called), and from the next message on once it reports
// true; an operation a transport started is completed either way. Composed with an observer
// that has no Enabled method, it is always called.
func TestObserverEnabled(t *testing.T) {
	obs := &switchedObserver{}
	block := make(chan struct{})
	close(block)
	s := observedServer(obs, nil, block)
	ss := transport.NewSession(s, transport.SessionOptions{Out: failingSender{}})
	ctx := context.Background()
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait","arguments":{}}}`
	transport.Core.Handle(ss, ctx, decode(t, initRaw), nil)
	transport.Core.Handle(ss, ctx, decode(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	transport.Core.Handle(ss, ctx, decode(t, fmt.Sprintf(call, 2)), nil)
	if err := ss.Ping(ctx); err == nil {
		t.Error("a ping on a path that fails succeeded")
	}
	obs.mu.Lock()
	if len(obs.started) != 0 || len(obs.ended) != 0 {
		t.Errorf("disabled observer: started %v, ended %d", obs.started, len(obs.ended))
	}
	obs.mu.Unlock()

	op := &core.Operation{}
	transport.Core.Handle(ss, transport.Core.WithOperation(ctx, op), decode(t, fmt.Sprintf(call, 3)), nil)
	ended := make(chan endedOp, 1)
	transport.Core.Release(op, func() { ended <- snapshot(op) })
	if e := <-ended; !e.ToolError || e.End.IsZero() {
		t.Errorf("a transport's operation was not completed: %+v", e)
	}

	obs.on.Store(true)
	transport.Core.Handle(ss, ctx, decode(t, fmt.Sprintf(call, 4)), nil)
	transport.Core.Handle(ss, ctx, decode(t, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`), nil)
	_ = ss.Ping(ctx)
	obs.mu.Lock()
	if len(obs.started) != 3 || len(obs.ended) != 3 || obs.started[2] != "ping" || obs.ended[0].Target != "wait" || obs.ended[0].Start.IsZero() {
		t.Errorf("enabled observer: started %v, ended %+v", obs.started, obs.ended)
	}
	obs.mu.Unlock()

	obs.on.Store(false)
	plain := &recordingObserver{}
	both := transport.Core.Observers(obs, plain)
	if e, ok := both.(interface{ Enabled() bool }); !ok || !e.Enabled() {
		t.Error("a composition with an observer without Enabled must report enabled")
	}
	if e := transport.Core.Observers(obs, &switchedObserver{}).(interface{ Enabled() bool }); e.Enabled() {
		t.Error("a composition of disabled observers must report disabled")
	}
}
