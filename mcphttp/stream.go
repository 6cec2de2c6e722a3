package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// streams is the per-session transport state: whether the standalone GET stream is open, and
// the session's resumable request streams (see resume.go). Its locks belong to this session.
type streams struct {
	get atomic.Bool

	mu    sync.Mutex // guards next, live and ended
	next  uint64     // the last stream id issued
	live  map[uint64]*resumable
	ended bool

	// storeMu orders appends to the event store (read side) before the session's end (write
	// side), so nothing is stored for a session once the store forgot it.
	storeMu    sync.RWMutex
	storeEnded bool

	// shared is set when the event store is shared with other replicas: stream ids then start
	// at a random point, so that streams of one session opened on different replicas never
	// share an id in the store.
	shared bool
}

func (e *Endpoint) get(w http.ResponseWriter, r *http.Request, ex *middleware.Exchange) {
	if !ex.CanStream() {
		middleware.RefuseNoSSE(w, r, jsonrpc.ID{})
		return
	}
	l := sessionOf(w, r)
	if l == nil {
		return
	}
	st := l.st
	if e.res != nil && st != nil {
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			if rs, after := st.lookup(last); rs != nil && e.resume(w, r, ex, l, rs, after) {
				return
			}
			if e.res.shared != nil && e.replayShared(w, r, ex, l, last) {
				return
			}
			// Not a stream of this session that is still kept: an ordinary GET.
		}
	}
	if st == nil || !st.get.CompareAndSwap(false, true) {
		middleware.RefuseSecondStream(w, r)
		return
	}
	defer st.get.Store(false)
	if r.Header.Get("Last-Event-ID") != "" {
		claim, ok := e.claimStandalone(w, r, l)
		if !ok {
			return
		}
		defer claim.Release(context.WithoutCancel(r.Context()))
	}
	sse := ex.SSE(w)
	defer sse.Close() // before the slot and claim are given back: no two GET writers overlap
	// The path is in place before the headers go out: a client that saw the 200 gets every
	// message sent from then on (they wait in the queue until the stream starts).
	q := newStreamQueue()
	transport.Core.SetOut(l.cs, q)
	defer func() {
		transport.Core.SetOut(l.cs, nil)
		q.end()
	}()
	if err := sse.Start(); err != nil {
		return
	}
	expired, stopExpiry := expiryTimer(r.Context())
	defer stopExpiry()
	// This handler is the stream's only writer: whoever sends on the session-level path (a
	// broadcast, a session-level ping) only queues, and never waits on this client.
	broken, ended := sse.Done(), l.cs.Done()
	for {
		select {
		case <-q.behind:
			sse.Abort()
			return // the client fell too far behind: it re-opens the stream
		default:
		}
		select {
		case msg := <-q.ch:
			if sse.WriteMessage(msg) != nil {
				return
			}
		case <-q.behind:
			sse.Abort()
			return
		case <-r.Context().Done():
			return
		case <-ended:
			return
		case <-broken:
			return
		case <-expired:
			return // the token it was opened with expired: the client must authenticate again
		}
	}
}

// claimStandalone claims the session's one standalone stream for a GET whose Last-Event-ID
// named no stream to resume: the session layer claimed nothing for it, so this ordinary GET
// claims it here, across replicas too (a store that shares nothing ignores the claim). It
// answers the refusal itself and reports false when the claim is refused.
func (e *Endpoint) claimStandalone(w http.ResponseWriter, r *http.Request, l *live) (*session.Claim, bool) {
	claim := &session.Claim{Stream: true}
	if _, err := e.Lookup(session.WithClaim(r.Context(), claim), l.rec.ID, true, nil); err != nil {
		middleware.RefuseLookup(w, r, jsonrpc.ID{}, err)
		return nil, false
	}
	return claim, true
}

// untilExpiry returns ctx ended when the request's credentials expire (middleware.CredentialsExpiry),
// for the streams that resume a request: they close then, and the request goes on for a client
// that resumes it with valid credentials.
func untilExpiry(ctx context.Context) (context.Context, context.CancelFunc) {
	if t, ok := middleware.CredentialsExpiry(ctx); ok {
		return context.WithDeadline(ctx, t)
	}
	return ctx, func() {}
}

// expiryTimer returns a channel that receives when the request's credentials expire
// (middleware.CredentialsExpiry), and the function that stops its timer. With no expiry the
// channel is nil (never ready) and no timer exists.
func expiryTimer(ctx context.Context) (<-chan time.Time, func()) {
	t, ok := middleware.CredentialsExpiry(ctx)
	if !ok {
		return nil, func() {}
	}
	tm := time.NewTimer(time.Until(t))
	return tm.C, func() { tm.Stop() }
}

// StreamQueueSize is how many messages may wait for a GET stream's writer. A client that falls
// further behind (it stopped reading, or reads more slowly than messages arrive) loses the
// stream: its next message is refused and the stream ends, and the client re-opens it.
const StreamQueueSize = 256

// errStreamBehind is what the session-level path answers once its client fell too far behind.
var errStreamBehind = errors.New("mcphttp: the client fell behind: its stream is closing")

// streamQueue is the session-level path of a session while its GET stream is open. Send queues
// the message for the stream's writer (the GET handler) and returns at once; it never blocks.
type streamQueue struct {
	ch         chan []byte
	behind     chan struct{} // closed when a message did not fit
	done       chan struct{} // closed when the stream ended
	behindOnce sync.Once
}

func newStreamQueue() *streamQueue {
	return &streamQueue{
		ch:     make(chan []byte, StreamQueueSize),
		behind: make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Send implements transport.Sender. msg is not modified and must not be modified by the caller
// afterwards (a broadcast shares one encoding between sessions).
func (q *streamQueue) Send(_ context.Context, msg []byte) error {
	select {
	case <-q.done:
		return middleware.ErrSSEClosed
	case <-q.behind:
		return errStreamBehind
	default:
	}
	select {
	case q.ch <- msg:
		return nil
	default:
		q.behindOnce.Do(func() { close(q.behind) })
		return errStreamBehind
	}
}

func (q *streamQueue) end() { close(q.done) }

// streamTail bounds what net/http still writes once a listen stream's handler returns (the chunk
// that ends the response, and any bytes left in its buffer), as the SSE layer does for the
// streams written through it: the stream clears its deadline after every successful write, so
// without this a client that stopped reading at the wrong moment would hold the connection, and
// the goroutine serving it, forever. The tail gets the stream's write timeout, or nothing at all
// once abort was set (a stream dropped because its client fell behind).
type streamTail struct {
	w       http.ResponseWriter
	timeout time.Duration // the SSE write timeout as configured: 0 means the default, < 0 none
	abort   bool
}

func (t *streamTail) bound() {
	var deadline time.Time
	switch {
	case t.abort:
		deadline = time.Now()
	case t.timeout < 0:
		return
	case t.timeout == 0:
		deadline = time.Now().Add(middleware.DefaultSSEWriteTimeout)
	default:
		deadline = time.Now().Add(t.timeout)
	}
	_ = http.NewResponseController(t.w).SetWriteDeadline(deadline)
}

// sseSender sends messages as SSE events on one stream.
type sseSender struct{ w *middleware.SSEWriter }

func (s sseSender) Send(_ context.Context, msg []byte) error { return s.w.WriteMessage(msg) }
