package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/headerval"
)

// DefaultSSEWriteTimeout is the per-write deadline an SSEWriter uses when SSEWriterOptions.WriteTimeout
// is zero.
const DefaultSSEWriteTimeout = 30 * time.Second

// ErrSSEClosed is returned by writes to an SSEWriter after Close.
var ErrSSEClosed = errors.New("middleware: SSE stream closed")

// errEventLineBreak is returned by WriteEvent for an event name that would break the framing.
var errEventLineBreak = errors.New("middleware: SSE event name contains a line break")

// errIDLineBreak is returned by WriteSSE for an event id that would break the framing (or that
// clients would ignore: one containing NUL).
var errIDLineBreak = errors.New("middleware: SSE event id contains a line break or NUL")

// DefaultSSEKeepAlive is the interval of keepalive comments when SSEWriterOptions.KeepAlive is
// zero.
const DefaultSSEKeepAlive = 30 * time.Second

// SSEWriterOptions configures an SSEWriter. The zero value sends a keepalive comment every
// DefaultSSEKeepAlive (30 s) and bounds each write by DefaultSSEWriteTimeout (30 s).
type SSEWriterOptions struct {
	// KeepAlive is the interval between ": ping <time>" comments that keep proxies and clients
	// from timing out an idle stream. Zero means DefaultSSEKeepAlive (30 s); negative turns
	// keepalives off.
	KeepAlive time.Duration
	// WriteTimeout bounds every write (frame plus flush): a reader that stops reading makes the
	// write fail after this long instead of blocking forever, and the writer is then broken. Zero
	// means DefaultSSEWriteTimeout (30 s); a negative value disables the deadline. It takes effect
	// only where the ResponseWriter supports write deadlines (net/http's HTTP/1 and HTTP/2
	// servers do).
	WriteTimeout time.Duration
	// OnBroken, when set, is called once, from the goroutine whose write failed (possibly the
	// keepalive timer's), with the first write error, so the owner can release the stream's
	// resources. It is not called for Close. Nil means no callback.
	OnBroken func(err error)
}

// SSEWriter writes a Server-Sent Events stream to one response: framing, flushing after every
// frame, the headers that stop proxy buffering, keepalive comments and per-write deadlines. Its
// methods are safe for concurrent use; writes are serialized by a lock that belongs to this stream
// alone, so a slow client never holds up another stream. After the first failed write the writer
// is broken: every later write returns that error. WriteFinal and WriteFinalSSE write the last
// frame and close the writer in one step. The writer must be closed before its handler returns,
// after which it never touches the ResponseWriter again (Close waits for a write in progress,
// which the write timeout bounds): behind the SSE layer, which makes the writer
// (Exchange.SSE), the layer does it; the owner of one made with NewSSEWriter calls Close itself.
//
// A handler behind the SSE layer takes its writer from Exchange.SSE; NewSSEWriter makes one for a
// response written outside such a stack. The zero SSEWriter is not usable.
type SSEWriter struct {
	w   http.ResponseWriter
	cfg *sseConfig

	mu    sync.Mutex
	err   error
	timer *time.Timer // the keepalive
	// heldDue and the links belong to the sweep of held headers (see holdHeaders), guarded by
	// the lock of the list heldList names: the count of sweeps at which the writer is due, and
	// its neighbours on that list.
	heldDue            uint64
	heldPrev, heldNext *SSEWriter
	// fb holds the frame being built: a buffer borrowed from framePool with the first frame and
	// given back when the writer closes, or dropped (nil again until the next frame) once a
	// frame made it grow past maxPooledFrame.
	fb *[]byte
	// done, made by the first call of Done, is closed once the writer broke or closed (ended);
	// most streams never wait on it, and make none.
	done chan struct{}

	// The flags sit side by side, so that they share one word or two. All but heldIn are
	// guarded by mu.
	started    bool
	closed     bool
	brokeNow   bool // set by fail, consumed by finish to run OnBroken outside the lock
	noDeadline bool // the writer does not support write deadlines
	// held is set while the headers are set but not yet sent (StartDeferred): the first frame,
	// or the sweep of held headers once heldDue is reached, sends them. Their status is not
	// written yet either, so that a final frame can still give the response its length.
	held bool
	// heldListed is set while the writer is on a list of the sweep of held headers, the one
	// heldList names; heldIn, guarded by that list's lock, says whether it is still on it (the
	// sweep takes it off once its delay is up).
	heldListed bool
	heldList   uint8
	heldIn     bool
	// aborted is set by Abort: the SSE layer cuts the connection instead of ending the response.
	aborted bool
	// tailBound is set on a writer of the SSE layer that bounds what net/http writes once the
	// handler returned (its end sets a write deadline): a final frame the response buffers
	// whole is bounded by it.
	tailBound bool
	// ended is set once the writer broke or closed.
	ended bool
}

// framePool holds frame buffers for the writers: a stream borrows one with its first frame and
// returns it when it closes, so a short stream (one response) allocates none.
var framePool = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// maxPooledFrame is the largest frame buffer returned to framePool.
const maxPooledFrame = 64 << 10

// heldFrameBuffered is the largest final frame that, written while the headers are held (no byte
// of the body written yet), net/http copies into the response's buffer without writing to the
// connection: its HTTP/1 server buffers 2 KB of a response before it writes the headers and a
// chunk (bufferBeforeChunkingSize), its HTTP/2 server 4 KB.
const heldFrameBuffered = 2 << 10

// A final frame the response buffers whole gets a shared Content-Length value (see
// internal/headerval): this fails to compile when heldFrameBuffered outgrows them.
var _ [headerval.MaxLength - heldFrameBuffered]struct{}

// NewSSEWriter returns a writer for an event stream on w. Nothing is sent until Start or the
// first write.
func NewSSEWriter(w http.ResponseWriter, opts SSEWriterOptions) *SSEWriter {
	sc := &struct {
		sw  SSEWriter
		cfg sseConfig
	}{cfg: newSSEConfig(opts)}
	sc.sw.init(w, &sc.cfg)
	return &sc.sw
}

// init readies a zero SSEWriter as NewSSEWriter does, with cfg (which it keeps): the SSE layer's
// writers live in the storage of their request's Exchange and share the layer's cfg.
func (sw *SSEWriter) init(w http.ResponseWriter, cfg *sseConfig) {
	sw.w, sw.cfg = w, cfg
}

// Start sends the response headers (Content-Type: text/event-stream, Cache-Control: no-cache,
// Connection: keep-alive, X-Accel-Buffering: no) with status 200 and flushes them at once, clears
// the server's write deadline for this long-lived response, and arms the keepalive timer. Writes
// start the stream implicitly; calling Start first lets the client see the headers before the
// first event. Start is idempotent. It fails (and breaks the writer) when the ResponseWriter
// cannot flush, since a stream that is not flushed never reaches the client in time.
func (s *SSEWriter) Start() error {
	err := s.begin()
	if err == nil && s.held {
		err = s.sendLocked() // started deferred: the headers go out now
	}
	return s.release(err)
}

// StartDeferred is Start for a stream that may be short, such as one request's answer: the
// headers are set but held back (the status too), and go out with the first frame, or after
// maxDelay at the latest (so the client of a long call still sees them early). When the stream
// ends within maxDelay with WriteFinal or WriteFinalSSE, nothing is flushed at all: the response
// gets the final frame's length as its Content-Length and goes out in one write, when the
// handler returns or a layer in front flushes it, as a plain handler's would. The delay is kept
// to within 5 ms: one sweep every 5 ms sends the headers of every writer whose delay is up (no
// timer per stream; the sweep is one goroutine of the process, which runs while any stream
// holds its headers and stops 100 ms after the last), so a stream whose first frame comes later
// gets its headers between maxDelay - 5 ms and maxDelay after the call, and a maxDelay under
// 5 ms (zero or negative included) is Start. The keepalive comments start once the headers are
// out.
func (s *SSEWriter) StartDeferred(maxDelay time.Duration) error {
	if maxDelay < heldTick {
		return s.Start()
	}
	s.mu.Lock()
	err := s.usableLocked()
	if err == nil && !s.started {
		s.started, s.held = true, true
		s.setHeadersLocked()
		s.holdHeaders(maxDelay)
	}
	return s.release(err)
}

// WriteMessage sends one event with the given data and no event name: "data: <data>\n\n". Data
// containing line breaks (pretty-printed JSON) is split over several data lines, which the
// client joins back with "\n"; trailing line breaks are dropped.
func (s *SSEWriter) WriteMessage(data []byte) error {
	err := s.begin()
	if err == nil {
		s.frame()
		*s.fb = appendData(*s.fb, data)
	}
	return s.finish(err)
}

// WriteEvent sends one event with a name: "event: <event>\ndata: <data>\n\n". An event name with
// a line break is rejected without breaking the writer.
func (s *SSEWriter) WriteEvent(event string, data []byte) error {
	if strings.ContainsAny(event, "\r\n") {
		return errEventLineBreak
	}
	err := s.begin()
	if err == nil {
		s.frame()
		b := append(*s.fb, "event: "...)
		b = append(b, event...)
		b = append(b, '\n')
		*s.fb = appendData(b, data)
	}
	return s.finish(err)
}

// SSEEvent is one event with every field the format has. The zero SSEEvent is an unnamed event
// with empty data.
type SSEEvent struct {
	// ID sets the client's last event id ("" sends no id line). It must not contain a line break
	// or NUL.
	ID string
	// Event names the event ("" sends no event line: the client sees a "message").
	Event string
	// Retry asks the client to wait this long before reconnecting, in whole milliseconds (zero or
	// less sends no retry line).
	Retry time.Duration
	// Data is the payload. Empty data still sends one empty data line, so the client dispatches
	// the event (an id with empty data is how a stream is primed for resumption).
	Data []byte
}

// WriteSSE sends one event with all its fields: "retry: <ms>\n" when Retry is set, "id: <id>\n"
// when ID is set, "event: <event>\n" when Event is set, then the data lines and the blank line.
// An ID or event name that would break the framing is rejected without breaking the writer.
func (s *SSEWriter) WriteSSE(ev SSEEvent) error {
	if strings.ContainsAny(ev.Event, "\r\n") {
		return errEventLineBreak
	}
	if strings.ContainsAny(ev.ID, "\r\n\x00") {
		return errIDLineBreak
	}
	err := s.begin()
	if err == nil {
		s.frame()
		*s.fb = appendEvent(*s.fb, ev)
	}
	return s.finish(err)
}

// WriteFinal sends the last event of the stream, framed as WriteMessage frames it, and closes
// the writer in the same step, under the writer's lock: no write of any goroutine (a late
// notification, a keepalive comment) can come between this frame and the close, so the frame is
// the last thing the stream carries. The writer is closed whatever the outcome, also when it was
// already broken or closed (the frame is then not sent and the error says why).
func (s *SSEWriter) WriteFinal(data []byte) error {
	return s.WriteFinalSSE(SSEEvent{Data: data})
}

// WriteFinalSSE is WriteFinal for an event with all its fields, framed as WriteSSE frames it. An
// ID or event name that would break the framing is refused, and the writer is closed all the
// same.
func (s *SSEWriter) WriteFinalSSE(ev SSEEvent) error {
	var bad error
	switch {
	case strings.ContainsAny(ev.Event, "\r\n"):
		bad = errEventLineBreak
	case strings.ContainsAny(ev.ID, "\r\n\x00"):
		bad = errIDLineBreak
	}
	s.mu.Lock()
	err := s.usableLocked()
	switch {
	case err != nil:
	case bad != nil:
		err = bad
	case !s.started:
		err = s.startLocked()
	}
	if err == nil {
		s.frame()
		*s.fb = appendEvent(*s.fb, ev)
		if s.held {
			// Headers still held: the frame joins them in net/http's buffer, and both go out
			// (in one write) when the handler returns. The deadline bounds a write that does
			// reach the connection (a frame larger than that buffer). A frame that fits it
			// reaches the connection only after the handler returned, bounded then by the
			// deadline the SSE layer sets (tailBound): it needs none of its own.
			if !s.tailBound || len(*s.fb) > heldFrameBuffered {
				s.setDeadlineLocked()
			}
			// The frame is the whole body: with its length, the response is sent in one
			// write even when a layer in front flushes it before the handler returned (see
			// releaseClaim), where net/http would otherwise chunk it and end it in a write of
			// its own.
			s.w.Header()["Content-Length"] = headerval.Length(len(*s.fb))
			_, err = s.w.Write(*s.fb)
			if err != nil {
				err = s.fail(err)
			}
		} else {
			err = s.sendLocked()
		}
	}
	s.closeLocked()
	return s.release(err)
}

// WriteRetry sends a frame with only a retry field, "retry: <ms>\n\n": the client updates its
// reconnection delay and dispatches nothing. A duration under one millisecond sends nothing.
func (s *SSEWriter) WriteRetry(d time.Duration) error {
	if d.Milliseconds() <= 0 {
		return nil
	}
	err := s.begin()
	if err == nil {
		s.frame()
		*s.fb = append(appendRetry(*s.fb, d), '\n')
	}
	return s.finish(err)
}

// WriteComment sends a comment, ": <text>\n\n", which clients ignore; a multi-line text becomes
// one comment line per line.
func (s *SSEWriter) WriteComment(text string) error {
	err := s.begin()
	if err == nil {
		s.frame()
		*s.fb = appendLines(*s.fb, ": ", []byte(text))
	}
	return s.finish(err)
}

// Close stops the keepalive and ends the writer's use of the ResponseWriter: later writes return
// ErrSSEClosed (or the write error, if the writer broke first) and Done is closed. It does not
// call OnBroken. Close is idempotent and waits for a write in progress.
func (s *SSEWriter) Close() {
	s.mu.Lock()
	s.closeLocked()
	s.mu.Unlock()
}

// closeLocked is Close with the lock held.
func (s *SSEWriter) closeLocked() {
	s.closed = true
	s.stopTimerLocked()
	s.returnFrameLocked()
	s.markDoneLocked()
}

// frame readies *s.fb, empty, for the next frame, borrowing a pooled buffer when the writer
// has none.
func (s *SSEWriter) frame() {
	if s.fb == nil {
		s.fb = framePool.Get().(*[]byte)
	}
	*s.fb = (*s.fb)[:0]
}

// returnFrameLocked gives a borrowed frame buffer back to the pool (the writer is closed: it
// builds no more frames).
func (s *SSEWriter) returnFrameLocked() {
	if s.fb != nil {
		if cap(*s.fb) <= maxPooledFrame {
			*s.fb = (*s.fb)[:0]
			framePool.Put(s.fb)
		}
		s.fb = nil
	}
}

// Done returns a channel closed when the writer breaks (a write failed) or is closed. Every call
// returns the same channel; a caller waiting in a loop takes it once.
func (s *SSEWriter) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.ended {
			close(s.done)
		}
	}
	return s.done
}

// Err returns the write error that broke the writer, or nil while it is healthy (including after
// a plain Close).
func (s *SSEWriter) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// begin takes the lock and makes sure the stream is started and usable. The caller must call
// finish with the result, whatever it is.
func (s *SSEWriter) begin() error {
	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if !s.started {
		return s.startLocked()
	}
	return nil
}

// usableLocked returns why the writer can write no more (the write error that broke it, or
// ErrSSEClosed), or nil.
func (s *SSEWriter) usableLocked() error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return ErrSSEClosed
	}
	return nil
}

// finish sends the frame prepared in s.fb when err is nil, releases the lock, and reports a
// breakage that happened meanwhile.
func (s *SSEWriter) finish(err error) error {
	if err == nil && s.fb != nil && len(*s.fb) > 0 {
		err = s.sendLocked()
	}
	return s.release(err)
}

// release resets the frame buffer, releases the lock, and reports a breakage that happened while
// it was held. It returns err.
func (s *SSEWriter) release(err error) error {
	if s.fb != nil {
		if cap(*s.fb) > maxPooledFrame {
			// Do not pin the memory of one large event for the life of the stream (nor in
			// the pool).
			s.fb = nil
		} else {
			*s.fb = (*s.fb)[:0]
		}
	}
	broke := s.brokeNow
	s.brokeNow = false
	if broke {
		s.markDoneLocked()
	}
	s.mu.Unlock()
	if broke && s.cfg.onBroken != nil {
		s.cfg.onBroken(err)
	}
	return err
}

// setHeadersLocked sets the stream's headers, with values every response shares (see
// internal/headerval): setting them allocates nothing.
func (s *SSEWriter) setHeadersLocked() {
	h := s.w.Header()
	h["Content-Type"] = headerval.EventStream
	h["Cache-Control"] = headerval.NoCache
	h["Connection"] = headerval.KeepAlive
	h["X-Accel-Buffering"] = headerval.No
	delete(h, "Content-Length")
}

// startLocked sends the headers and the status at once.
func (s *SSEWriter) startLocked() error {
	s.started = true
	s.setDeadlineLocked()
	s.setHeadersLocked()
	s.w.WriteHeader(http.StatusOK)
	if err := s.rc().Flush(); err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			err = fmt.Errorf("middleware: SSE needs a flushable ResponseWriter: %w", err)
		}
		return s.fail(err)
	}
	// Clear the deadline: both ours and the server's WriteTimeout, which would otherwise end a
	// long-lived stream.
	s.clearDeadlineLocked()
	if s.cfg.keepAlive > 0 {
		s.timer = time.AfterFunc(s.cfg.keepAlive, s.tick)
	}
	return nil
}

// rc is the response controller of the stream's ResponseWriter (made on the stack where it is
// used: the writer keeps no copy of its own).
func (s *SSEWriter) rc() *http.ResponseController { return http.NewResponseController(s.w) }

// sendLocked writes the frame in s.fb (if any) and flushes it, under a write deadline when
// configured.
func (s *SSEWriter) sendLocked() error {
	s.setDeadlineLocked()
	var err error
	if s.fb != nil && len(*s.fb) > 0 {
		_, err = s.w.Write(*s.fb)
	}
	if err == nil {
		err = s.rc().Flush()
	}
	if err != nil {
		return s.fail(err)
	}
	s.clearDeadlineLocked()
	if s.held {
		// The deferred headers are out: the stream's keepalive starts.
		s.held = false
		s.stopHeldLocked()
		if s.cfg.keepAlive > 0 && s.timer == nil {
			s.timer = time.AfterFunc(s.cfg.keepAlive, s.tick)
		}
	}
	return nil
}

func (s *SSEWriter) setDeadlineLocked() {
	if s.cfg.writeTimeout < 0 || s.noDeadline {
		return
	}
	if err := s.rc().SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout)); errors.Is(err, http.ErrNotSupported) {
		s.noDeadline = true
	}
}

func (s *SSEWriter) clearDeadlineLocked() {
	if s.noDeadline {
		return
	}
	if err := s.rc().SetWriteDeadline(time.Time{}); errors.Is(err, http.ErrNotSupported) {
		s.noDeadline = true
	}
}

// fail records the first write error, which breaks the writer.
func (s *SSEWriter) fail(err error) error {
	if s.err == nil {
		s.err = err
		s.brokeNow = true
		s.stopTimerLocked()
	}
	return s.err
}

func (s *SSEWriter) stopTimerLocked() {
	s.stopHeldLocked()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// markDoneLocked records that the writer broke or closed, and closes Done's channel if one was
// made.
func (s *SSEWriter) markDoneLocked() {
	if !s.ended {
		s.ended = true
		if s.done != nil {
			close(s.done)
		}
	}
}

// tick runs on the keepalive timer: it sends a ping comment and re-arms the timer. No goroutine
// exists between ticks.
func (s *SSEWriter) tick() {
	s.mu.Lock()
	if s.closed || s.err != nil || s.timer == nil {
		s.mu.Unlock()
		return
	}
	s.frame()
	b := append(*s.fb, ": ping "...)
	b = time.Now().AppendFormat(b, time.RFC3339)
	*s.fb = append(b, '\n', '\n')
	err := s.sendLocked()
	if err == nil && s.timer != nil {
		s.timer.Reset(s.cfg.keepAlive)
	}
	_ = s.release(err)
}
