package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// DefaultShutdownTimeout is how long CommandTransport waits for a server to exit after its
// stdin is closed, and again after SIGTERM, before it kills it.
const DefaultShutdownTimeout = 5 * time.Second

// CommandTransport starts a server as a child process and speaks newline-delimited JSON-RPC on
// its stdin and stdout. The child's stderr is passed through (to Stderr). Closing the client
// closes the child's stdin, then sends SIGTERM and finally SIGKILL if it has not exited.
type CommandTransport struct {
	// Command is the server to start; it must not have been started. Its Stdin and Stdout are
	// set by the transport.
	Command *exec.Cmd
	// Stderr receives the child's stderr. Nil means os.Stderr (unless Command.Stderr is set).
	Stderr io.Writer
	// MaxMessageBytes bounds one line from the server. Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// ShutdownTimeout is each of the two waits of Close. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// IOTransport speaks newline-delimited JSON-RPC over a reader and a writer (pipes, a socket
// the caller dialled, ...). Closing the client closes Writer when it is an io.Closer, and
// Reader likewise.
type IOTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxMessageBytes bounds one line from the server. Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
}

func (t *CommandTransport) open(ctx context.Context, s sink) (link, error) {
	if t.Command == nil {
		panic("mcpkit/client: CommandTransport.Command: must be set")
	}
	if t.MaxMessageBytes < 0 {
		panic("mcpkit/client: CommandTransport.MaxMessageBytes: must not be negative")
	}
	cmd := t.Command
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if cmd.Stderr == nil {
		cmd.Stderr = t.Stderr
		if cmd.Stderr == nil {
			cmd.Stderr = os.Stderr
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mcpkit/client: starting %s: %w", cmd.Path, err)
	}
	l := newLineLink(stdout, stdin, t.MaxMessageBytes, s)
	grace := t.ShutdownTimeout
	if grace == 0 {
		grace = DefaultShutdownTimeout
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	l.stop = func() error {
		_ = stdin.Close()
		select {
		case <-exited:
			return nil
		case <-time.After(grace):
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return nil
		case <-time.After(grace):
		}
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("mcpkit/client: %s ignored SIGTERM and was killed", cmd.Path)
	}
	l.start()
	return l, nil
}

func (t *IOTransport) open(ctx context.Context, s sink) (link, error) {
	if t.Reader == nil || t.Writer == nil {
		panic("mcpkit/client: IOTransport.Reader and IOTransport.Writer: must be set")
	}
	if t.MaxMessageBytes < 0 {
		panic("mcpkit/client: IOTransport.MaxMessageBytes: must not be negative")
	}
	l := newLineLink(t.Reader, t.Writer, t.MaxMessageBytes, s)
	l.stop = func() error {
		var errs []error
		if c, ok := t.Writer.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
		if c, ok := t.Reader.(io.Closer); ok && any(t.Reader) != any(t.Writer) {
			errs = append(errs, c.Close())
		}
		return errors.Join(errs...)
	}
	l.start()
	return l, nil
}

// lineLink is newline-delimited JSON-RPC on a reader and a writer.
type lineLink struct {
	r    io.Reader
	max  int
	sink sink
	stop func() error

	wmu sync.Mutex
	w   io.Writer

	readDone chan struct{}
}

func newLineLink(r io.Reader, w io.Writer, max int, s sink) *lineLink {
	if max == 0 {
		max = DefaultMaxMessageBytes
	}
	return &lineLink{r: r, w: w, max: max, sink: s, readDone: make(chan struct{})}
}

func (l *lineLink) start() { go l.read() }

func (l *lineLink) read() {
	defer close(l.readDone)
	br := bufio.NewReaderSize(l.r, 64<<10)
	var buf []byte
	for {
		part, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(buf)+len(part) > l.max {
				l.sink.connLost(fmt.Errorf("a line from the server is longer than %d bytes", l.max))
				return
			}
			buf = append(buf, part...)
			continue
		}
		line := part
		if buf != nil {
			line = append(buf, part...)
			buf = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > l.max {
			l.sink.connLost(fmt.Errorf("a line from the server is longer than %d bytes", l.max))
			return
		}
		if len(line) > 0 {
			l.sink.deliver(append([]byte(nil), line...), jsonrpc.ID{})
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			l.sink.connLost(fmt.Errorf("the server's output ended: %w", err))
			return
		}
	}
}

func (l *lineLink) send(ctx context.Context, m *outMsg) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	b := make([]byte, 0, len(m.body)+1)
	b = append(append(b, m.body...), '\n')
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("mcpkit/client: writing to the server: %w", err)
	}
	return nil
}

func (l *lineLink) negotiated(string)     {}
func (l *lineLink) ready(context.Context) {}
func (l *lineLink) sessionID() string     { return "" }
func (l *lineLink) cancelsByStream() bool { return false }
func (l *lineLink) notifications() error  { return nil }
func (l *lineLink) peer() peerInfo        { return peerInfo{network: "pipe"} }

func (l *lineLink) close(ctx context.Context) error {
	err := l.stop()
	select {
	case <-l.readDone:
	case <-ctx.Done():
	}
	return err
}
