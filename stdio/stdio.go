// Package stdio serves MCP over newline-delimited JSON-RPC on a reader and a writer (stdin and
// stdout by default), driving the same core as the HTTP endpoint.
//
// One process is one session. Every line is one JSON-RPC message or a batch array (a batch is
// answered with one array of the responses, unwrapped when there is exactly one, and not at all
// when it held only notifications). Blank lines are ignored, a final line without a newline is
// served at EOF, and notifications are never answered, not even malformed ones. Requests are
// served concurrently, so a slow tool never stalls ping or notifications/cancelled, and writes are
// serialized so frames never interleave. A frame longer than Options.MaxLineBytes ends the
// connection: it is reported on the error log and the rest is not read. When the input ends,
// requests in flight are cancelled (a handler waiting for the client's answer to a
// server-to-client request is released at once) and Serve returns once they have finished.
//
// The process is one connection, so its lifecycle is decided once: a successful initialize
// locks it to the legacy lifecycle, a successful server/discover or 2026-07-28 request locks it
// to the modern one (see package core).
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/core"
)

// DefaultMaxLineBytes is the frame bound used when Options.MaxLineBytes is zero: 4 MiB.
const DefaultMaxLineBytes = 4 << 20

// ErrFrameTooLarge is returned by Serve when a frame exceeds the bound without a newline.
var ErrFrameTooLarge = errors.New("stdio: frame too large")

// Options configure Serve. The zero value reads stdin, writes stdout and logs to stderr.
type Options struct {
	// In is where frames are read. Nil means os.Stdin.
	In io.Reader
	// Out is where frames are written. Nil means os.Stdout.
	Out io.Writer
	// Logger receives transport problems (an over-long frame, a failed write) at error level.
	// Nil means zerolog's global logger (github.com/rs/zerolog/log.Logger, stderr unless the
	// program changed it); a pointer to zerolog.Nop() silences it. It never writes to Out. The
	// server's own log (handler errors, panics) is core.Options.Logger, of the same type.
	Logger *zerolog.Logger
	// MaxLineBytes bounds one frame, newline excluded. Zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxInFlight bounds the requests served at once. Zero means DefaultMaxInFlight; negative
	// removes the bound. A request past it is answered at once with -32603 "Server busy" (the
	// reader never waits, so answers to the server's own requests keep flowing).
	MaxInFlight int
}

// DefaultMaxInFlight is the bound on concurrent requests when Options.MaxInFlight is zero.
const DefaultMaxInFlight = 1000

// Serve serves one session on the reader and writer until the reader ends (EOF), the context is
// cancelled, or a frame is too large. On the way out it cancels the requests in flight and
// waits for them to finish; nothing is written after it returns. EOF is a clean end and returns
// nil; an over-long frame returns ErrFrameTooLarge. A read in progress cannot be interrupted, so
// a cancelled context is noticed when the next frame (or EOF) arrives; close the reader to stop
// at once.
func Serve(ctx context.Context, s *core.Server, opts Options) error {
	c := newConn(s, opts)
	c.ctx, c.cancel = context.WithCancel(ctx)
	// The read runs on its own goroutine so that a cancelled ctx ends Serve even while the
	// reader blocks (an idle stdin). That goroutine ends with the reader's next frame or EOF;
	// nothing it reads after Serve returned is served.
	done := make(chan error, 1)
	go func() { done <- c.readLoop() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.close()
	return err
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

type conn struct {
	server  *core.Server
	in      io.Reader
	log     *zerolog.Logger
	maxLine int

	maxInFlight int64
	inFlight    atomic.Int64

	wmu    sync.Mutex // orders frames on the pipe; held only by this connection
	out    io.Writer
	wbuf   []byte // frame being written, reused
	closed bool   // set once Serve is returning: nothing more is written

	session  *core.Session
	wg       sync.WaitGroup
	smu      sync.Mutex
	stopping bool // set when Serve is returning: no new work starts
	ctx      context.Context
	cancel   context.CancelFunc
}

func newConn(s *core.Server, opts Options) *conn {
	c := &conn{server: s, in: opts.In, out: opts.Out, log: opts.Logger, maxLine: opts.MaxLineBytes}
	switch {
	case opts.MaxInFlight == 0:
		c.maxInFlight = DefaultMaxInFlight
	case opts.MaxInFlight > 0:
		c.maxInFlight = int64(opts.MaxInFlight)
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
	if c.maxLine <= 0 {
		c.maxLine = DefaultMaxLineBytes
	}
	c.session = s.NewSession(core.SessionOptions{Out: core.SenderFunc(c.send)})
	return c
}

// send writes one frame, the message and its newline in one write. The lock is this
// connection's own: it only orders frames on one pipe.
func (c *conn) send(_ context.Context, msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return core.ErrSessionClosed
	}
	c.wbuf = append(append(c.wbuf[:0], msg...), '\n')
	_, err := c.out.Write(c.wbuf)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil // do not keep a large frame's buffer for the small ones
	}
	if err != nil {
		c.log.Error().Err(err).Msg("stdio: write failed")
		return err
	}
	return nil
}

// close ends the session (which cancels the requests in flight and fails their waits for the
// client's answers at once: nobody is left to answer), waits for the requests (their responses
// are still written), then stops all writes.
func (c *conn) close() {
	c.smu.Lock()
	c.stopping = true
	c.smu.Unlock()
	c.session.Close()
	c.cancel()
	c.wg.Wait()
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
}

func (c *conn) readLoop() error {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var frame []byte
	for {
		line, err := r.ReadSlice('\n')
		n := len(frame) + len(line)
		if err == nil {
			n-- // the newline does not count
		}
		if n > c.maxLine {
			c.log.Error().Int("max_line_bytes", c.maxLine).Msg("stdio: frame exceeds MaxLineBytes without a newline")
			return ErrFrameTooLarge
		}
		switch {
		case err == bufio.ErrBufferFull:
			frame = append(frame, line...)
			continue
		case err == nil:
			frame = append(frame, line...)
			c.serveFrame(frame)
			frame = frame[:0]
		case errors.Is(err, io.EOF):
			frame = append(frame, line...)
			if len(bytes.TrimSpace(frame)) > 0 {
				c.serveFrame(frame)
			}
			return nil
		default:
			return err
		}
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
	}
}

// serveFrame handles one line. Requests run on their own goroutine; everything else is quick and
// runs in line, so a cancel is seen as soon as it is read.
func (c *conn) serveFrame(frame []byte) {
	data := bytes.TrimSpace(frame)
	if len(data) == 0 {
		return // blank lines carry nothing
	}
	if data[0] == '[' {
		items, err := core.DecodeBatch(data)
		var derr *core.DecodeError
		if errors.As(err, &derr) {
			_ = c.send(c.ctx, core.EncodeError(core.ID{}, derr.Err))
			return
		}
		c.serveBatch(items)
		return
	}
	// An object, or anything else: DecodeMessage reports a parse error or a non-object.
	msg, err := core.DecodeMessage(data)
	var derr *core.DecodeError
	if errors.As(err, &derr) {
		if !derr.Notification { // a notification is never answered
			_ = c.send(c.ctx, core.EncodeError(derr.ID, derr.Err))
		}
		return
	}
	c.serveMessage(msg)
}

func (c *conn) serveMessage(msg *core.Message) {
	if !msg.IsRequest() {
		c.session.Handle(c.ctx, msg, nil)
		return
	}
	if !c.admit(1) {
		_ = c.send(c.ctx, busy(msg.ID, c.maxInFlight))
		return
	}
	call, err := c.session.Begin(c.ctx, msg, nil)
	if err != nil {
		c.release(1)
		_ = c.send(c.ctx, core.RefusedResponse(msg.ID, err).Encode())
		return
	}
	// When Serve is already returning the call never runs: its context is cancelled with the
	// connection's and the session is closed.
	if !c.spawn(func() {
		resp := call.Run()
		c.release(1) // before the answer: a client that saw it may send the next request at once
		if resp != nil {
			_ = c.send(c.ctx, resp.Encode())
		}
	}) {
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

// busy is the answer to a request past MaxInFlight.
func busy(id core.ID, limit int64) []byte {
	return core.EncodeError(id, core.InternalError(fmt.Sprintf("Server busy: %d requests in flight", limit)))
}

// serveBatch answers a batch with one array of the responses (unwrapped when there is exactly
// one, nothing when there are none).
func (c *conn) serveBatch(items []core.BatchItem) {
	var errs [][]byte
	var calls []*core.Call
	for _, it := range items {
		switch {
		case it.Err != nil:
			if !it.Err.Notification {
				errs = append(errs, core.EncodeError(it.Err.ID, it.Err.Err))
			}
		case it.Msg.IsRequest():
			if !c.admit(1) {
				errs = append(errs, busy(it.Msg.ID, c.maxInFlight))
				continue
			}
			call, err := c.session.Begin(c.ctx, it.Msg, nil)
			if err != nil {
				c.release(1)
				errs = append(errs, core.RefusedResponse(it.Msg.ID, err).Encode())
				continue
			}
			calls = append(calls, call)
		default:
			c.session.Handle(c.ctx, it.Msg, nil)
		}
	}
	n := int64(len(calls))
	if !c.spawn(func() {
		out := make([][]byte, len(calls))
		var wg sync.WaitGroup
		for i, call := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if resp := call.Run(); resp != nil {
					out[i] = resp.Encode()
				}
			}()
		}
		wg.Wait()
		c.release(n) // before the answer, as for single requests
		all := errs
		for _, b := range out {
			if b != nil {
				all = append(all, b)
			}
		}
		switch len(all) {
		case 0:
		case 1:
			_ = c.send(c.ctx, all[0])
		default:
			_ = c.send(c.ctx, append(append([]byte{'['}, bytes.Join(all, []byte{','})...), ']'))
		}
	}) {
		c.release(n)
	}
}
