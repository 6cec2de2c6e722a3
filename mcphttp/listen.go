package mcphttp

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
	// listenQueue is how many change notifications may wait for one slow stream; a stream that
	// falls further behind is closed (its client reconnects and lists again).
	listenQueue = 256
)

// ListenersOptions configure subscriptions/listen, the long-lived stream through which 2026-07-28
// clients receive the change notifications they ask for.
type ListenersOptions struct {
	// MaxStreams caps the open listen streams. Zero means DefaultMaxListenStreams (1000); past
	// the cap a new listen gets 503.
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
	max       int64
	keepAlive time.Duration
	sse       middleware.SSEWriterOptions
	info      []byte        // the server's Implementation, for the _meta of the final result
	closeWait time.Duration // CloseTimeout when WriteTimeout is off, defaults applied; else 0

	count   atomic.Int64
	mu      sync.RWMutex // guards streams and byID; publishing holds it for reading
	streams []*listenStream
	byID    map[listenKey]*listenStream
	unsub   func()

	closing  chan struct{}
	closeOne sync.Once
	active   sync.WaitGroup

	decode http.Handler // for a request no Decode layer ran in front of
}

// listenKey names a listen stream among the open ones: the principal it belongs to
// (core.PrincipalFrom; "" for nobody) and the listen request's id. A listen id must be unique
// among the open streams of one principal: a second stream with the same id is refused with 409,
// while another principal may use the same id. Callers with no principal share one scope.
type listenKey struct {
	principal string
	id        core.ID
}

// listenStream is one open subscriptions/listen stream. Publishers only append to pending, under
// the stream's own lock; the stream's handler takes the pending changes and writes them.
type listenStream struct {
	key    listenKey
	rc     *http.ResponseController // for the deadline Close puts on the stream's connection
	id     core.ID
	idJSON []byte
	filter core.SubscriptionFilter
	index  int // position in Listeners.streams, guarded by Listeners.mu

	mu      sync.Mutex
	pending []core.Change
	behind  bool
	wake    chan struct{} // capacity 1: changes are pending, or the stream fell behind
}

// push queues a change for the stream's writer. It never blocks.
func (st *listenStream) push(c core.Change) {
	st.mu.Lock()
	switch {
	case st.behind:
		st.mu.Unlock()
		return
	case len(st.pending) >= listenQueue:
		st.behind = true
		st.pending = nil
	default:
		st.pending = append(st.pending, c)
	}
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// take returns the pending changes, leaving spare (emptied) in their place, and whether the
// stream fell behind.
func (st *listenStream) take(spare []core.Change) ([]core.Change, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := st.pending
	st.pending = spare[:0]
	return out, st.behind
}

// NewListeners returns the listen registry of s and subscribes it to the server's broadcaster.
func NewListeners(s *core.Server, opts ListenersOptions) *Listeners {
	l := &Listeners{server: s, byID: map[listenKey]*listenStream{}, closing: make(chan struct{})}
	l.max = int64(opts.MaxStreams)
	if l.max <= 0 {
		l.max = DefaultMaxListenStreams
	}
	switch ka := opts.KeepAlive; {
	case ka == 0:
		l.keepAlive = DefaultListenKeepAlive
	case ka > 0:
		l.keepAlive = ka
	}
	// The handler writes its own keepalive comments (see ServeHTTP): the SSE writer's timer
	// stays off, so nothing can be written after the final frame.
	l.sse = middleware.SSEWriterOptions{WriteTimeout: opts.WriteTimeout}
	if opts.WriteTimeout < 0 {
		switch ct := opts.CloseTimeout; {
		case ct == 0:
			l.closeWait = DefaultListenCloseTimeout
		case ct > 0:
			l.closeWait = ct
		}
	}
	l.info, _ = json.Marshal(s.Implementation())
	l.unsub = s.Broadcaster().Subscribe(l.deliver)
	l.decode = decodingIfNeeded(opts.MaxRequestBytes, l.serve)
	return l
}

// Len returns the number of open listen streams.
func (l *Listeners) Len() int { return int(l.count.Load()) }

// Close ends every stream gracefully (see the type's doc), stops receiving changes and waits
// until the streams have written their last frame. Every write a stream makes from then on is
// bounded (by WriteTimeout, or CloseTimeout when WriteTimeout is off), so a client that stopped
// reading holds Close up for a bounded time.
func (l *Listeners) Close() {
	l.closeOne.Do(func() {
		l.unsub()
		l.mu.Lock() // no stream registers after this: register checks closing under the lock
		close(l.closing)
		if l.closeWait > 0 {
			// WriteTimeout is off: a handler blocked in a write would never see closing, so its
			// connection's deadline bounds that write. Once it sees closing, finish puts a
			// deadline on each of its final writes (a successful write clears the deadline, so
			// this one bounds only the write now under way).
			deadline := time.Now().Add(l.closeWait)
			for _, st := range l.streams {
				_ = st.rc.SetWriteDeadline(deadline)
			}
		}
		l.mu.Unlock()
	})
	l.active.Wait()
}

// deliver queues a change on every stream whose filter wants it. It never blocks on a client:
// it holds the registry's read lock only to append to each stream's queue.
func (l *Listeners) deliver(c core.Change) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, st := range l.streams {
		if st.filter.Wants(c) {
			st.push(c)
		}
	}
}

// appendChangeFrame appends a change notification for one stream, tagged with its subscription
// id. Wants admits only the four change methods, so the method needs no escaping.
func appendChangeFrame(b []byte, c core.Change, idJSON []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"`...)
	b = append(b, c.Method...)
	b = append(b, `","params":{`...)
	if c.Method == core.ResourceUpdated {
		uri, _ := json.Marshal(c.URI)
		b = append(b, `"uri":`...)
		b = append(b, uri...)
		b = append(b, ',')
	}
	b = append(b, `"_meta":{"`+core.MetaSubscriptionID+`":`...)
	b = append(b, idJSON...)
	return append(b, "}}}"...)
}

var (
	errDuplicate = errors.New("duplicate listen id")
	errClosing   = errors.New("closing")
)

// register adds a stream; the first stream with a key (client and id) keeps it, a newcomer is
// refused.
func (l *Listeners) register(st *listenStream) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.closing:
		return errClosing
	default:
	}
	if _, dup := l.byID[st.key]; dup {
		return errDuplicate
	}
	l.byID[st.key] = st
	st.index = len(l.streams)
	l.streams = append(l.streams, st)
	l.active.Add(1)
	return nil
}

func (l *Listeners) unregister(st *listenStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID[st.key] != st {
		return
	}
	delete(l.byID, st.key)
	last := len(l.streams) - 1
	moved := l.streams[last]
	l.streams[st.index] = moved
	moved.index = st.index
	l.streams[last] = nil
	l.streams = l.streams[:last]
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
	if _, err := core.ParseEnvelope(msg); err != nil {
		var e *core.Error
		if !errors.As(err, &e) {
			e = core.InternalError("Internal error handling subscriptions/listen request")
		}
		writeModern(w, r, &core.Response{ID: msg.ID, Error: e})
		return
	}
	var p struct {
		Notifications jsontext.Value `json:"notifications"`
	}
	var filter core.SubscriptionFilter
	if json.Unmarshal(msg.Params, &p) != nil || p.Notifications.Kind() != '{' || json.Unmarshal(p.Notifications, &filter) != nil {
		writeModern(w, r, &core.Response{ID: msg.ID, Error: core.NewError(core.CodeInvalidParams,
			"Invalid params: subscriptions/listen requires a `notifications` filter object")})
		return
	}
	// Reserve a slot atomically: concurrent listens never overshoot the cap.
	if l.count.Add(1) > l.max {
		l.count.Add(-1)
		refuse(w, r, http.StatusServiceUnavailable, msg.ID, core.CodeInternalError,
			"Service unavailable: maximum concurrent subscriptions/listen streams ("+strconv.FormatInt(l.max, 10)+") reached")
		return
	}
	idJSON, _ := msg.ID.MarshalJSON()
	st := &listenStream{id: msg.ID, idJSON: idJSON, filter: l.server.Honor(filter), wake: make(chan struct{}, 1),
		key: listenKey{id: msg.ID.Key()}, rc: http.NewResponseController(w)}
	st.key.principal, _ = core.PrincipalFrom(r.Context())
	switch l.register(st) {
	case errDuplicate:
		l.count.Add(-1)
		refuse(w, r, http.StatusConflict, msg.ID, core.CodeInvalidRequest, "Conflict: a subscriptions/listen stream with this id is already open")
		return
	case errClosing:
		l.count.Add(-1)
		refuse(w, r, http.StatusServiceUnavailable, msg.ID, core.CodeInternalError, msgShuttingDown)
		return
	}
	// Runs last, after the final frames: once Close returns, Len counts no finished stream.
	defer func() {
		l.unregister(st)
		l.count.Add(-1)
		l.active.Done()
	}()

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
	filterJSON, _ := json.Marshal(st.filter)
	buf := make([]byte, 0, 256)
	buf = append(buf, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":`...)
	buf = append(buf, filterJSON...)
	buf = append(buf, `,"_meta":{"`+core.MetaSubscriptionID+`":`...)
	buf = append(buf, idJSON...)
	buf = append(buf, "}}}"...)
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
		case <-st.wake:
			changes, behind := st.take(spare)
			if behind {
				tail.abort = true
				return // fell a whole queue behind: the client must reconnect and list again
			}
			for i, c := range changes {
				if l.closed() {
					l.finish(sse, st, tail)
					return
				}
				buf = appendChangeFrame(buf[:0], c, idJSON)
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
		case <-l.closing:
			l.finish(sse, st, tail)
			return
		case <-r.Context().Done():
			return // the client closed the stream
		}
	}
}

// closed reports whether Close was called. The stream's handler asks before each ordinary write,
// so once Close was called it writes nothing but the final frames, which are bounded.
func (l *Listeners) closed() bool {
	select {
	case <-l.closing:
		return true
	default:
		return false
	}
}

// bound puts a CloseTimeout deadline on the next write of a stream once Close was called and
// WriteTimeout is off. The writer then sets no deadline of its own, and a successful write
// clears this one: it is needed before each write.
func (l *Listeners) bound(st *listenStream) {
	if l.closeWait > 0 && l.closed() {
		_ = st.rc.SetWriteDeadline(time.Now().Add(l.closeWait))
	}
}

// finish ends a stream gracefully: notifications/cancelled for the listen request, then the
// complete result as the very last frame. When WriteTimeout is off, each of these writes gets
// CloseTimeout at most, and so does what net/http writes after the handler returns.
func (l *Listeners) finish(sse *middleware.SSEWriter, st *listenStream, tail *streamTail) {
	if l.closeWait > 0 {
		tail.timeout = l.closeWait
	}
	b := make([]byte, 0, 256+len(l.info))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	b = append(b, st.idJSON...)
	b = append(b, `,"reason":"The server is shutting down"}}`...)
	l.bound(st)
	if sse.WriteMessage(b) != nil {
		return
	}
	b = append(b[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, st.idJSON...)
	b = append(b, `,"result":{"resultType":"complete","_meta":{"`+core.MetaSubscriptionID+`":`...)
	b = append(b, st.idJSON...)
	if len(l.info) > 0 {
		b = append(b, `,"`+core.MetaServerInfo+`":`...)
		b = append(b, l.info...)
	}
	b = append(b, "}}}"...)
	l.bound(st)
	_ = sse.WriteFinal(b)
}
