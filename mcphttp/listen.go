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

// Defaults of ListenOptions.
const (
	DefaultMaxListenStreams = 1000
	DefaultListenKeepAlive  = 15 * time.Second
	// listenQueue is how many change notifications may wait for one slow stream; a stream that
	// falls further behind is closed (its client reconnects and lists again).
	listenQueue = 256
)

// ListenOptions configure subscriptions/listen, the long-lived stream through which 2026-07-28
// clients receive the change notifications they ask for.
type ListenOptions struct {
	// MaxStreams caps the open listen streams. Zero means DefaultMaxListenStreams (1000); past
	// the cap a new listen gets 503.
	MaxStreams int
	// KeepAlive is the interval of keepalive comments, which also find dead peers and free their
	// slot. Zero means DefaultListenKeepAlive (15 s); negative turns keepalives off.
	KeepAlive time.Duration
	// WriteTimeout bounds each write. Zero means 30 s; negative turns the bound off.
	WriteTimeout time.Duration
}

// Listeners serves subscriptions/listen and fans change notifications out to the open streams.
//
// Each stream's first frame is notifications/subscriptions/acknowledged with the honored subset of
// its filter; nothing reaches a stream before it, even when a change is published at the same
// moment, because the stream's own handler writes the acknowledgement before it starts draining
// its queue. Every delivered frame carries _meta.io.modelcontextprotocol/subscriptionId, the
// listen request's id. Publishing never waits on a client: a change is queued on each matching
// stream (a stream that falls a whole queue behind is closed) and written by that stream's handler,
// so frames of one stream stay in order and no lock shared between streams is held while writing.
//
// On Close each stream ends gracefully. The 2026-07-28 specification asks two things of a server
// tearing a subscription down: the cancellation page says it MUST send notifications/cancelled
// referencing the listen request, and the subscriptions page says it SHOULD answer the listen
// request with a complete result. The kit does both, in that order, so the result
// ({"resultType":"complete","_meta":{subscriptionId}}) is the last frame of the stream and nothing
// follows it. A client closing the stream frees its slot at once.
type Listeners struct {
	server *core.Server
	max    int64
	sse    middleware.SSEOptions

	count   atomic.Int64
	mu      sync.Mutex
	streams map[core.ID]*listenStream
	list    atomic.Pointer[[]*listenStream] // copy-on-write snapshot for publishing
	unsub   func()

	closing  chan struct{}
	closeOne sync.Once
	active   sync.WaitGroup
}

type listenStream struct {
	id     core.ID
	filter core.SubscriptionFilter
	queue  chan []byte
	behind atomic.Bool
	kick   chan struct{} // closed when the stream fell behind
}

// NewListeners returns the listen registry of s and subscribes it to the server's broadcaster.
func NewListeners(s *core.Server, opts ListenOptions) *Listeners {
	l := &Listeners{server: s, streams: map[core.ID]*listenStream{}, closing: make(chan struct{})}
	l.max = int64(opts.MaxStreams)
	if l.max <= 0 {
		l.max = DefaultMaxListenStreams
	}
	ka := opts.KeepAlive
	switch {
	case ka == 0:
		ka = DefaultListenKeepAlive
	case ka < 0:
		ka = 0
	}
	l.sse = middleware.SSEOptions{KeepAlive: ka, WriteTimeout: opts.WriteTimeout}
	empty := []*listenStream{}
	l.list.Store(&empty)
	l.unsub = s.Broadcaster().Subscribe(l.deliver)
	return l
}

// Len returns the number of open listen streams.
func (l *Listeners) Len() int { return int(l.count.Load()) }

// Close ends every stream gracefully (see the type's doc), stops receiving changes and waits
// until the streams have written their last frame (each write is bounded by WriteTimeout).
func (l *Listeners) Close() {
	l.closeOne.Do(func() {
		l.unsub()
		l.mu.Lock() // no stream registers after this: register checks closing under the lock
		close(l.closing)
		l.mu.Unlock()
	})
	l.active.Wait()
}

// deliver queues a change on every stream whose filter wants it. It never blocks.
func (l *Listeners) deliver(c core.Change) {
	for _, st := range *l.list.Load() {
		if !st.filter.Wants(c) {
			continue
		}
		frame := changeFrame(c, st.id)
		select {
		case st.queue <- frame:
		default:
			if st.behind.CompareAndSwap(false, true) {
				close(st.kick)
			}
		}
	}
}

// changeFrame encodes a change notification for one stream, tagged with its subscription id.
func changeFrame(c core.Change, id core.ID) []byte {
	idJSON, _ := id.MarshalJSON()
	b := make([]byte, 0, 160+len(c.URI))
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

// register adds a stream; the first stream with an id keeps it, a newcomer is refused.
func (l *Listeners) register(st *listenStream) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.closing:
		return errClosing
	default:
	}
	if _, dup := l.streams[st.id]; dup {
		return errDuplicate
	}
	l.streams[st.id] = st
	l.active.Add(1)
	l.snapshotLocked()
	return nil
}

func (l *Listeners) unregister(st *listenStream) {
	l.mu.Lock()
	if l.streams[st.id] == st {
		delete(l.streams, st.id)
		l.snapshotLocked()
	}
	l.mu.Unlock()
}

func (l *Listeners) snapshotLocked() {
	list := make([]*listenStream, 0, len(l.streams))
	for _, st := range l.streams {
		list = append(list, st)
	}
	l.list.Store(&list)
}

// ServeHTTP serves one subscriptions/listen POST (already decoded, mirror headers checked).
func (l *Listeners) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	msg, _ := middleware.MessageFrom(r.Context())
	if !msg.ID.IsValid() {
		refuse(w, r, http.StatusBadRequest, core.ID{}, core.CodeInvalidRequest, "Invalid Request: subscriptions/listen requires an id")
		return
	}
	if !core.ClaimsModern(msg) {
		refuse(w, r, http.StatusBadRequest, msg.ID, core.CodeInvalidRequest, "Invalid Request: modern requests require the SEP-2575 `_meta` envelope")
		return
	}
	if _, e := core.ParseEnvelope(msg); e != nil {
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
	defer l.count.Add(-1)
	st := &listenStream{id: msg.ID, filter: l.server.Honor(filter), queue: make(chan []byte, listenQueue), kick: make(chan struct{})}
	switch l.register(st) {
	case errDuplicate:
		refuse(w, r, http.StatusConflict, msg.ID, core.CodeInvalidRequest, "Conflict: a subscriptions/listen stream with this id is already open")
		return
	case errClosing:
		refuse(w, r, http.StatusServiceUnavailable, msg.ID, core.CodeInternalError, msgShuttingDown)
		return
	}
	defer l.active.Done()
	defer l.unregister(st)

	sse := middleware.NewSSEWriter(w, l.sse)
	defer sse.Close()
	if err := sse.Start(); err != nil {
		return
	}
	ack, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  "notifications/subscriptions/acknowledged",
		"params": map[string]any{
			"notifications": st.filter,
			"_meta":         map[string]any{core.MetaSubscriptionID: msg.ID},
		},
	})
	if sse.WriteMessage(ack) != nil {
		return
	}
	for {
		select {
		case frame := <-st.queue:
			if sse.WriteMessage(frame) != nil {
				return
			}
		case <-l.closing:
			l.finish(sse, st)
			return
		case <-st.kick:
			return // fell a whole queue behind: the client must reconnect and list again
		case <-sse.Done():
			return // keepalive or a write found the peer dead
		case <-r.Context().Done():
			return // the client closed the stream
		}
	}
}

// finish ends a stream gracefully: notifications/cancelled for the listen request, then the
// complete result as the very last frame.
func (l *Listeners) finish(sse *middleware.SSEWriter, st *listenStream) {
	cancelled, _ := core.EncodeNotification("notifications/cancelled", map[string]any{
		"requestId": st.id, "reason": "The server is shutting down",
	})
	_ = sse.WriteMessage(cancelled)
	idJSON, _ := st.id.MarshalJSON()
	result := []byte(`{"resultType":"complete","_meta":{"` + core.MetaSubscriptionID + `":` + string(idJSON) + `}}`)
	_ = sse.WriteMessage(core.EncodeResponse(st.id, result))
}
