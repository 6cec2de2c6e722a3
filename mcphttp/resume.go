package mcphttp

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// Defaults of ResumabilityOptions.
const (
	DefaultRetryInterval     = time.Second
	DefaultMaxSessionStreams = 64
)

// ResumabilityOptions turn on resumable SSE streams for the legacy lifecycle (2024-11-05 ..
// 2025-11-25), as the 2025-11-25 Streamable HTTP transport describes them. The zero value keeps
// them off: the wire is then exactly what it is without this feature.
//
// When on, the SSE stream that answers a request POST starts with a priming event (an id, an
// empty data line and a retry field), and every message on it carries an event id that names
// the stream and the message's place in it. The messages are also kept in a session.EventStore until
// the response has been written to the client. A client that lost the connection (or whose
// handler closed it on purpose with core.Call.CloseStream, the polling pattern) sends a GET with
// the session id and Last-Event-ID, and gets the stream's messages after that id, then the rest
// live until the response, after which the stream ends. A closed connection no longer cancels
// the request: only notifications/cancelled, the end of the session and the end of the
// endpoint do.
//
// A GET whose Last-Event-ID does not name a stream of its own session that the endpoint still
// keeps (an id of another session, never issued, malformed, or of a stream already answered or
// forgotten) replays nothing: the header is ignored, and the GET is an ordinary request for the
// session's standalone stream (200, or 409 while that stream is open). The standalone GET stream
// itself is not resumable: its messages carry no ids.
//
// Resumability needs sessions and SSE: it does nothing in stateless or JSON-response mode, and
// for 2026-07-28 requests.
type ResumabilityOptions struct {
	// Enabled turns resumable request streams on.
	Enabled bool
	// RetryInterval is the reconnection delay the server asks clients for (the SSE retry field),
	// rounded down to milliseconds. Zero means DefaultRetryInterval (1 s); negative is invalid.
	RetryInterval time.Duration
	// Store keeps the events. Nil means a session.MemoryEventStore bounded by MaxEvents and MaxBytes.
	Store session.EventStore
	// MaxEvents and MaxBytes bound each stream of the default store (see
	// session.MemoryEventStoreOptions): zero means 256 events and 1 MiB; negative is invalid.
	MaxEvents int
	MaxBytes  int
	// MaxStreams bounds the resumable streams one session keeps at a time (requests in flight,
	// and answered requests whose response did not reach the client), and with them the
	// resumable calls running for it. Opening one more forgets the oldest stream that no
	// connection is attached to: one whose response waits for a client to resume, or whose call
	// is still running while its client is away, in which case the call is cancelled (nobody
	// could ever get its answer). When every kept stream is a running call with a connection
	// attached, the new request is not made resumable: it is served on a plain SSE stream (no
	// priming event, no event ids) whose call ends with its connection, as without
	// resumability. Zero means DefaultMaxSessionStreams (64); negative is invalid.
	//
	// A call whose client went away and never resumes runs until it ends by itself, the stream
	// is forgotten this way, or the session ends.
	MaxStreams int
	// MaxCallsPerCaller bounds the resumable calls one caller (see CallerKey) runs at once,
	// across all its sessions, so that one client cannot hold a resumable call in every slot of
	// every session it opens. Past it, a request is served on a plain SSE stream (its call ends
	// with its connection), as when its session's streams are busy. Zero means
	// DefaultMaxResumableCallsPerCaller (256); negative removes the cap. The count is kept by
	// this process.
	MaxCallsPerCaller int
}

// DefaultMaxResumableCallsPerCaller is the most resumable calls one caller runs at once when
// ResumabilityOptions.MaxCallsPerCaller is zero.
const DefaultMaxResumableCallsPerCaller = 256

// resumer is the endpoint's resumability configuration once defaults are applied.
type resumer struct {
	store      session.EventStore
	shared     session.SharedEventStore   // store, when it is shared with other replicas
	followed   session.FollowedEventStore // store, when it also knows streams' owners and wakes their followers
	retry      time.Duration
	maxStreams int
	callers    *callerCaps // resumable calls running per caller (MaxCallsPerCaller)
}

func newResumer(o ResumabilityOptions) *resumer {
	if !o.Enabled {
		return nil
	}
	for name, v := range map[string]int64{"RetryInterval": int64(o.RetryInterval), "MaxStreams": int64(o.MaxStreams),
		"MaxEvents": int64(o.MaxEvents), "MaxBytes": int64(o.MaxBytes)} {
		if v < 0 {
			panic("mcphttp: ResumabilityOptions." + name + " must be >= 0")
		}
	}
	r := &resumer{store: o.Store, retry: o.RetryInterval, maxStreams: o.MaxStreams,
		callers: newCallerCaps(o.MaxCallsPerCaller, DefaultMaxResumableCallsPerCaller)}
	if r.store == nil {
		r.store = session.NewMemoryEventStore(session.MemoryEventStoreOptions{MaxEvents: o.MaxEvents, MaxBytes: o.MaxBytes})
	}
	r.shared, _ = r.store.(session.SharedEventStore)
	r.followed, _ = r.store.(session.FollowedEventStore)
	if r.retry == 0 {
		r.retry = DefaultRetryInterval
	}
	if r.maxStreams == 0 {
		r.maxStreams = DefaultMaxSessionStreams
	}
	return r
}

// eventID is the SSE id of event seq of a stream: "<stream>-<seq>". The priming event is seq 0.
func eventID(stream, seq uint64) string {
	b := strconv.AppendUint(make([]byte, 0, 24), stream, 10)
	b = append(b, '-')
	return string(strconv.AppendUint(b, seq, 10))
}

// parseEventID reverses eventID.
func parseEventID(id string) (stream, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return stream, seq, err1 == nil && err2 == nil
}

// errStreamForgotten is what a stream the endpoint no longer keeps answers once no connection
// is attached to it.
var errStreamForgotten = errors.New("mcphttp: the request's stream was forgotten (too many streams in its session)")

// Why openStream opened nothing.
var (
	errSessionEnded = errors.New("mcphttp: the session ended")
	errStreamsBusy  = errors.New("mcphttp: every resumable stream of the session is a running call with a connection attached")
)

// The resumable streams of a session live in its streams record (the live session's st).

// openStream registers a new resumable stream of the session, with post (the request's POST
// connection) attached from the outset and cancel the function that cancels its call. When the
// session is at its cap it forgets the oldest stream no connection is attached to (cancelling
// its call if that is still running); when there is none it opens nothing and returns
// errStreamsBusy. It returns errSessionEnded once the session has ended. A followed store
// learns that this process runs the stream, which answers request.
func (st *streams) openStream(ctx context.Context, res *resumer, sessionID string, request jsonrpc.ID, post *middleware.SSEWriter, cancel context.CancelFunc) (*resumable, error) {
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return nil, errSessionEnded
	}
	if st.live == nil {
		st.live = map[uint64]*resumable{}
	}
	var evicted *resumable
	if len(st.live) >= res.maxStreams {
		for _, rs := range st.live {
			if (evicted == nil || rs.id < evicted.id) && rs.unattended() {
				evicted = rs
			}
		}
		if evicted == nil {
			st.mu.Unlock()
			return nil, errStreamsBusy
		}
		delete(st.live, evicted.id)
	}
	if st.next == 0 && st.shared {
		// Random, and far from wrapping: ids of streams opened on other replicas for the same
		// session are as unlikely to meet as two random 62-bit numbers.
		st.next = rand.Uint64() >> 2
	}
	st.next++
	rs := &resumable{res: res, st: st, session: sessionID, id: st.next, key: strconv.FormatUint(st.next, 10),
		cancel: cancel, ctx: ctx, post: post, postGone: make(chan struct{})}
	st.live[rs.id] = rs
	st.mu.Unlock()
	if evicted != nil {
		evicted.forget()
	}
	if res.followed != nil {
		res.followed.Own(sessionID, rs.key, request)
	}
	return rs, nil
}

// lookup returns the live stream a Last-Event-ID names, and the seq to replay after.
func (st *streams) lookup(lastEventID string) (*resumable, uint64) {
	stream, seq, ok := parseEventID(lastEventID)
	if !ok {
		return nil, 0
	}
	st.mu.Lock()
	rs := st.live[stream]
	st.mu.Unlock()
	if rs == nil {
		return nil, 0
	}
	rs.mu.Lock()
	issued := seq <= rs.seq
	rs.mu.Unlock()
	if !issued {
		return nil, 0
	}
	return rs, seq
}

// remove unregisters rs (when it is still registered) and reports whether it was.
func (st *streams) remove(rs *resumable) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.live[rs.id] != rs {
		return false
	}
	delete(st.live, rs.id)
	return true
}

// endSession runs when the session ends: no stream is opened or stored into from then on, and
// the store forgets the session's events.
func (st *streams) endSession(res *resumer, sessionID string) {
	st.mu.Lock()
	st.ended = true
	st.live = nil
	st.mu.Unlock()
	// Appends hold the read side: once the write side is ours, none is under way and none follows.
	st.storeMu.Lock()
	st.storeEnded = true
	st.storeMu.Unlock()
	res.store.DropSession(context.Background(), sessionID)
}

// appendEvent stores an event unless the session has ended.
func (st *streams) appendEvent(ctx context.Context, res *resumer, sessionID, streamID string, ev session.StoredEvent) error {
	st.storeMu.RLock()
	defer st.storeMu.RUnlock()
	if st.storeEnded {
		return core.ErrSessionClosed
	}
	return res.store.Append(ctx, sessionID, streamID, ev)
}

// resumable is one resumable request stream: the messages of one request, numbered, kept in the
// store, and written to whichever connection is attached to the stream (the POST that opened it,
// or the latest GET that resumed it), at most one at a time. Its lock belongs to this stream
// alone; writes to the POST connection happen under it, so a client sees the events in order.
type resumable struct {
	res     *resumer
	st      *streams
	session string
	id      uint64
	key     string             // id in decimal: the stream id given to the store
	cancel  context.CancelFunc // cancels the call
	// ctx is the context of the store calls made after the request's handler returned (the
	// response, forgetting the stream): the POST's values without its cancellation.
	ctx context.Context

	mu        sync.Mutex
	seq       uint64                // the last seq issued (0: only the priming event)
	post      *middleware.SSEWriter // the POST connection while attached
	postGone  chan struct{}         // closed when the POST connection is detached
	sub       *resumeQueue          // the resuming GET connection while attached
	marked    bool                  // event 0 is stored (markLocked)
	finished  bool                  // the response (or nothing, for a cancelled request) is in
	answered  bool                  // finished with a response, the stream's last stored event
	forgotten bool                  // no longer kept: the store has nothing of it
}

// resumeItem is one event on its way to a resuming GET connection.
type resumeItem struct {
	seq   uint64
	data  []byte
	final bool // the stream ends after it: the response, or (data nil) the end of a cancelled request
}

// resumeQueue carries events to a resuming GET handler, which writes them. It never blocks the
// sender: a connection that falls StreamQueueSize events behind is detached, and its client
// resumes again from what it last received.
type resumeQueue struct {
	ch     chan resumeItem
	gone   chan struct{} // closed when the connection is detached (fell behind, replaced, closed)
	behind bool          // set before gone is closed when the connection fell behind
}

func newResumeQueue() *resumeQueue {
	return &resumeQueue{ch: make(chan resumeItem, StreamQueueSize), gone: make(chan struct{})}
}

// unattended reports whether no connection is attached to the stream, or its response is in:
// forgetting it then cuts off no client that is waiting on it.
func (rs *resumable) unattended() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.finished || (rs.post == nil && rs.sub == nil)
}

// prime sends the priming event (retry field, the id of seq 0, empty data) on the POST
// connection the stream was opened with. It returns the channel closed when that connection is
// detached. With a followed store, event 0 is stored first (with this process as the stream's
// owner), so that a client resuming the stream on another replica finds it, and learns it if
// this process dies before answering.
func (rs *resumable) prime() <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	gone := rs.postGone
	if rs.res.followed != nil {
		rs.markLocked()
	}
	if rs.post == nil {
		return gone // already detached
	}
	if err := rs.post.WriteSSE(middleware.SSEEvent{ID: eventID(rs.id, 0), Retry: rs.res.retry}); err != nil {
		rs.detachPostLocked()
		rs.abandonLocked()
	}
	return gone
}

// detachPost detaches sse when it is still the stream's connection.
func (rs *resumable) detachPost(sse *middleware.SSEWriter) {
	rs.mu.Lock()
	if rs.post == sse {
		rs.detachPostLocked()
		rs.abandonLocked()
	}
	rs.mu.Unlock()
}

// abandonLocked cancels the call of a stream that is no longer kept once no connection is
// attached to it: its messages and its response could reach nobody.
func (rs *resumable) abandonLocked() {
	if rs.forgotten && !rs.finished && rs.post == nil && rs.sub == nil && rs.cancel != nil {
		rs.cancel()
	}
}

func (rs *resumable) detachPostLocked() {
	if rs.post != nil {
		rs.markLocked()
		rs.post = nil
		close(rs.postGone)
	}
}

// markLocked stores an empty event 0 for a stream that stored nothing yet, when the store is
// shared and the call still runs: it tells the other replicas the stream exists, so that a GET
// resuming it there follows it (see session.SharedEventStore) instead of being an ordinary GET. It costs
// nothing on a stream whose connection stays attached, except with a FollowedEventStore, where
// prime stores it at once (the record of the stream's owner goes with it).
func (rs *resumable) markLocked() {
	if rs.res.shared == nil || rs.seq != 0 || rs.marked || rs.finished || rs.forgotten {
		return
	}
	rs.marked = rs.st.appendEvent(rs.ctx, rs.res, rs.session, rs.key, session.StoredEvent{Seq: 0}) == nil
}

func (rs *resumable) detachSubLocked() {
	if rs.sub != nil {
		close(rs.sub.gone)
		rs.sub = nil
	}
}

// Send implements transport.Sender: the message gets the next id, is stored, and goes to the attached
// connection if there is one. A failed write only detaches the connection: the message waits in
// the store for the client to resume.
func (rs *resumable) Send(ctx context.Context, msg []byte) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.finished {
		return middleware.ErrSSEClosed
	}
	if rs.forgotten {
		if rs.post == nil {
			return errStreamForgotten
		}
		rs.seq++
		return rs.writePostLocked(rs.seq, msg, false)
	}
	rs.seq++
	if err := rs.st.appendEvent(ctx, rs.res, rs.session, rs.key, session.StoredEvent{Seq: rs.seq, Data: msg}); err != nil {
		rs.seq--
		return err
	}
	rs.deliverLocked(rs.seq, msg, false)
	return nil
}

// writePostLocked writes one event to the POST connection, detaching it when the write fails.
// The response (final) closes the connection's writer with it, so nothing can follow it.
func (rs *resumable) writePostLocked(seq uint64, msg []byte, final bool) error {
	ev := middleware.SSEEvent{ID: eventID(rs.id, seq), Data: msg}
	var err error
	if final {
		err = rs.post.WriteFinalSSE(ev)
	} else {
		err = rs.post.WriteSSE(ev)
	}
	if err != nil {
		rs.detachPostLocked()
		rs.abandonLocked()
	}
	return err
}

// deliverLocked hands a stored event to the attached connection. It reports whether the event
// was written to the client (only a POST connection is written here).
func (rs *resumable) deliverLocked(seq uint64, msg []byte, final bool) bool {
	switch {
	case rs.post != nil:
		return rs.writePostLocked(seq, msg, final) == nil
	case rs.sub != nil:
		select {
		case rs.sub.ch <- resumeItem{seq: seq, data: msg, final: final}:
		default:
			rs.sub.behind = true // it resumes from the store
			rs.detachSubLocked()
			rs.abandonLocked()
		}
	}
	return false
}

// CloseStream serves Call.CloseStream (core looks for it on the request's Sender): the
// connection attached to the stream (if any) is detached, and its handler ends the response. The stream goes on in the store; a stream that is
// no longer kept has no store to go on in, so its call is cancelled.
func (rs *resumable) CloseStream() error {
	rs.mu.Lock()
	rs.detachPostLocked()
	rs.detachSubLocked()
	rs.abandonLocked()
	rs.mu.Unlock()
	return nil
}

// finish records the request's response (nil: the client cancelled it, nothing is sent) and
// reports whether the stream is done: its response was written to the POST connection, or a
// cancelled request's stream was still attached to the connection that saw all of it. A
// cancelled request whose client is away keeps its stream: what was stored (the server's
// notifications/cancelled for its nested requests, say) is replayed to a resuming GET, which
// then ends.
func (rs *resumable) finish(resp *core.Response) (written bool) {
	rs.mu.Lock()
	rs.finished = true
	rs.answered = resp != nil
	switch {
	case resp == nil && (rs.post != nil || rs.forgotten):
		written = true // the POST connection saw everything; or nothing is kept to replay
	case resp == nil:
		if rs.sub != nil {
			select {
			case rs.sub.ch <- resumeItem{seq: rs.seq, final: true}:
			default:
				rs.sub.behind = true // it resumes from the store, and then ends
				rs.detachSubLocked()
			}
		}
	case rs.forgotten:
		if rs.post != nil {
			rs.seq++
			written = rs.writePostLocked(rs.seq, transport.Core.EncodeResponseMessage(resp), true) == nil
		}
	default:
		data := transport.Core.EncodeResponseMessage(resp)
		rs.seq++
		if rs.st.appendEvent(rs.ctx, rs.res, rs.session, rs.key, session.StoredEvent{Seq: rs.seq, Data: data}) != nil {
			written = true // the session ended: nobody can resume
			rs.detachSubLocked()
			break
		}
		written = rs.deliverLocked(rs.seq, data, true)
	}
	rs.mu.Unlock()
	if written {
		rs.drop()
	}
	return written
}

// drop forgets the stream once its response reached the client (or is owed to nobody).
func (rs *resumable) drop() {
	if rs.st.remove(rs) {
		rs.forget()
	}
}

// forget marks the stream as no longer kept and tells the store. The caller has unregistered it.
// A call still running with no connection attached is cancelled: nobody could get its answer.
func (rs *resumable) forget() {
	rs.mu.Lock()
	rs.forgotten = true
	if rs.post == nil {
		rs.detachSubLocked() // a resuming connection cannot get what the store no longer has
	}
	rs.abandonLocked()
	rs.mu.Unlock()
	rs.st.storeMu.RLock()
	if !rs.st.storeEnded {
		rs.res.store.DropStream(rs.ctx, rs.session, rs.key)
	}
	rs.st.storeMu.RUnlock()
}

// attachGet makes a resuming GET the stream's connection, replacing any attached one, and
// returns what it must write first: the stored events after seq, and whether the stream already
// holds its response (the GET then ends after the backlog). Backlog and queue are taken under the
// stream's lock, so every event reaches the GET exactly once.
//
// answered reports that the last event of a finished stream's backlog is its response; a
// finished stream that is not answered is a cancelled request, whose GET ends after the backlog
// without a response.
func (rs *resumable) attachGet(ctx context.Context, after uint64) (q *resumeQueue, backlog []session.StoredEvent, finished, answered bool, err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.forgotten {
		return nil, nil, false, false, errStreamForgotten
	}
	backlog, err = rs.res.store.After(ctx, rs.session, rs.key, after)
	if err != nil {
		return nil, nil, false, false, err
	}
	rs.detachPostLocked()
	rs.detachSubLocked()
	if rs.finished {
		return nil, backlog, true, rs.answered, nil
	}
	rs.sub = newResumeQueue()
	return rs.sub, backlog, false, false, nil
}

// detachGet detaches q when it is still the stream's connection.
func (rs *resumable) detachGet(q *resumeQueue) {
	rs.mu.Lock()
	if rs.sub == q {
		rs.detachSubLocked()
		rs.abandonLocked()
	}
	rs.mu.Unlock()
}
