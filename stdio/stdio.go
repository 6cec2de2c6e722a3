// Package stdio serves MCP over newline-delimited JSON-RPC on a reader and a writer (stdin and
// stdout by default), driving the same core as the HTTP endpoint.
//
// One process is one session. Every line is one JSON-RPC message or a batch array (a batch is
// answered with one array of the responses, unwrapped when there is exactly one, and not at all
// when it held only notifications). Blank lines are ignored, a final line without a newline is
// served at EOF, and notifications are never answered, not even malformed ones. Writes are
// serialized so frames never interleave, and each frame is written in one Write call.
//
// Ordering: initialize and server/discover are served before the next frame is read, so what a
// client pipelines behind them (the printf | server use) is served on the session they set up,
// in order. Every other request runs concurrently with the ones around it, so a slow tool never
// stalls ping or notifications/cancelled; their answers come in the order they finish.
//
// A frame longer than Options.MaxLineBytes is not kept: the rest of it is read and dropped up to
// the next newline, it is answered with -32600 "Payload too large: frame exceeds N bytes" (with
// the request's id when its first MaxLineBytes bytes name one, else a null id), and the session
// goes on with the next frame.
//
// Ending: when the input ends (EOF or a read error), the requests in flight finish and are answered, for at most
// Options.DrainTimeout (10 s by default); whatever still runs then is cancelled. Server-to-client
// requests cannot be answered once the input ended, so a handler waiting for one is released at
// once (core.ErrInputEnded). When the context is cancelled, or the output fails (its reader went
// away), the requests in flight are cancelled at once. Either way Serve waits for the handlers
// to return, and nothing is written after it returns.
//
// subscriptions/listen (2026-07-28) is served on the one channel, as the specification defines it
// for stdio: several subscriptions may be open at once, each one's acknowledgement comes before
// anything else tagged with its id (other subscriptions' messages may come between), every
// notification carries the subscription id in _meta, the client's notifications/cancelled for the
// listen id ends that subscription, and the end of the input or of Serve ends all of them
// gracefully: notifications/cancelled for the listen id, then the complete result as the
// subscription's last message. The filters, the honored subset and the cap (Options.MaxListeners)
// are those of the HTTP endpoint, and server/discover advertises listChanged and subscribe.
//
// The process is one connection, so its lifecycle is decided once: a successful initialize
// locks it to the legacy lifecycle, a successful server/discover or 2026-07-28 request locks it
// to the modern one (see package core).
package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/listen"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// DefaultMaxLineBytes is the frame bound used when Options.MaxLineBytes is zero: 4 MiB.
const DefaultMaxLineBytes = 4 << 20

// DefaultMaxInFlight is the bound on concurrent requests when Options.MaxInFlight is zero.
const DefaultMaxInFlight = 1000

// DefaultDrainTimeout is how long the requests in flight at the end of the input may run on when
// Options.DrainTimeout is zero.
const DefaultDrainTimeout = 10 * time.Second

// Options configure Serve. The zero value reads stdin, writes stdout and logs to stderr.
type Options struct {
	// In is where frames are read. Nil means os.Stdin.
	In io.Reader
	// Out is where frames are written. Nil means os.Stdout.
	Out io.Writer
	// Logger receives transport problems (an over-long frame, a failed write, a drain that
	// timed out) at error level. Nil means zerolog's global logger
	// (github.com/rs/zerolog/log.Logger, stderr unless the program changed it); a pointer to
	// zerolog.Nop() silences it. It never writes to Out. The server's own log (handler errors,
	// panics) is core.Options.Logger, of the same type.
	Logger *zerolog.Logger
	// MaxLineBytes bounds one frame, newline excluded. Zero means DefaultMaxLineBytes (4 MiB).
	// Negative is invalid. A longer frame is skipped to its newline and answered with -32600
	// "Payload too large"; the session goes on. Skipping holds no more than MaxLineBytes.
	MaxLineBytes int
	// MaxInFlight bounds the requests served at once. Zero means DefaultMaxInFlight (1000);
	// negative removes the bound. A request past it is answered at once with -32603 "Server
	// busy: N requests in flight" (the reader never waits, so answers to the server's own
	// requests keep flowing).
	MaxInFlight int
	// DrainTimeout bounds how long the requests in flight when the input ends may run on before
	// they are cancelled. Zero means DefaultDrainTimeout (10 s); negative cancels them at once.
	DrainTimeout time.Duration
	// LogMessages writes one line per message served on Logger, at info level (error level for
	// -32603 answers): method, JSON-RPC id, protocol version, outcome (error_code, error_type or
	// tool_error), duration, params and result sizes, and the trace id when a span is recording.
	// Never the contents. Off by default. Spans and metrics come from core.Options.Observer
	// (package otelmcp), which stdio drives like every transport.
	LogMessages bool
	// MaxListeners caps the subscriptions/listen subscriptions open at once. Zero means
	// listen.DefaultMax (1000); negative is invalid. Past it a listen request is
	// answered -32603 naming the cap.
	MaxListeners int
}

// Serve serves one session on the reader and writer until the input ends, the context is
// cancelled or the output fails. At the end of the input the requests in flight are drained (see
// Options.DrainTimeout); on a cancelled context or a failed output they are cancelled at once.
// Serve then waits for every handler to return; nothing is written after it returns.
//
// It returns nil for the normal ends: EOF, a cancelled context (a shutdown signal), and an output
// whose reader went away (EPIPE or a closed pipe). It returns the error for any other read or
// write failure. An over-long frame does not end it (see Options.MaxLineBytes).
//
// A read in progress cannot be interrupted: on a cancelled context Serve returns without waiting
// for it, and a frame that read delivers later is not served.
//
// Go kills a process that writes to a closed stdout or stderr pipe with SIGPIPE (exit 141) unless
// the program asks to be told about the signal. While Serve writes to an *os.File it does ask
// (signal.Notify), so a vanished reader is an ordinary write error that ends Serve cleanly; the
// default disposition is restored when Serve returns.
func Serve(ctx context.Context, s *core.Server, opts Options) error {
	c := newConn(s, opts)
	if _, ok := c.out.(*os.File); ok {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGPIPE)
		defer signal.Stop(sig)
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	// The read runs on its own goroutine so that a cancelled ctx ends Serve even while the
	// reader blocks (an idle stdin). That goroutine ends with the reader's next frame or EOF;
	// nothing it reads after Serve returned is served.
	done := make(chan error, 1)
	go func() { done <- c.readLoop() }()
	var err error
	select {
	case err = <-done:
		c.drain(ctx)
	case <-ctx.Done():
	case <-c.outFailed:
	}
	c.close()
	if err == nil {
		err = c.writeErr()
	}
	return err
}

type conn struct {
	server  *core.Server
	in      io.Reader
	log     *zerolog.Logger
	maxLine int
	drainT  time.Duration

	maxInFlight int64
	inFlight    atomic.Int64

	wmu     sync.Mutex // orders frames on the pipe; held only by this connection
	out     io.Writer
	wbuf    []byte // frame being written, reused
	closed  bool   // set once Serve is returning: nothing more is written
	werr    error  // the first write failure; nothing is written after it
	failOne sync.Once
	// outFailed is closed at the first write failure: the output is unusable (a partial
	// frame may have gone out), so the connection ends.
	outFailed chan struct{}

	session  *core.Session
	path     transport.Sender // every request's own path: stdout, whatever becomes of the session
	listen   *listen.Registry
	wg       sync.WaitGroup
	smu      sync.Mutex
	stopping bool // set when Serve is returning: no new work starts
	ctx      context.Context
	cancel   context.CancelFunc
}

func newConn(s *core.Server, opts Options) *conn {
	if opts.MaxLineBytes < 0 {
		panic("stdio: Options.MaxLineBytes must not be negative")
	}
	if opts.MaxListeners < 0 {
		panic("stdio: Options.MaxListeners must not be negative")
	}
	c := &conn{server: s, in: opts.In, out: opts.Out, log: opts.Logger, maxLine: opts.MaxLineBytes,
		outFailed: make(chan struct{})}
	switch {
	case opts.MaxInFlight == 0:
		c.maxInFlight = DefaultMaxInFlight
	case opts.MaxInFlight > 0:
		c.maxInFlight = int64(opts.MaxInFlight)
	}
	switch {
	case opts.DrainTimeout == 0:
		c.drainT = DefaultDrainTimeout
	case opts.DrainTimeout > 0:
		c.drainT = opts.DrainTimeout
	}
	if c.in == nil {
		c.in = os.Stdin
	}
	if c.out == nil {
		c.out = os.Stdout
	}
	if c.log == nil {
		c.log = &log.Logger
	}
	if c.maxLine == 0 {
		c.maxLine = DefaultMaxLineBytes
	}
	c.path = transport.SenderFunc(c.send)
	c.listen = listen.New(s, opts.MaxListeners)
	so := transport.SessionOptions{Out: c.path, Transport: transport.Pipe, Listen: c.listen}
	if opts.LogMessages {
		so.Observer = transport.Core.Observers(transport.Core.Observer(s), messageLog{log: c.log})
	}
	c.session = transport.NewSession(s, so)
	return c
}

// spawn runs f on its own goroutine, counted for close, unless the connection is stopping.
func (c *conn) spawn(f func()) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.stopping {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// send writes one frame, the message and its newline in one write. The lock is this
// connection's own: it only orders frames on one pipe.
func (c *conn) send(_ context.Context, msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return core.ErrSessionClosed
	}
	if c.werr != nil {
		return c.werr
	}
	c.wbuf = append(append(c.wbuf[:0], msg...), '\n')
	_, err := c.out.Write(c.wbuf)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil // do not keep a large frame's buffer for the small ones
	}
	if err != nil {
		c.werr = err
		if !outputGone(err) {
			c.log.Error().Err(err).Msg("stdio: write failed")
		}
		c.failOne.Do(func() { close(c.outFailed) })
		return err
	}
	return nil
}

// outputGone reports whether a write failed because the output's reader went away.
func outputGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)
}

// writeErr is what Serve reports about the output: nil when it worked or its reader went away.
func (c *conn) writeErr() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr == nil || outputGone(c.werr) {
		return nil
	}
	return fmt.Errorf("stdio: write: %w", c.werr)
}

// drain runs once the input ended: the client can answer nothing any more, and the requests in
// flight get DrainTimeout to finish (less when ctx ends or the output fails first).
func (c *conn) drain(ctx context.Context) {
	transport.Core.EndInput(c.session)
	c.listen.Close(nil) // every subscription ends gracefully: its listen request is answered
	if c.drainT <= 0 {
		return
	}
	// The reader is done, so nothing adds to wg any more: waiting on it here is safe.
	idle := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(idle)
	}()
	t := time.NewTimer(c.drainT)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		c.log.Error().Dur("drain_timeout", c.drainT).Msg("stdio: requests still running at the end of the drain are cancelled")
	case <-ctx.Done():
	case <-c.outFailed:
	}
}

// close ends the session (which cancels what still runs and fails its waits for the client's
// answers), waits for the handlers (their responses are still written), then stops all writes.
func (c *conn) close() {
	c.smu.Lock()
	c.stopping = true
	c.smu.Unlock()
	c.listen.Close(nil) // before the session: a subscription ends gracefully, not cancelled
	c.session.Close()
	c.cancel()
	c.wg.Wait()
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
}

func (c *conn) failed() bool {
	select {
	case <-c.outFailed:
		return true
	default:
		return false
	}
}

// serveFrame handles one line. Requests run on their own goroutine (initialize and
// server/discover excepted, see serveMessage); everything else is quick and runs in line, so a
// cancel is seen as soon as it is read.
func (c *conn) serveFrame(frame []byte) {
	data := bytes.TrimSpace(frame)
	if len(data) == 0 {
		return // blank lines carry nothing
	}
	if data[0] == '[' {
		items, err := transport.Core.DecodeBatch(data)
		var derr *jsonrpc.DecodeError
		if errors.As(err, &derr) {
			_ = c.send(c.ctx, transport.Core.EncodeError(jsonrpc.ID{}, derr.Err))
			return
		}
		c.serveBatch(items)
		return
	}
	// An object, or anything else: DecodeMessage reports a parse error or a non-object.
	msg, err := transport.Core.DecodeMessage(data)
	var derr *jsonrpc.DecodeError
	if errors.As(err, &derr) {
		if !derr.Notification { // a notification is never answered
			_ = c.send(c.ctx, transport.Core.EncodeError(derr.ID, derr.Err))
		}
		return
	}
	c.serveMessage(msg)
}

// inLine reports whether a request is served before the next frame is read: the two that decide
// the connection's lifecycle, so that what a client pipelines behind them finds it decided.
func inLine(msg *jsonrpc.Message) bool {
	return msg.Method == "initialize" || msg.Method == "server/discover"
}

func (c *conn) serveMessage(msg *jsonrpc.Message) {
	if !msg.IsRequest() {
		transport.Core.Handle(c.session, c.ctx, msg, nil)
		return
	}
	if !c.admit(1) {
		_ = c.send(c.ctx, busy(msg.ID, c.maxInFlight))
		return
	}
	call, err := transport.Core.Begin(c.session, c.ctx, msg, c.path)
	if err != nil {
		c.release(1)
		_ = c.send(c.ctx, transport.Core.EncodeResponseMessage(transport.Core.RefusedResponse(msg.ID, err)))
		return
	}
	run := func() {
		resp := transport.Core.Run(call)
		c.release(1) // before the answer: a client that saw it may send the next request at once
		if resp != nil {
			_ = c.send(c.ctx, transport.Core.EncodeResponseMessage(resp))
		}
	}
	if inLine(msg) {
		run()
		return
	}
	// When Serve is already returning the call never runs: its context is cancelled with the
	// connection's and the session is closed.
	if !c.spawn(run) {
		c.release(1)
	}
}

// admit reserves n request slots, or reports that the bound is reached.
func (c *conn) admit(n int64) bool {
	if c.maxInFlight <= 0 {
		return true
	}
	if c.inFlight.Add(n) > c.maxInFlight {
		c.inFlight.Add(-n)
		return false
	}
	return true
}

func (c *conn) release(n int64) {
	if c.maxInFlight > 0 {
		c.inFlight.Add(-n)
	}
}

// busy is the answer to a request past MaxInFlight: the reason is the message itself.
func busy(id jsonrpc.ID, limit int64) []byte {
	return transport.Core.EncodeError(id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Server busy: %d requests in flight", limit))
}

// serveBatch answers a batch with one array of the responses (unwrapped when there is exactly
// one, nothing when there are none). An initialize or server/discover in the batch is served
// first, before the other members begin.
func (c *conn) serveBatch(items []jsonrpc.BatchItem) {
	b := &batch{c: c}
	b.serveInLine(items)
	b.beginOthers(items)
	if !c.spawn(b.finish) {
		c.release(int64(len(b.calls)))
	}
}

// batch is one batch frame being served: the answers known so far (refusals, decode errors and
// in-line results) and the calls still to run.
type batch struct {
	c       *conn
	answers [][]byte
	calls   []*core.Call
}

// begin starts a member, or records its refusal and returns nil.
func (b *batch) begin(m *jsonrpc.Message) *core.Call {
	if !b.c.admit(1) {
		b.answers = append(b.answers, busy(m.ID, b.c.maxInFlight))
		return nil
	}
	call, err := transport.Core.Begin(b.c.session, b.c.ctx, m, b.c.path)
	if err != nil {
		b.c.release(1)
		b.answers = append(b.answers, transport.Core.EncodeResponseMessage(transport.Core.RefusedResponse(m.ID, err)))
		return nil
	}
	return call
}

// serveInLine runs the requests that are served in line, in order, before anything else.
func (b *batch) serveInLine(items []jsonrpc.BatchItem) {
	for _, it := range items {
		if it.Err != nil || !it.Msg.IsRequest() || !inLine(it.Msg) {
			continue
		}
		if call := b.begin(it.Msg); call != nil {
			if resp := transport.Core.Run(call); resp != nil {
				b.answers = append(b.answers, transport.Core.EncodeResponseMessage(resp))
			}
			b.c.release(1)
		}
	}
}

// beginOthers answers the members that failed to decode, handles notifications and responses,
// and begins the remaining requests.
func (b *batch) beginOthers(items []jsonrpc.BatchItem) {
	for _, it := range items {
		switch {
		case it.Err != nil:
			if !it.Err.Notification {
				b.answers = append(b.answers, transport.Core.EncodeError(it.Err.ID, it.Err.Err))
			}
		case it.Msg.IsRequest():
			if inLine(it.Msg) {
				continue // served in line
			}
			if call := b.begin(it.Msg); call != nil {
				b.calls = append(b.calls, call)
			}
		default:
			transport.Core.Handle(b.c.session, b.c.ctx, it.Msg, nil)
		}
	}
}

// finish runs the begun calls concurrently, then writes every answer of the batch as one frame
// (a bare object when there is one, nothing when there is none).
func (b *batch) finish() {
	out := make([][]byte, len(b.calls))
	var wg sync.WaitGroup
	for i, call := range b.calls {
		wg.Go(func() {
			if resp := transport.Core.Run(call); resp != nil {
				out[i] = transport.Core.EncodeResponseMessage(resp)
			}
		})
	}
	wg.Wait()
	b.c.release(int64(len(b.calls))) // before the answer, as for single requests
	all := b.answers
	for _, a := range out {
		if a != nil {
			all = append(all, a)
		}
	}
	switch len(all) {
	case 0:
	case 1:
		_ = b.c.send(b.c.ctx, all[0])
	default:
		_ = b.c.send(b.c.ctx, append(append([]byte{'['}, bytes.Join(all, []byte{','})...), ']'))
	}
}
