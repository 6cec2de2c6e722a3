package middleware

import (
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// msgNoSSE answers a request that needed an event stream and found no SSE layer in front.
const msgNoSSE = "Internal error: the request reached the handler without an SSE layer in front of it"

// SSEOptions configure the SSE layer. The zero value sends a keepalive comment on every stream
// that stays silent for DefaultSSEKeepAlive (30 s) and bounds every write by
// DefaultSSEWriteTimeout (30 s).
type SSEOptions struct {
	// KeepAlive is the interval between ": ping <time>" comments on a stream, which keep proxies
	// and clients from timing out an idle stream. Zero means DefaultSSEKeepAlive (30 s);
	// negative turns keepalives off.
	KeepAlive time.Duration
	// WriteTimeout bounds every write of a stream (frame plus flush), and what net/http still
	// writes once the handler returned (the chunk that ends the response), so that a client that
	// stops reading holds up its own stream for this long at most. Zero means
	// DefaultSSEWriteTimeout (30 s); negative turns the bound off. The bound after the handler,
	// when it is a second or more, may count from the time the sweep of held headers last read
	// (see SSEWriter.StartDeferred), a few milliseconds earlier at most, instead of a read of
	// the clock of its own.
	WriteTimeout time.Duration
}

// sseConfig is what a writer keeps of its SSEWriterOptions, the defaults applied: the SSE layer
// makes it once for all its writers, NewSSEWriter with the writer it makes.
type sseConfig struct {
	keepAlive    time.Duration // 0: no keepalive comments
	writeTimeout time.Duration // negative: no write deadline
	onBroken     func(error)
}

// newSSEConfig applies the defaults of opts.
func newSSEConfig(opts SSEWriterOptions) sseConfig {
	wt := opts.WriteTimeout
	if wt == 0 {
		wt = DefaultSSEWriteTimeout
	}
	ka := opts.KeepAlive
	switch {
	case ka == 0:
		ka = DefaultSSEKeepAlive
	case ka < 0:
		ka = 0 // off
	}
	return sseConfig{keepAlive: ka, writeTimeout: wt, onBroken: opts.OnBroken}
}

// sseLayer is the configuration of one SSE layer, shared by every request it serves.
type sseLayer struct {
	writer sseConfig     // what its writers keep of its options
	tail   time.Duration // the bound of what follows a stream: 0 none
}

// SSE is the layer that owns the Server-Sent Events streams of the handlers below it: a handler
// that answers with a stream takes it from the request's Exchange (Exchange.SSE), which makes the
// writer on the first call with this layer's options (keepalive comments, write deadlines, the
// headers that stop proxy buffering: see SSEWriter), and the layer ends the stream once the
// handler returned, whichever way it returned (a panic included):
//
//   - it closes the writer, so nothing written late (a notification of a call the handler left
//     behind, a keepalive comment) touches the response after the handler;
//   - it bounds what net/http still writes for a stream that started (the chunk that ends the
//     response) by WriteTimeout, or cuts the connection at once when the handler called
//     SSEWriter.Abort (a client that fell behind must see its stream break, not end).
//
// The layer answers nothing itself: a stream answers 200 with Content-Type text/event-stream
// (SSEWriter.Start), and a handler below that needs a stream and finds no SSE layer in front
// answers 500 -32603 (RefuseNoSSE). A request that does not stream costs one field of its
// Exchange: no allocation when a layer in front made the record (Decode does, for every POST),
// else the record's one. An SSE layer nested in another takes over for the handlers below it.
//
// The default stack has one in front of each handler that streams: the legacy endpoint
// (Options.KeepAlive and WriteTimeout) and the 2026-07-28 handler (WriteTimeout, no keepalive
// comments: a 2026-07-28 request's stream carries its call's notifications and ends with its
// response). A subscriptions/listen stream is not written through it: the listen handler
// writes its streams itself (one keepalive sweep for every stream instead of a timer each, the
// changes waiting for a stream in one write, its own bound on the final frames), with its own
// options.
func SSE(opts SSEOptions) func(http.Handler) http.Handler {
	wo := SSEWriterOptions{KeepAlive: opts.KeepAlive, WriteTimeout: opts.WriteTimeout}
	l := &sseLayer{writer: newSSEConfig(wo)}
	switch wt := opts.WriteTimeout; {
	case wt == 0:
		l.tail = DefaultSSEWriteTimeout
	case wt > 0:
		l.tail = wt
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r, ex := ensureExchange(r)
			outer := ex.sse
			ex.sse = l
			defer l.end(ex, outer)
			next.ServeHTTP(w, r)
		})
	}
}

// end ends the stream the handler took, if any, and gives the Exchange back to the layer in
// front.
func (l *sseLayer) end(ex *Exchange, outer *sseLayer) {
	ex.sse = outer
	s := ex.stream
	if s == nil {
		return
	}
	ex.stream = nil
	s.mu.Lock()
	s.closeLocked()
	started, aborted := s.started, s.aborted
	s.mu.Unlock()
	switch {
	case !started:
	case aborted:
		_ = s.rc().SetWriteDeadline(time.Now())
	case l.tail >= time.Second:
		// A bound this long takes the time the sweep of held headers read (a few milliseconds
		// old at most while it runs, as it does after a request's stream was held): one read
		// of the clock less per request.
		_ = s.rc().SetWriteDeadline(sweptNow().Add(l.tail))
	case l.tail > 0:
		_ = s.rc().SetWriteDeadline(time.Now().Add(l.tail))
	}
}

// Abort closes the writer, as Close does, and has the SSE layer in front cut the connection once
// the handler returned instead of ending the response cleanly: what net/http still writes then
// gets a deadline that has passed. A handler aborts a stream whose client fell too far behind,
// which must see the stream break (and reconnect) rather than end. Without an SSE layer Abort is
// Close.
func (s *SSEWriter) Abort() {
	s.mu.Lock()
	s.aborted = true
	s.mu.Unlock()
	s.Close()
}

// SSE returns the event stream of the exchange, written to w: the writer the SSE layer in front
// of the handler makes on the first call, with that layer's options, and the same writer on
// later calls. The layer closes it once the handler returned; the handler may close it earlier.
// SSE returns nil when no SSE layer is in front (see CanStream). Calls must not race: the
// handler makes them, or orders them with its own lock.
func (e *Exchange) SSE(w http.ResponseWriter) *SSEWriter {
	if e.stream == nil && e.sse != nil {
		if r := e.room; r != nil && r.stream.w == nil && !r.stream.closed {
			e.stream = &r.stream // the record's storage, taken once (closed by the layer after)
		} else {
			e.stream = new(SSEWriter)
		}
		e.stream.init(w, &e.sse.writer)
		e.stream.tailBound = e.sse.tail > 0
	}
	return e.stream
}

// CanStream reports whether an SSE layer is in front of the handler, so that SSE returns a
// writer. A handler that streams asks before it writes anything, and answers RefuseNoSSE when
// it cannot.
func (e *Exchange) CanStream() bool { return e != nil && e.sse != nil }

// RefuseNoSSE answers 500 -32603 for a request whose answer is an event stream that reached a
// handler with no SSE layer in front of it (the stack lacks the SSE layer), echoing id.
func RefuseNoSSE(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) {
	refuse(w, r, http.StatusInternalServerError, id, jsonrpc.CodeInternalError, msgNoSSE)
}
