package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// TestMain fails the package when any goroutine outlives the tests: every Serve must have
// ended, with all the work it started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const failsafe = 10 * time.Second

// lockedBuffer is an error log safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// msg is one frame the server wrote.
type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw string
}

// peer is the client end of a stdio server running over real pipes.
type peer struct {
	t      *testing.T
	in     io.WriteCloser // the server's stdin
	lines  chan string    // the server's stdout, line by line
	done   chan error     // Serve's return value
	errLog *lockedBuffer
}

// serve runs stdio.Serve over two io.Pipes. The test must end it (closing p.in); cleanup does so
// and waits for Serve and the reader.
func serve(t *testing.T, srv *core.Server, opts stdio.Options) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &peer{t: t, in: inW, lines: make(chan string, 10000), done: make(chan error, 1), errLog: &lockedBuffer{}}
	opts.In, opts.Out, opts.Logger = inR, outW, logTo(p.errLog)
	go func() {
		err := stdio.Serve(context.Background(), srv, opts)
		outW.Close()
		inR.CloseWithError(errors.New("server ended")) // unblock a writer still writing
		p.done <- err
	}()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.done:
		case <-time.After(failsafe):
			t.Error("Serve did not return after EOF")
		}
		<-readerDone
	})
	return p
}

func (p *peer) write(frame string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, frame); err != nil {
		p.t.Fatalf("writing %q: %v", frame, err)
	}
}

// next reads the next frame and checks that it is one JSON-RPC message.
func (p *peer) next() msg {
	p.t.Helper()
	return parse(p.t, p.nextLine())
}

// nextLine reads the next frame as written.
func (p *peer) nextLine() string {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the server closed stdout")
		}
		return line
	case <-time.After(failsafe):
		p.t.Fatal("no frame from the server")
	}
	return ""
}

// nextBatch reads the next frame, which must be a JSON array of messages.
func (p *peer) nextBatch() []msg {
	p.t.Helper()
	line := p.nextLine()
	var raws []json.RawMessage
	if err := jsonv2.Unmarshal([]byte(line), &raws); err != nil {
		p.t.Fatalf("not a batch reply: %s", line)
	}
	out := make([]msg, len(raws))
	for i, r := range raws {
		out[i] = parse(p.t, string(r))
	}
	return out
}

func parse(t testing.TB, line string) msg {
	t.Helper()
	var m msg
	if err := jsonv2.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("frame is not one JSON message: %q: %v", line, err)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("frame without jsonrpc 2.0: %s", line)
	}
	m.raw = line
	return m
}

// wait waits for Serve to return.
func (p *peer) wait() error {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for cleanup
		return err
	case <-time.After(failsafe):
		p.t.Fatal("Serve did not return")
		return nil
	}
}

// rest returns every frame written until stdout closed.
func (p *peer) rest() []msg {
	var out []msg
	for line := range p.lines {
		out = append(out, parse(p.t, line))
	}
	return out
}

const initFrame = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"

func newServer() *core.Server {
	return core.NewServer(core.Implementation{Name: "stdio-test", Version: "1"}, core.Options{Logger: logTo(io.Discard)})
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func addServer() *core.Server {
	srv := newServer()
	core.AddTool(srv, &core.Tool{Name: "add"}, func(_ context.Context, _ *core.ToolRequest, in addIn) (*core.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	return srv
}

func TestRoundTrip(t *testing.T) {
	p := serve(t, addServer(), stdio.Options{})
	p.write(initFrame)
	m := p.next()
	if string(m.ID) != "0" || m.Error != nil {
		t.Fatalf("initialize: %s", m.raw)
	}
	testutil.ValidateDef(t, "2025-11-25", "InitializeResult", m.Result)
	p.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	p.write(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}` + "\n")
	m = p.next()
	if string(m.ID) != `"list"` || !strings.Contains(string(m.Result), `"name":"add"`) {
		t.Fatalf("tools/list: %s", m.raw)
	}
	testutil.ValidateDef(t, "2025-11-25", "ListToolsResult", m.Result)
	p.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}` + "\n")
	m = p.next()
	if string(m.ID) != "2" || !strings.Contains(string(m.Result), `"structuredContent":{"sum":42}`) {
		t.Fatalf("tools/call: %s", m.raw)
	}
	testutil.ValidateDef(t, "2025-11-25", "JSONRPCResultResponse", []byte(m.raw))
	testutil.ValidateDef(t, "2025-11-25", "CallToolResult", m.Result)

	p.in.Close()
	if err := p.wait(); err != nil {
		t.Errorf("Serve after EOF = %v", err)
	}
}

// TestServerNotifications: list changes and resource updates are written as frames of their own.
func TestServerNotifications(t *testing.T) {
	srv := core.NewServer(core.Implementation{Name: "n", Version: "1"}, core.Options{SubscribeHandler: core.AcceptSubscription})
	srv.AddResource(&core.Resource{URI: "test://r", Name: "r"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "x"}}}, nil
	})
	p := serve(t, srv, stdio.Options{})
	p.write(initFrame)
	p.next()
	p.write(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r"}}` + "\n")
	if m := p.next(); string(m.Result) != "{}" {
		t.Fatalf("subscribe: %s", m.raw)
	}
	srv.NotifyResourceUpdated(context.Background(), "test://r")
	if m := p.next(); m.Method != "notifications/resources/updated" || string(m.Params) != `{"uri":"test://r"}` {
		t.Errorf("updated: %s", m.raw)
	}
	srv.AddTool(&core.Tool{Name: "late"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("x"), nil
	})
	if m := p.next(); m.Method != "notifications/tools/list_changed" || m.ID != nil {
		t.Errorf("list changed: %s", m.raw)
	}
	p.in.Close()
	p.wait()
	// After Serve returned the session is gone: nothing more is written.
	srv.NotifyResourceUpdated(context.Background(), "test://r")
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("written after Serve returned: %v", rest)
	}
}

// slowServer has a tool that blocks until released or cancelled, then waits for finish before
// returning, so a test can observe the time between the cancel and the end.
type slow struct {
	started chan struct{}
	release chan struct{}
	ended   chan error
	finish  chan struct{}
	done    atomic.Bool
}

func slowServer() (*core.Server, *slow) {
	s := &slow{started: make(chan struct{}, 100), release: make(chan struct{}), ended: make(chan error, 100), finish: make(chan struct{})}
	srv := newServer()
	srv.AddTool(&core.Tool{Name: "slow"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		s.started <- struct{}{}
		select {
		case <-s.release:
			s.ended <- nil
			return core.TextResult("released"), nil
		case <-ctx.Done():
			s.ended <- context.Cause(ctx)
		}
		<-s.finish
		s.done.Store(true)
		return nil, ctx.Err()
	})
	return srv, s
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(failsafe):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// TestSlowToolDoesNotStall: a ping sent after a slow call is answered while the call runs, and a
// cancel reaches the slow tool, whose response is then suppressed.
func TestSlowToolDoesNotStall(t *testing.T) {
	srv, s := slowServer()
	close(s.finish)
	p := serve(t, srv, stdio.Options{})
	p.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}` + "\n")
	await(t, s.started, "the slow tool")
	p.write(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != "2" || string(m.Result) != "{}" {
		t.Fatalf("want the ping answered first, got %s", m.raw)
	}
	p.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"stop"}}` + "\n")
	if cause := await(t, s.ended, "the cancel to reach the tool"); !errors.Is(cause, core.ErrCancelled) {
		t.Errorf("cause %v", cause)
	}
	// The cancelled call is not answered: the next frame is the answer to the next ping.
	p.write(`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != "3" {
		t.Errorf("want the ping 3 answer, got %s", m.raw)
	}
	p.in.Close()
	if err := p.wait(); err != nil {
		t.Error(err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("unexpected frames %v", rest)
	}
}

// TestFramesNeverInterleave: many concurrent responses and notifications over a real OS pipe;
// every line must be one whole JSON message.
func TestFramesNeverInterleave(t *testing.T) {
	const calls, perCall = 40, 25
	payload := strings.Repeat("x", 6000) // frames larger than the pipe's atomic write size
	srv := newServer()
	srv.AddTool(&core.Tool{Name: "noisy"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		for i := range perCall {
			if err := req.Progress(float64(i), perCall, payload); err != nil {
				return nil, err
			}
		}
		return core.TextResult(payload), nil
	})
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := stdio.Serve(context.Background(), srv, stdio.Options{In: inR, Out: outW, Logger: logTo(io.Discard)})
		outW.Close()
		done <- err
	}()
	writeDone := make(chan error, 1)
	go func() {
		var b strings.Builder
		for i := range calls {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"noisy","_meta":{"progressToken":%d}}}`+"\n", i, i)
		}
		_, err := io.WriteString(inW, b.String())
		writeDone <- err
	}()
	responses, notes := map[string]bool{}, 0
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := parse(t, sc.Text())
		switch {
		case m.Method == "notifications/progress":
			notes++
		case m.Result != nil:
			responses[string(m.ID)] = true
		default:
			t.Fatalf("unexpected frame %.200s", m.raw)
		}
		if len(responses) == calls && notes == calls*perCall {
			break
		}
	}
	if err := await(t, writeDone, "the writes"); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if err := await(t, done, "Serve"); err != nil {
		t.Error(err)
	}
	for sc.Scan() {
		t.Errorf("extra frame %.200s", sc.Text())
	}
	outR.Close()
	inR.Close()
	if len(responses) != calls || notes != calls*perCall {
		t.Errorf("%d responses and %d notifications, want %d and %d", len(responses), notes, calls, calls*perCall)
	}
}

// countingReader is a stream of 16 MiB without a newline that counts the bytes read from it.
type countingReader struct {
	n atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	left := 16<<20 - r.n.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), left)]
	for i := range p {
		p[i] = 'a'
	}
	r.n.Add(int64(len(p)))
	return len(p), nil
}

// An over-long frame is skipped to its newline and answered, with its id when the bytes within
// the bound name one, and the session goes on serving over the same pipes.
func TestFrameTooLarge(t *testing.T) {
	const limit = 1024
	p := serve(t, newServer(), stdio.Options{MaxLineBytes: limit})
	pad := strings.Repeat("x", 200<<10) // longer than the bound and than the read buffer
	tooLarge := `{"code":-32600,"message":"Payload too large: frame exceeds 1024 bytes"}`
	for _, tt := range []struct{ name, frame, id string }{
		{"id before the long member", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"` + pad + `"}}`, "7"},
		{"string id after other members", `{"jsonrpc":"2.0","method":"tools/call","params":{"n":[1,{"id":9}]},"id":"a\u0062","x":"` + pad + `"}`, `"a\u0062"`},
		{"id past the bound", `{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + pad + `"},"id":8}`, "null"},
		{"not JSON", pad, "null"},
		{"a batch", `[{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + pad + `"}}]`, "null"},
		{"an invalid id", `{"id":1.5,"pad":"` + pad + `"}`, "null"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p.write(tt.frame + "\n" + `{"jsonrpc":"2.0","id":"after","method":"ping"}` + "\n")
			if got, want := p.nextLine(), `{"jsonrpc":"2.0","id":`+tt.id+`,"error":`+tooLarge+`}`; got != want {
				t.Errorf("over-long frame answered\n%s\nwant\n%s", got, want)
			}
			if got := p.nextLine(); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
				t.Errorf("the next frame was answered %s", got)
			}
		})
	}
	if !strings.Contains(p.errLog.String(), `"max_line_bytes":1024,"id":"7","message":"stdio: frame exceeds MaxLineBytes: skipped to its newline"`) {
		t.Errorf("error log %q", p.errLog.String())
	}
}

// A frame that never ends is skipped to the end of the input (nothing of it is kept), answered
// once, and the input's end is a normal one.
func TestEndlessFrame(t *testing.T) {
	const limit = 1024
	var out lockedBuffer
	src := &countingReader{}
	in := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), src)
	if err := stdio.Serve(context.Background(), newServer(), stdio.Options{In: in, Out: &out, Logger: logTo(io.Discard), MaxLineBytes: limit}); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	// The ping runs on its own goroutine: the two answers come in either order.
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	sort.Strings(got)
	want := []string{`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Payload too large: frame exceeds 1024 bytes"}}`}
	if !slices.Equal(got, want) {
		t.Errorf("output %q, want %q", got, want)
	}
	if n := src.n.Load(); n != 16<<20 {
		t.Errorf("read %d bytes of the 16 MiB frame, want all of it skipped", n)
	}
}

func TestFrameAtTheBound(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tt := range []struct {
		name  string
		limit int
		ok    bool
	}{
		{"exactly the bound", len(ping), true},
		{"one over", len(ping) - 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out lockedBuffer
			err := stdio.Serve(context.Background(), newServer(), stdio.Options{In: strings.NewReader(ping + "\n"), Out: &out, Logger: logTo(io.Discard), MaxLineBytes: tt.limit})
			answered := out.String() == `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"
			if err != nil || tt.ok != answered || !tt.ok && !strings.Contains(out.String(), "Payload too large") {
				t.Errorf("Serve = %v, output %q", err, out.String())
			}
		})
	}
	// Longer than the read buffer (64 KiB) but within the bound: served.
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("p", 200<<10) + `"}}`
	var out lockedBuffer
	if err := stdio.Serve(context.Background(), newServer(), stdio.Options{In: strings.NewReader(big + "\n"), Out: &out, Logger: logTo(io.Discard)}); err != nil || out.String() != `{"jsonrpc":"2.0","id":2,"result":{}}`+"\n" {
		t.Errorf("a 200 KiB frame: %v %q", err, out.String())
	}
}

func TestFinalFrameWithoutNewline(t *testing.T) {
	var out lockedBuffer
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `  {"jsonrpc":"2.0","id":2,"method":"ping"}  `)
	if err := stdio.Serve(context.Background(), newServer(), stdio.Options{In: in, Out: &out, Logger: logTo(io.Discard)}); err != nil {
		t.Fatal(err)
	}
	// Requests run concurrently: the answers may come in either order.
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	slices.Sort(got)
	want := []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`}
	if !slices.Equal(got, want) {
		t.Errorf("output %q", out.String())
	}
}

// TestEOFDrainsInFlight: at the end of the input a request in flight is not cancelled: its wait
// for the client's answer fails at once (nobody can answer), the handler goes on, its answer is
// written, and only then does Serve return.
func TestEOFDrainsInFlight(t *testing.T) {
	type seen struct{ wait, ctx error }
	saw := make(chan seen, 1)
	release := make(chan struct{})
	srv := newServer()
	srv.AddTool(&core.Tool{Name: "patient"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_, err := req.ListRoots(ctx)
		saw <- seen{err, ctx.Err()}
		select {
		case <-release:
			return core.TextResult("drained"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	p := serve(t, srv, stdio.Options{})
	p.write(rootsInit)
	p.next()
	p.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"patient"}}` + "\n")
	if m := p.next(); m.Method != "roots/list" {
		t.Fatalf("want roots/list, got %s", m.raw)
	}
	p.in.Close()
	got := await(t, saw, "the end of input to end the wait")
	if !errors.Is(got.wait, core.ErrInputEnded) || got.ctx != nil {
		t.Fatalf("at EOF the wait ended with %v and the context with %v; want ErrInputEnded and a live context", got.wait, got.ctx)
	}
	select {
	case err := <-p.done:
		t.Fatalf("Serve returned (%v) while the tool was still running", err)
	default:
	}
	close(release)
	if err := p.wait(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	rest := p.rest()
	if len(rest) != 1 || string(rest[0].ID) != "1" || !strings.Contains(string(rest[0].Result), "drained") {
		t.Errorf("frames after EOF: %v", rest)
	}
}

// TestDrainTimeout: a request still running DrainTimeout after the end of the input is cancelled
// (with the session's end as the cause); Serve waits for its handler and returns nil. A negative
// DrainTimeout cancels at once.
func TestDrainTimeout(t *testing.T) {
	for _, d := range []time.Duration{20 * time.Millisecond, -1} {
		t.Run(d.String(), func(t *testing.T) {
			srv, s := slowServer()
			p := serve(t, srv, stdio.Options{DrainTimeout: d})
			p.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}` + "\n")
			await(t, s.started, "the slow tool")
			p.in.Close()
			if cause := await(t, s.ended, "the drain to end"); !errors.Is(cause, core.ErrSessionClosed) {
				t.Errorf("cause %v, want the session's end", cause)
			}
			select {
			case err := <-p.done:
				t.Fatalf("Serve returned (%v) while the handler was still running", err)
			default:
			}
			close(s.finish)
			if err := p.wait(); err != nil {
				t.Errorf("Serve = %v", err)
			}
			if !s.done.Load() {
				t.Error("Serve returned before the handler did")
			}
			for _, m := range p.rest() {
				if string(m.ID) == "1" && m.Result != nil {
					t.Errorf("a cancelled call was answered with a result: %s", m.raw)
				}
			}
			if d > 0 && !strings.Contains(p.errLog.String(), "cancelled") {
				t.Errorf("the drain timeout was not logged: %q", p.errLog.String())
			}
		})
	}
}

func TestContextCancelEndsServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- stdio.Serve(ctx, newServer(), stdio.Options{In: inR, Out: &out, Logger: logTo(io.Discard)})
	}()
	// Nothing is ever written: the read blocks on an idle input, and the cancel still ends Serve.
	cancel()
	if err := await(t, done, "Serve"); err != nil {
		t.Errorf("Serve = %v, want nil: a cancelled context is a normal end", err)
	}
	// A frame read after Serve returned is not served, and the reading goroutine ends with the
	// input (the package's leak check fails otherwise).
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	inW.Close()
	if out.String() != "" {
		t.Errorf("written after Serve returned: %q", out.String())
	}
}

func TestBlankLinesIgnored(t *testing.T) {
	var out lockedBuffer
	in := strings.NewReader("\n\n   \n\t\r\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n\n \n")
	if err := stdio.Serve(context.Background(), newServer(), stdio.Options{In: in, Out: &out, Logger: logTo(io.Discard)}); err != nil {
		t.Fatal(err)
	}
	if out.String() != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("output %q", out.String())
	}
}

// TestFramingOverStdio: framing errors are answered on stdout; notifications never are.
func TestFramingOverStdio(t *testing.T) {
	p := serve(t, newServer(), stdio.Options{})
	for _, tt := range []struct {
		frame, want string
	}{
		{`{"jsonrpc":"2.0",`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON"}}`},
		{`"ping"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"Request must be an array or a hash"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"Request is an empty array"}}`},
		{`[1,`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON"}}`},
		// As over HTTP (middleware's TestDecodeBadBodies): the member is named in data.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON: duplicate member \"name\" at /params/name"}}`},
		{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"Request ID must be a string, an integer or null"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"nope"}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found","data":"nope"}}`},
	} {
		// A notification with bad params goes first: it must produce nothing.
		p.write(`{"jsonrpc":"2.0","method":"notifications/x","params":5}` + "\n")
		p.write(tt.frame + "\n")
		if m := p.next(); m.raw != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.frame, m.raw, tt.want)
		}
	}
	p.in.Close()
	p.wait()
}

func TestBatchOverStdio(t *testing.T) {
	p := serve(t, addServer(), stdio.Options{})
	// Mixed: three requests (one with an escaped string id), a notification, an invalid element,
	// a bad-id element.
	p.write(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},5,` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}},{"jsonrpc":"2.0","id":true,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":"\u0061:b é","method":"ping"}]` + "\n")
	batch := p.nextBatch()
	byID := map[string]msg{}
	var nullIDs []msg
	for _, b := range batch {
		if string(b.ID) == "null" {
			nullIDs = append(nullIDs, b)
			continue
		}
		byID[string(b.ID)] = b
	}
	if len(batch) != 5 || string(byID["1"].Result) != "{}" || !strings.Contains(string(byID["2"].Result), `{"sum":3}`) ||
		string(byID[`"\u0061:b é"`].Result) != "{}" || len(nullIDs) != 2 {
		t.Errorf("batch reply %v", batch)
	}
	for _, n := range nullIDs {
		if n.Error == nil || n.Error.Code != -32600 {
			t.Errorf("element error %s", n.raw)
		}
	}
	// One response: unwrapped.
	p.write(`[{"jsonrpc":"2.0","id":"solo","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\n")
	if m := p.next(); !strings.HasPrefix(m.raw, "{") || string(m.ID) != `"solo"` {
		t.Errorf("single-response batch: %s", m.raw)
	}
	// Only notifications: nothing; the next frame answers the ping that follows.
	p.write(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]` + "\n")
	p.write(`{"jsonrpc":"2.0","id":"after","method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != `"after"` {
		t.Errorf("an all-notification batch was answered: %s", m.raw)
	}
	// A duplicate id inside one batch: the second is refused.
	p.write(`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]` + "\n")
	batch = p.nextBatch()
	if len(batch) != 2 {
		t.Fatalf("duplicate-id batch: %v", batch)
	}
	refused := 0
	for _, b := range batch {
		if b.Error != nil && b.Error.Code == -32600 {
			refused++
		}
	}
	// Both are registered before either runs, so exactly the second is refused.
	if refused != 1 {
		t.Errorf("duplicate-id batch: %v", batch)
	}
	p.in.Close()
	p.wait()
}

func TestWriteFailureIsLogged(t *testing.T) {
	elog := &lockedBuffer{}
	err := stdio.Serve(context.Background(), newServer(), stdio.Options{
		In: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), Out: failingWriter{}, Logger: logTo(elog),
	})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Serve = %v, want the write error", err)
	}
	if !strings.Contains(elog.String(), `"error":"disk on fire","message":"stdio: write failed"`) {
		t.Errorf("error log %q", elog.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

// TestDuplicateIDOverStdio: a second request with an id in flight is refused at once, and the
// first is answered when it ends.
func TestDuplicateIDOverStdio(t *testing.T) {
	srv, s := slowServer()
	close(s.finish)
	p := serve(t, srv, stdio.Options{})
	p.write(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}` + "\n")
	await(t, s.started, "the slow tool")
	p.write(`{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\n")
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Invalid Request","data":"Invalid Request: request id \"a\" is already in flight"}}`
	if m := p.next(); m.raw != want {
		t.Errorf("got %s\nwant %s", m.raw, want)
	}
	close(s.release)
	if m := p.next(); string(m.ID) != `"a"` || !strings.Contains(string(m.Result), "released") {
		t.Errorf("first request: %s", m.raw)
	}
	p.in.Close()
	p.wait()
}

// TestMaxInFlight: past the bound a request is answered at once with "Server busy", the reader
// keeps going, and a slot frees when a request finishes.
func TestMaxInFlight(t *testing.T) {
	srv := newServer()
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	srv.AddTool(&core.Tool{Name: "hold"}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return core.TextResult("released"), nil
	})
	p := serve(t, srv, stdio.Options{MaxInFlight: 2})
	hold := func(id int) {
		p.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold"}}`+"\n", id))
	}
	hold(1)
	hold(2)
	await(t, started, "the first call")
	await(t, started, "the second call")
	hold(3)
	m := p.next()
	if string(m.ID) != "3" || m.Error == nil || m.Error.Code != -32603 || m.Error.Message != "Server busy: 2 requests in flight" {
		t.Fatalf("third request past the bound: %s", m.raw)
	}
	// ping is a request too: still refused while both slots are taken.
	p.write(`{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != "4" || m.Error == nil {
		t.Fatalf("ping past the bound: %s", m.raw)
	}
	close(release)
	for range 2 {
		if m := p.next(); m.Error != nil {
			t.Fatalf("held call: %s", m.raw)
		}
	}
	p.write(`{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n")
	if m := p.next(); string(m.ID) != "5" || m.Error != nil {
		t.Fatalf("ping after the slots freed: %s", m.raw)
	}
}

// logTo is a logger writing JSON lines to w.
func logTo(w io.Writer) *zerolog.Logger {
	l := zerolog.New(w)
	return &l
}

// TestPipelinedBehindInitialize: what a client writes right behind initialize, without waiting
// for its answer, is served on the initialized session and answered after it.
func TestPipelinedBehindInitialize(t *testing.T) {
	srv := newServer()
	srv.AddTool(&core.Tool{Name: "who"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if ci := req.ClientInfo(); ci != nil {
			return core.TextResult(ci.Name), nil
		}
		return core.TextResult("nobody"), nil
	})
	for i := range 20 { // concurrent dispatch used to lose this race now and then
		var out lockedBuffer
		in := strings.NewReader(initFrame +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"who"}}` + "\n" +
			`[{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"1"}}}]` + "\n")
		if err := stdio.Serve(context.Background(), srv, stdio.Options{In: in, Out: &out, Logger: logTo(io.Discard)}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("run %d: %d answers: %q", i, len(lines), out.String())
		}
		first := parse(t, lines[0])
		if string(first.ID) != "0" || first.Result == nil {
			t.Fatalf("run %d: first answer %s, want initialize's", i, first.raw)
		}
		// The other two run concurrently: their answers may come in either order.
		byID := map[string]msg{}
		for _, l := range lines[1:] {
			m := parse(t, l)
			byID[string(m.ID)] = m
		}
		if m := byID["1"]; !strings.Contains(string(m.Result), `"text":"c"`) {
			t.Fatalf("run %d: the pipelined call was not served on the initialized session: %s", i, m.raw)
		}
		if m := byID["2"]; m.Error == nil || m.Error.Code != -32600 {
			t.Fatalf("run %d: a second initialize in a batch: %s", i, m.raw)
		}
	}
}

// TestOutputGoneEndsServe: when the output's reader goes away Serve ends at once, with nil, even
// while the input stays open and requests are in flight (which are cancelled).
func TestOutputGoneEndsServe(t *testing.T) {
	srv, s := slowServer()
	close(s.finish)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	defer outW.Close()
	done := make(chan error, 1)
	go func() {
		done <- stdio.Serve(context.Background(), srv, stdio.Options{In: inR, Out: outW, Logger: logTo(io.Discard)})
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	await(t, s.started, "the slow tool")
	outR.Close() // the reader vanished
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if err := await(t, done, "Serve to end"); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if cause := await(t, s.ended, "the slow tool to be cancelled"); cause == nil {
		t.Error("the tool in flight was not cancelled")
	}
	inW.Close() // lets the reading goroutine end (the leak check)
	inR.Close()
}

func TestNegativeMaxLineBytesPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "MaxLineBytes") {
			t.Errorf("recovered %v, want a panic naming MaxLineBytes", r)
		}
	}()
	_ = stdio.Serve(context.Background(), newServer(), stdio.Options{In: strings.NewReader(""), Out: io.Discard, MaxLineBytes: -1})
}
