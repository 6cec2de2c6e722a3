package mcphttp

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/listen"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
)

// Defaults of ListenersOptions.
const (
	DefaultMaxListenStreams = 1000
	DefaultListenKeepAlive  = 15 * time.Second
	// DefaultListenCloseTimeout bounds the final frames of each stream on Close when
	// ListenersOptions.CloseTimeout is zero.
	DefaultListenCloseTimeout = 10 * time.Second
)

// ListenersOptions configure subscriptions/listen, the long-lived stream through which 2026-07-28
// clients receive the change notifications they ask for.
type ListenersOptions struct {
	// MaxStreams caps the open listen streams. Zero means DefaultMaxListenStreams (1000); past
	// the cap a new listen gets 503. NewListeners panics on a negative value.
	MaxStreams int
	// KeepAlive is the longest a stream stays silent: a stream that carried nothing for about
	// this long gets a keepalive comment, which also finds a dead peer and frees its slot. One
	// timer of the Listeners checks every stream four times per interval (no timer per stream).
	// Zero means DefaultListenKeepAlive (15 s); negative turns keepalives off (no timer is armed
	// at all).
	KeepAlive time.Duration
	// WriteTimeout bounds each write. Zero means 30 s (New uses Options.WriteTimeout when it is
	// set); negative turns the bound off, except for what Close writes (see CloseTimeout).
	WriteTimeout time.Duration
	// CloseTimeout matters only when WriteTimeout is off: it then bounds each write a stream
	// makes once Close was called (the write under way at that moment, and each final frame), so
	// a client that stopped reading cannot hold up Close forever. With WriteTimeout on,
	// WriteTimeout bounds those writes like any other. Zero means DefaultListenCloseTimeout
	// (10 s); negative leaves them unbounded too (Close may then wait forever on a stalled
	// client).
	CloseTimeout time.Duration
	// MaxStreamsPerCaller caps the listen streams one caller (see CallerKey) holds open at
	// once, so one client cannot take every slot: past it a new listen gets 429, -32603. Zero
	// means DefaultMaxListenStreamsPerCaller (100); negative removes the cap.
	MaxStreamsPerCaller int
	// Callers keeps the count of MaxStreamsPerCaller in a store the replicas share
	// (redisstore.NewCaps), so that a caller's share holds across them. Nil counts it in this
	// process.
	Callers CallerCounter
}

// Listeners serves subscriptions/listen and fans change notifications out to the open streams.
//
// Each stream's first frame is notifications/subscriptions/acknowledged with the honored subset of
// its filter; nothing reaches a stream before it, even when a change is published at the same
// moment, because the stream's own handler writes the acknowledgement before it starts draining
// its queue. Every delivered frame carries _meta.io.modelcontextprotocol/subscriptionId, the
// listen request's id. Publishing never waits on a client: a change is queued on each matching
// stream (a stream that falls a whole queue behind is closed) and written by that stream's
// handler, which is the only writer of its stream (keepalive comments included), so frames of one
// stream stay in order and no lock shared between streams is held while writing. A change is
// encoded once for every stream (each splices in its own id), and the changes waiting for one
// stream go out in one write. An idle stream has no goroutine but its handler, no timer and no
// frame buffer: its handler waits on one channel, a buffer is borrowed only while writing, and
// keepalives come from one timer shared by every stream. That is why the streams are written
// here, with ListenersOptions' keepalive and write bounds, and not through the SSE layer in front
// of the 2026-07-28 handler (whose writer arms a timer per stream): a stream's headers are sent
// by an SSEWriter that is closed at once, everything after them by the stream's handler.
//
// On Close each stream ends gracefully. The 2026-07-28 specification asks two things of a server
// tearing a subscription down: the cancellation page says it MUST send notifications/cancelled
// referencing the listen request, and the subscriptions page says it SHOULD answer the listen
// request with a complete result. The kit does both, in that order, so the result
// ({"resultType":"complete","_meta":{subscriptionId, serverInfo}}) is the last frame of the
// stream and nothing follows it, not even a keepalive comment. A client closing the stream frees
// its slot at once; a peer that vanished without closing is found by the next keepalive write.
type Listeners struct {
	server    *core.Server
	reg       *listen.Registry // the open streams, their cap and ids, the fan-out
	keepAlive time.Duration
	// writeTimeout bounds each write (WriteTimeout with its default); negative means none.
	writeTimeout time.Duration
	info         []byte        // the server's Implementation, for the _meta of the final result
	closeWait    time.Duration // CloseTimeout when WriteTimeout is off, defaults applied; else 0
	callers      *callerCaps   // MaxStreamsPerCaller

	active sync.WaitGroup
	pinger keepAliver
}

// NewListeners returns the listen registry of s and subscribes it to the server's broadcaster.
func NewListeners(s *core.Server, opts ListenersOptions) *Listeners {
	if opts.MaxStreams < 0 {
		panic("mcphttp: ListenersOptions.MaxStreams must be >= 0")
	}
	max := opts.MaxStreams
	if max == 0 {
		max = DefaultMaxListenStreams
	}
	l := &Listeners{server: s, reg: listen.New(s, max),
		callers: newCallerCaps(opts.MaxStreamsPerCaller, DefaultMaxListenStreamsPerCaller)}
	l.callers.share(opts.Callers, "listen|")
	switch ka := opts.KeepAlive; {
	case ka == 0:
		l.keepAlive = DefaultListenKeepAlive
	case ka > 0:
		l.keepAlive = ka
	}
	l.pinger.l = l
	l.writeTimeout = opts.WriteTimeout
	if l.writeTimeout == 0 {
		l.writeTimeout = middleware.DefaultSSEWriteTimeout
	}
	if opts.WriteTimeout < 0 {
		switch ct := opts.CloseTimeout; {
		case ct == 0:
			l.closeWait = DefaultListenCloseTimeout
		case ct > 0:
			l.closeWait = ct
		}
	}
	l.info, _ = json.Marshal(transport.Core.Implementation(s))
	return l
}

// Len returns the number of open listen streams.
func (l *Listeners) Len() int { return l.reg.Len() }

// Close ends every stream gracefully (see the type's doc), stops receiving changes and waits
// until the streams have written their last frame. Every write a stream makes from then on is
// bounded (by WriteTimeout, or CloseTimeout when WriteTimeout is off), so a client that stopped
// reading holds Close up for a bounded time.
func (l *Listeners) Close() {
	var each func(*listen.Listener)
	if l.closeWait > 0 {
		// WriteTimeout is off: a handler blocked in a write would never see the close, so its
		// connection's deadline bounds that write. Once it sees the close, finish puts a
		// deadline on each of its final writes (a successful write clears the deadline, so this
		// one bounds only the write now under way).
		deadline := time.Now().Add(l.closeWait)
		each = func(st *listen.Listener) { _ = st.Conn.(*listenStream).rc.SetWriteDeadline(deadline) }
	}
	l.reg.Close(each) // no stream opens after this
	l.pinger.stop()
	l.active.Wait()
}

// ServeHTTP serves one subscriptions/listen POST. In the default stack the Modern handler hands
// it over (ModernOptions.Listen) once the layers in front checked the method, the Accept header,
// the body and the mirror headers; mounted alone it needs the same layers in front of it (a
// request without a decoded message is answered 500).
func (l *Listeners) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	msg, ok := middleware.MessageFrom(r.Context())
	if !ok {
		middleware.RefuseUndecoded(w, r)
		return
	}
	l.serve(w, r, msg)
}

func (l *Listeners) serve(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	st, caller, ok := l.open(w, r, msg)
	if !ok {
		return
	}
	defer l.active.Done()
	defer l.callers.release(caller)
	// Runs last, after the final frames: once Close returns, Len counts no finished stream.
	defer st.Close()
	l.stream(r, st, st.Conn.(*listenStream))
}

// open admits a listen request and opens its stream, counted in l.active and against its
// caller's cap; it answers a request it refuses itself (ok false, nothing to release). The
// waiting stream's handler keeps none of this function's frame on its stack.
func (l *Listeners) open(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) (_ *listen.Listener, caller string, ok bool) {
	id, filter, ok := l.admit(w, r, msg)
	if !ok {
		return nil, "", false
	}
	// A listen id must be unique among the open streams of one principal (core.PrincipalFrom):
	// a second stream with the same id is refused with 409, while another principal may use the
	// same id. Callers with no principal share one scope.
	scope, _ := core.PrincipalFrom(r.Context())
	l.active.Add(1) // before the stream opens: Close waits for it once it could open
	caller = CallerKey(r)
	if ok, err := l.callers.acquire(r.Context(), caller); !ok || err != nil {
		l.active.Done()
		refuseCaller(w, r, id, "subscriptions/listen streams", l.callers.max, err)
		return nil, "", false
	}
	st, err := l.reg.Open(scope, id, filter, &listenStream{w: w, rc: http.NewResponseController(w)})
	if err == nil {
		return st, caller, true
	}
	l.callers.release(caller)
	l.active.Done()
	switch {
	case errors.Is(err, listen.ErrLimit):
		middleware.Refuse(w, r, http.StatusServiceUnavailable, id, jsonrpc.CodeInternalError,
			"Service unavailable: maximum concurrent subscriptions/listen streams ("+strconv.Itoa(l.reg.Max())+") reached")
	case errors.Is(err, listen.ErrDuplicate):
		middleware.Refuse(w, r, http.StatusConflict, id, jsonrpc.CodeInvalidRequest, "Conflict: a subscriptions/listen stream with this id is already open")
	default:
		middleware.RefuseShuttingDown(w, r, id)
	}
	return nil, "", false
}

// admit checks a listen request and reads its filter, honored for the caller; it answers a
// request it refuses itself (ok false).
func (l *Listeners) admit(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) (_ jsonrpc.ID, _ core.SubscriptionFilter, ok bool) {
	if !msg.ID.IsValid() {
		middleware.Refuse(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: subscriptions/listen requires an id")
		return jsonrpc.ID{}, core.SubscriptionFilter{}, false
	}
	if !transport.Core.ClaimsModern(msg) {
		middleware.Refuse(w, r, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: modern requests require the SEP-2575 `_meta` envelope")
		return jsonrpc.ID{}, core.SubscriptionFilter{}, false
	}
	env, err := transport.Core.ParseEnvelope(msg)
	var filter core.SubscriptionFilter
	if err == nil {
		var perr *jsonrpc.Error
		if filter, perr = transport.Core.ParseListenFilter(msg.Params); perr != nil {
			err = perr
		} else {
			filter, err = transport.Core.HonorListen(l.server, r.Context(), env, filter)
		}
	}
	if err != nil {
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = jsonrpc.InternalError("Internal error handling subscriptions/listen request")
		}
		writeModern(w, r, &core.Response{ID: msg.ID, Error: e})
		return jsonrpc.ID{}, core.SubscriptionFilter{}, false
	}
	return msg.ID, filter, true
}

// stream serves an open stream until it ends: the acknowledgement first, then the changes, the
// keepalive comments, and the final frames on Close. Its handler is the stream's only writer, and
// waits on the stream's one wake-up channel between writes.
func (l *Listeners) stream(r *http.Request, st *listen.Listener, ls *listenStream) {
	tail := &streamTail{w: ls.w, timeout: l.writeTimeout}
	defer tail.bound()
	// Close may already have been called: then every write here is bounded (see bound).
	l.bound(st)
	if ls.start(l.writeTimeout) != nil {
		return
	}
	// The acknowledgement goes first; whatever was published since the stream registered waits
	// in its queue.
	l.bound(st)
	if ls.send(l.writeTimeout, func(b []byte) []byte {
		return appendSSEData(b, func(b []byte) []byte { return listen.AppendAck(b, st) })
	}) != nil {
		return
	}
	l.pinger.add()
	expired, stopExpiry := expiryTimer(r.Context())
	defer stopExpiry()
	var spare []listen.EncodedChange
	for {
		select {
		case <-st.Wake():
			var end streamEnd
			if spare, end = l.drain(st, ls, spare); end == streamGoOn {
				continue
			}
			if end == streamFinish {
				l.finish(st, ls, tail)
			} else if end == streamAbort {
				tail.abort = true // fell a whole queue behind: the client must reconnect and list again
			}
			return
		case <-l.reg.Closing():
			l.finish(st, ls, tail)
			return
		case <-r.Context().Done():
			return // the client closed the stream
		case <-expired:
			l.expire(st, ls)
			return
		}
	}
}

// expire ends a stream whose credentials expired: the listen request is answered with
// middleware.CredentialsExpired, the stream's last frame.
func (l *Listeners) expire(st *listen.Listener, ls *listenStream) {
	resp := transport.Core.EncodeResponseMessage(&core.Response{ID: st.ID, Error: middleware.CredentialsExpired()})
	_ = ls.send(l.writeTimeout, func(b []byte) []byte {
		return appendSSEData(b, func(b []byte) []byte { return append(b, resp...) })
	})
}

// streamEnd is what a stream's handler does after a wake-up.
type streamEnd int

const (
	streamGoOn   streamEnd = iota // wait for the next wake-up
	streamFinish                  // Close was called: write the final frames
	streamAbort                   // fell a whole queue behind: cut the stream
	streamGone                    // a write failed: the peer is gone
)

// drain writes what woke the stream: its pending changes, all in one write, or a keepalive
// comment when the sweep found it silent. It returns the emptied queue for reuse.
func (l *Listeners) drain(st *listen.Listener, ls *listenStream, spare []listen.EncodedChange) ([]listen.EncodedChange, streamEnd) {
	changes, behind := st.Take(spare)
	if behind {
		return nil, streamAbort
	}
	ping := ls.ping.Swap(false)
	if len(changes) == 0 && !ping {
		return changes, streamGoOn
	}
	if l.closed() {
		return changes, streamFinish
	}
	err := ls.send(l.writeTimeout, func(b []byte) []byte {
		if len(changes) == 0 {
			b = append(b, ": ping "...)
			b = time.Now().AppendFormat(b, time.RFC3339)
			return append(b, "\n\n"...)
		}
		for _, c := range changes {
			b = append(b, "data: "...)
			b = c.AppendTo(b, st.IDJSON)
			b = append(b, "\n\n"...)
		}
		return b
	})
	clear(changes)
	if err != nil {
		return changes, streamGone
	}
	return changes, streamGoOn
}

// closed reports whether Close was called. The stream's handler asks before each ordinary write,
// so once Close was called it writes nothing but the final frames, which are bounded.
func (l *Listeners) closed() bool { return l.reg.Closed() }

// bound puts a CloseTimeout deadline on the next write of a stream once Close was called and
// WriteTimeout is off. The stream then sets no deadline of its own: it is needed before each
// write.
func (l *Listeners) bound(st *listen.Listener) {
	if l.closeWait > 0 && l.closed() {
		_ = st.Conn.(*listenStream).rc.SetWriteDeadline(time.Now().Add(l.closeWait))
	}
}

// finish ends a stream gracefully, in one write: notifications/cancelled for the listen request,
// then the complete result as the very last frame. When WriteTimeout is off, that write gets
// CloseTimeout at most, and so does what net/http writes after the handler returns.
func (l *Listeners) finish(st *listen.Listener, ls *listenStream, tail *streamTail) {
	if l.closeWait > 0 {
		tail.timeout = l.closeWait
	}
	l.bound(st)
	_ = ls.send(l.writeTimeout, func(b []byte) []byte {
		b = appendSSEData(b, func(b []byte) []byte { return listen.AppendCancelled(b, st.IDJSON, listen.ShutdownReason) })
		return appendSSEData(b, func(b []byte) []byte { return listen.AppendResult(b, st.IDJSON, l.info) })
	})
}

// listenStream is the HTTP side of one listen stream (listen.Listener.Conn): its response, and
// what the keepalive sweep knows of it. Only the stream's handler writes to the response.
type listenStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	last atomic.Int64 // when the stream last carried something, in Unix nanoseconds
	ping atomic.Bool  // the sweep found the stream silent: the handler writes a keepalive
}

// start sends the event-stream headers with status 200 and flushes them, as an SSEWriter starts
// a stream (which also clears the server's WriteTimeout for this long-lived response); the
// stream then writes its frames itself, so the writer is closed at once.
func (ls *listenStream) start(timeout time.Duration) error {
	sw := middleware.NewSSEWriter(ls.w, middleware.SSEWriterOptions{KeepAlive: -1, WriteTimeout: timeout})
	err := sw.Start()
	sw.Close()
	ls.last.Store(time.Now().UnixNano())
	return err
}

// framePool holds the buffers streams build their frames in: a stream borrows one only while it
// writes, so an idle stream holds none.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledFrame is the largest buffer returned to framePool.
const maxPooledFrame = 64 << 10

// send writes what frames appends to a borrowed buffer and flushes it, within timeout when it is
// positive (the deadline is cleared again after a successful write: an HTTP/2 stream is reset
// when its deadline passes, even idle).
func (ls *listenStream) send(timeout time.Duration, frames func([]byte) []byte) error {
	bp := framePool.Get().(*[]byte)
	b := frames((*bp)[:0])
	if timeout > 0 {
		_ = ls.rc.SetWriteDeadline(time.Now().Add(timeout))
	}
	_, err := ls.w.Write(b)
	if err == nil {
		err = ls.rc.Flush()
	}
	if err == nil && timeout > 0 {
		_ = ls.rc.SetWriteDeadline(time.Time{})
	}
	if cap(b) <= maxPooledFrame {
		*bp = b[:0]
		framePool.Put(bp)
	}
	ls.last.Store(time.Now().UnixNano())
	return err
}

// appendSSEData appends one server-sent event whose data is what msg appends: the kit's messages
// are JSON without line breaks, so the data fits one line.
func appendSSEData(b []byte, msg func([]byte) []byte) []byte {
	b = append(b, "data: "...)
	b = msg(b)
	return append(b, "\n\n"...)
}

// keepAliver is the one timer behind every stream's keepalive: armed while a stream is open, it
// runs a sweep four times per KeepAlive that marks each stream silent for nearly KeepAlive and
// wakes its handler, which writes the comment. No goroutine exists between sweeps.
type keepAliver struct {
	l *Listeners

	mu      sync.Mutex
	timer   *time.Timer
	armed   bool
	stopped bool
}

// add arms the timer for a stream that just opened (its first keepalive is due KeepAlive after
// its acknowledgement).
func (k *keepAliver) add() {
	if k.l.keepAlive <= 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.armed || k.stopped {
		return
	}
	k.armed = true
	if k.timer == nil {
		k.timer = time.AfterFunc(k.l.keepAlive/4, k.sweep)
		return
	}
	k.timer.Reset(k.l.keepAlive / 4)
}

// sweep marks and wakes the streams that are due, then re-arms while any stream is open.
func (k *keepAliver) sweep() {
	tick := k.l.keepAlive / 4
	due := time.Now().Add(tick - k.l.keepAlive).UnixNano() // silent since before this: ping
	k.l.reg.Each(func(st *listen.Listener) {
		ls := st.Conn.(*listenStream)
		if ls.last.Load() <= due {
			ls.ping.Store(true)
			st.Nudge()
		}
	})
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped || k.l.reg.Len() == 0 {
		k.armed = false
		return
	}
	k.timer.Reset(tick)
}

// stop disarms the timer for good (Close).
func (k *keepAliver) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
}
