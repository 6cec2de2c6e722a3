package mcphttp

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
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
	// KeepAlive is the interval of keepalive comments, which also find dead peers and free their
	// slot. Zero means DefaultListenKeepAlive (15 s); negative turns keepalives off (no timer is
	// armed at all).
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
	// MaxRequestBytes bounds the body when Listeners decodes it itself (mounted without a Decode
	// layer in front of it). Zero means 4 MiB. New passes Options.MaxRequestBytes.
	MaxRequestBytes int64
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
// stream stay in order and no lock shared between streams is held while writing. An idle stream
// holds no queue memory: a queue grows only while changes wait for their writer.
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
	reg       *core.ListenRegistry // the open streams, their cap and ids, the fan-out
	keepAlive time.Duration
	sse       middleware.SSEWriterOptions
	info      []byte        // the server's Implementation, for the _meta of the final result
	closeWait time.Duration // CloseTimeout when WriteTimeout is off, defaults applied; else 0
	callers   *callerCaps   // MaxStreamsPerCaller

	active sync.WaitGroup

	decode http.Handler // for a request no Decode layer ran in front of
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
	l := &Listeners{server: s, reg: core.NewListenRegistry(s, max),
		callers: newCallerCaps(opts.MaxStreamsPerCaller, DefaultMaxListenStreamsPerCaller)}
	switch ka := opts.KeepAlive; {
	case ka == 0:
		l.keepAlive = DefaultListenKeepAlive
	case ka > 0:
		l.keepAlive = ka
	}
	// The handler writes its own keepalive comments (see ServeHTTP): the SSE writer's timer
	// stays off, so nothing can be written after the final frame.
	l.sse = middleware.SSEWriterOptions{KeepAlive: -1, WriteTimeout: opts.WriteTimeout} // the handler writes its own
	if opts.WriteTimeout < 0 {
		switch ct := opts.CloseTimeout; {
		case ct == 0:
			l.closeWait = DefaultListenCloseTimeout
		case ct > 0:
			l.closeWait = ct
		}
	}
	l.info, _ = json.Marshal(s.Implementation())
	l.decode = decodingIfNeeded(opts.MaxRequestBytes, l.serve)
	return l
}

// Len returns the number of open listen streams.
func (l *Listeners) Len() int { return l.reg.Len() }

// Close ends every stream gracefully (see the type's doc), stops receiving changes and waits
// until the streams have written their last frame. Every write a stream makes from then on is
// bounded (by WriteTimeout, or CloseTimeout when WriteTimeout is off), so a client that stopped
// reading holds Close up for a bounded time.
func (l *Listeners) Close() {
	var each func(*core.Listener)
	if l.closeWait > 0 {
		// WriteTimeout is off: a handler blocked in a write would never see the close, so its
		// connection's deadline bounds that write. Once it sees the close, finish puts a
		// deadline on each of its final writes (a successful write clears the deadline, so this
		// one bounds only the write now under way).
		deadline := time.Now().Add(l.closeWait)
		each = func(st *core.Listener) { _ = st.Conn.(*http.ResponseController).SetWriteDeadline(deadline) }
	}
	l.reg.Close(each) // no stream opens after this
	l.active.Wait()
}

// ServeHTTP serves one subscriptions/listen POST. In the default stack the Modern handler hands
// it over once the body is decoded and the mirror headers are checked; mounted alone it answers
// 405 to other methods and decodes the body itself (it does not check the headers).
func (l *Listeners) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		refuse(w, r, http.StatusMethodNotAllowed, core.ID{}, core.CodeInvalidRequest, "Method not allowed")
		return
	}
	l.decode.ServeHTTP(w, r)
}

func (l *Listeners) serve(w http.ResponseWriter, r *http.Request) {
	msg, _ := middleware.MessageFrom(r.Context())
	if !msg.ID.IsValid() {
		refuse(w, r, http.StatusBadRequest, core.ID{}, core.CodeInvalidRequest, "Invalid Request: subscriptions/listen requires an id")
		return
	}
	if !core.ClaimsModern(msg) {
		refuse(w, r, http.StatusBadRequest, msg.ID, core.CodeInvalidRequest, "Invalid Request: modern requests require the SEP-2575 `_meta` envelope")
		return
	}
	env, err := core.ParseEnvelope(msg)
	if err != nil {
		var e *core.Error
		if !errors.As(err, &e) {
			e = core.InternalError("Internal error handling subscriptions/listen request")
		}
		writeModern(w, r, &core.Response{ID: msg.ID, Error: e})
		return
	}
	filter, perr := core.ParseListenFilter(msg.Params)
	if perr != nil {
		writeModern(w, r, &core.Response{ID: msg.ID, Error: perr})
		return
	}
	if filter, err = l.server.HonorListen(r.Context(), env, filter); err != nil {
		var e *core.Error
		if !errors.As(err, &e) {
			e = core.InternalError("Internal error handling subscriptions/listen request")
		}
		writeModern(w, r, &core.Response{ID: msg.ID, Error: e})
		return
	}
	// A listen id must be unique among the open streams of one principal (core.PrincipalFrom):
	// a second stream with the same id is refused with 409, while another principal may use the
	// same id. Callers with no principal share one scope.
	scope, _ := core.PrincipalFrom(r.Context())
	l.active.Add(1) // before the stream opens: Close waits for it once it could open
	defer l.active.Done()
	caller := CallerKey(r)
	if !l.callers.acquire(caller) {
		refuseCaller(w, r, msg.ID, "subscriptions/listen streams", l.callers.max)
		return
	}
	defer l.callers.release(caller)
	st, err := l.reg.Open(scope, msg.ID, filter, http.NewResponseController(w))
	switch {
	case errors.Is(err, core.ErrListenLimit):
		refuse(w, r, http.StatusServiceUnavailable, msg.ID, core.CodeInternalError,
			"Service unavailable: maximum concurrent subscriptions/listen streams ("+strconv.Itoa(l.reg.Max())+") reached")
		return
	case errors.Is(err, core.ErrListenDuplicate):
		refuse(w, r, http.StatusConflict, msg.ID, core.CodeInvalidRequest, "Conflict: a subscriptions/listen stream with this id is already open")
		return
	case err != nil:
		refuse(w, r, http.StatusServiceUnavailable, msg.ID, core.CodeInternalError, msgShuttingDown)
		return
	}
	// Runs last, after the final frames: once Close returns, Len counts no finished stream.
	defer st.Close()

	tail := &streamTail{w: w, timeout: l.sse.WriteTimeout}
	defer tail.bound()
	sse := middleware.NewSSEWriter(w, l.sse)
	defer sse.Close()
	// Close may already have been called: then every write here is bounded (see bound).
	l.bound(st)
	if err := sse.Start(); err != nil {
		return
	}
	// From here on this goroutine is the stream's only writer: the acknowledgement goes first,
	// whatever was published since the stream registered waits in its queue.
	buf := core.AppendListenAck(make([]byte, 0, 256), st)
	l.bound(st)
	if sse.WriteMessage(buf) != nil {
		return
	}
	var tick <-chan time.Time
	if l.keepAlive > 0 {
		t := time.NewTicker(l.keepAlive)
		defer t.Stop()
		tick = t.C
	}
	var spare []core.Change
	for {
		select {
		case <-st.Wake():
			changes, behind := st.Take(spare)
			if behind {
				tail.abort = true
				return // fell a whole queue behind: the client must reconnect and list again
			}
			for i, c := range changes {
				if l.closed() {
					l.finish(sse, st, tail)
					return
				}
				buf = core.AppendListenChange(buf[:0], c, st.IDJSON)
				if sse.WriteMessage(buf) != nil {
					return
				}
				changes[i] = core.Change{}
			}
			spare = changes
		case <-tick:
			if l.closed() {
				l.finish(sse, st, tail)
				return
			}
			if sse.WriteComment("ping "+time.Now().Format(time.RFC3339)) != nil {
				return // the peer is gone: free the slot
			}
		case <-l.reg.Closing():
			l.finish(sse, st, tail)
			return
		case <-r.Context().Done():
			return // the client closed the stream
		}
	}
}

// closed reports whether Close was called. The stream's handler asks before each ordinary write,
// so once Close was called it writes nothing but the final frames, which are bounded.
func (l *Listeners) closed() bool { return l.reg.Closed() }

// bound puts a CloseTimeout deadline on the next write of a stream once Close was called and
// WriteTimeout is off. The writer then sets no deadline of its own, and a successful write
// clears this one: it is needed before each write.
func (l *Listeners) bound(st *core.Listener) {
	if l.closeWait > 0 && l.closed() {
		_ = st.Conn.(*http.ResponseController).SetWriteDeadline(time.Now().Add(l.closeWait))
	}
}

// finish ends a stream gracefully: notifications/cancelled for the listen request, then the
// complete result as the very last frame. When WriteTimeout is off, each of these writes gets
// CloseTimeout at most, and so does what net/http writes after the handler returns.
func (l *Listeners) finish(sse *middleware.SSEWriter, st *core.Listener, tail *streamTail) {
	if l.closeWait > 0 {
		tail.timeout = l.closeWait
	}
	b := core.AppendListenCancelled(make([]byte, 0, 256+len(l.info)), st.IDJSON, core.ListenShutdownReason)
	l.bound(st)
	if sse.WriteMessage(b) != nil {
		return
	}
	b = core.AppendListenResult(b[:0], st.IDJSON, l.info)
	l.bound(st)
	_ = sse.WriteFinal(b)
}
