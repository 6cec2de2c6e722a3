// Package stdio serves MCP over newline-delimited JSON-RPC on a reader and a writer (stdin and
// stdout by default), driving the same core as the HTTP endpoint.
//
// One process is one session. Every line is one JSON-RPC message (or a batch array). Requests are
// served concurrently, so a slow tool never stalls ping or notifications/cancelled, and writes are
// serialized so frames never interleave. A frame longer than Options.MaxLineBytes ends the
// connection: it is reported on the error log and the rest is not read into memory.
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
	// ErrorLog receives transport problems (an over-long frame, a failed write). Nil means
	// os.Stderr.
	ErrorLog io.Writer
	// MaxLineBytes bounds one frame, newline excluded. Zero means DefaultMaxLineBytes.
	MaxLineBytes int
}

// Serve serves one session on the reader and writer until the reader ends (EOF), the context is
// cancelled, or a frame is too large. On the way out it cancels the requests in flight and
// waits for them to finish. EOF is a clean end and returns nil.
func Serve(ctx context.Context, s *core.Server, opts Options) error {
	c := newConn(s, opts)
	defer c.close()
	return c.readLoop(ctx)
}

type conn struct {
	server  *core.Server
	in      io.Reader
	errLog  io.Writer
	maxLine int

	wmu sync.Mutex
	out io.Writer

	session *core.Session
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

func newConn(s *core.Server, opts Options) *conn {
	c := &conn{server: s, in: opts.In, out: opts.Out, errLog: opts.ErrorLog, maxLine: opts.MaxLineBytes}
	if c.in == nil {
		c.in = os.Stdin
	}
	if c.out == nil {
		c.out = os.Stdout
	}
	if c.errLog == nil {
		c.errLog = os.Stderr
	}
	if c.maxLine <= 0 {
		c.maxLine = DefaultMaxLineBytes
	}
	c.session = s.NewSession(core.SessionOptions{Out: core.SenderFunc(c.send)})
	return c
}

// send writes one frame. The lock is this connection's own: it only orders frames on one pipe.
func (c *conn) send(_ context.Context, msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	if _, err := c.out.Write(buf); err != nil {
		fmt.Fprintf(c.errLog, "stdio: write failed: %v\n", err)
		return err
	}
	return nil
}

func (c *conn) close() {
	c.cancel()
	c.wg.Wait()
	c.session.Close()
}

func (c *conn) readLoop(parent context.Context) error {
	c.ctx, c.cancel = context.WithCancel(parent)
	r := bufio.NewReaderSize(c.in, 64<<10)
	var frame []byte
	for {
		line, err := r.ReadSlice('\n')
		n := len(frame) + len(line)
		if err == nil {
			n-- // the newline does not count
		}
		if n > c.maxLine {
			fmt.Fprintf(c.errLog, "stdio frame exceeds %d bytes without a newline\n", c.maxLine)
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
	switch core.BodyKind(data) {
	case core.BodyObject:
		msg, derr := core.DecodeMessage(data)
		if derr != nil {
			_ = c.send(c.ctx, core.EncodeError(derr.ID, derr.Err))
			return
		}
		c.serveMessage(msg)
	case core.BodyArray:
		items, derr := core.DecodeBatch(data)
		if derr != nil {
			_ = c.send(c.ctx, core.EncodeError(core.ID{}, derr.Err))
			return
		}
		c.serveBatch(items)
	default:
		_, derr := core.DecodeMessage(data)
		_ = c.send(c.ctx, core.EncodeError(core.ID{}, derr.Err))
	}
}

func (c *conn) serveMessage(msg *core.Message) {
	if !msg.IsRequest() {
		c.session.Handle(c.ctx, msg, nil)
		return
	}
	call, err := c.session.Begin(c.ctx, msg, nil)
	if err != nil {
		_ = c.send(c.ctx, c.session.Handle(c.ctx, msg, nil).Encode())
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if resp := call.Run(); resp != nil {
			_ = c.send(c.ctx, resp.Encode())
		}
	}()
}

// serveBatch answers a batch with one array of the responses (unwrapped when there is exactly
// one, nothing when there are none).
func (c *conn) serveBatch(items []core.BatchItem) {
	var errs [][]byte
	var calls []*core.Call
	for _, it := range items {
		switch {
		case it.Err != nil:
			errs = append(errs, core.EncodeError(it.Err.ID, it.Err.Err))
		case it.Msg.IsRequest():
			call, err := c.session.Begin(c.ctx, it.Msg, nil)
			if err != nil {
				errs = append(errs, c.session.Handle(c.ctx, it.Msg, nil).Encode())
				continue
			}
			calls = append(calls, call)
		default:
			c.session.Handle(c.ctx, it.Msg, nil)
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
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
	}()
}
