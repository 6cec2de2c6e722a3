package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// resumableRequest serves a request POST on a resumable stream. The call runs on its own
// goroutine with a context the connection does not cancel, so the handler may return (the
// connection closed, by the client or on the handler's request) while the call goes on; what
// the call sends then waits in the store for a resuming GET.
func (e *Endpoint) resumableRequest(w http.ResponseWriter, r *http.Request, l *live, msg *jsonrpc.Message, sse *middleware.SSEWriter) {
	rec, st := l.rec, l.st
	caller := CallerKey(r)
	if ok, err := e.res.callers.acquire(r.Context(), caller); !ok || err != nil {
		// The caller runs as many resumable calls as it may: this one is served like a
		// request without resumability.
		e.request(w, r, l.cs, msg, sse)
		return
	}
	released := false
	release := func() {
		if !released {
			released = true
			e.res.callers.release(caller)
		}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	rs, err := st.openStream(context.WithoutCancel(r.Context()), e.res, rec.ID, msg.ID, sse, cancel)
	if err != nil {
		cancel()
		release()
		if errors.Is(err, errStreamsBusy) {
			// The session runs as many resumable calls as it may, each with its client
			// attached: this one is served like a request without resumability.
			e.request(w, r, l.cs, msg, sse)
			return
		}
		middleware.RefuseSessionNotFound(w, r, msg.ID)
		return
	}
	stopBase := context.AfterFunc(e.base, cancel)
	call, err := transport.Core.Begin(l.cs, ctx, msg, rs)
	if err != nil {
		stopBase()
		cancel()
		release()
		st.remove(rs)
		e.beginFailed(w, r, msg, err)
		return
	}
	// The call may outlive the POST: its id stays claimed in a shared store until it is done.
	claim := session.ClaimFrom(r.Context()).Keep()
	e.runResumable(r, call, rs, sse, resumableEnd{cancel: cancel, stopBase: stopBase, release: release, claim: claim})
}

// resumableEnd is what a resumable call releases once it is done.
type resumableEnd struct {
	cancel   context.CancelFunc    // the call's context
	stopBase func() bool           // the endpoint's Close no longer cancels it
	release  func()                // the caller's slot
	claim    func(context.Context) // the request's session.Claim (see session.Claim.Keep)
}

// runResumable runs the call of a resumable request on its own goroutine, counted as a request
// of the endpoint until it is done (so Shutdown waits for it), while the POST's stream carries
// it; the POST returns when the call is done, or its client is gone (the call goes on, and the
// client may resume its stream).
func (e *Endpoint) runResumable(r *http.Request, call *core.Call, rs *resumable, sse *middleware.SSEWriter, end resumableEnd) {
	gone := rs.prime()
	counted := e.enter()
	if !counted {
		end.cancel()
	}
	var resp *core.Response
	done := make(chan struct{})
	go func() {
		resp = transport.Core.Run(call)
		end.release() // the only release once the call runs: nothing else calls it from here on
		rs.finish(resp)
		end.claim(context.Background()) // after the response went to the stream
		end.stopBase()
		end.cancel()
		close(done)
		if counted {
			e.leave()
		}
	}()
	select {
	case <-done:
	case <-gone:
	case <-sse.Done():
		if sse.Err() == nil {
			// Closed, not broken: finish wrote the response as the final frame, and the call
			// is as good as done.
			<-done
		}
	case <-r.Context().Done():
	}
	select {
	case <-done:
		if resp != nil {
			recordError(r, resp)
		}
	default:
	}
	rs.detachPost(sse)
}

// resume serves a GET with a Last-Event-ID naming a stream of the session: the retry field, the
// stored events after that id, then the stream live until its response.
// It reports false, having written nothing, when the stream was forgotten meanwhile: the GET is
// then served as one without Last-Event-ID.
func (e *Endpoint) resume(w http.ResponseWriter, r *http.Request, ex *middleware.Exchange, l *live, rs *resumable, after uint64) bool {
	q, backlog, finished, answered, err := rs.attachGet(r.Context(), after)
	if errors.Is(err, errStreamForgotten) {
		return false
	}
	if err != nil {
		middleware.Refuse(w, r, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.CodeInternalError, "Internal error: the stream could not be resumed")
		return true
	}
	sse := ex.SSE(w)
	if q != nil {
		defer rs.detachGet(q)
	}
	if err := sse.Start(); err != nil {
		return true
	}
	if err := sse.WriteRetry(e.res.retry); err != nil {
		return true
	}
	if writeBacklog(sse, rs.id, backlog, answered) != nil {
		return true
	}
	if finished {
		// Everything the stream holds was written, the response last (a cancelled request has
		// none: its stream simply ends here).
		rs.drop()
		return true
	}
	ctx, stop := untilExpiry(r.Context())
	defer stop()
	if followLive(ctx, l.cs.Done(), sse, rs, q) {
		sse.Abort()
	}
	return true
}

// writeBacklog writes the stored events of a resumed stream; when the stream was answered the
// last of them is its response, and nothing may follow it.
func writeBacklog(sse *middleware.SSEWriter, streamID uint64, backlog []session.StoredEvent, answered bool) error {
	for i, ev := range backlog {
		frame := middleware.SSEEvent{ID: eventID(streamID, ev.Seq), Data: ev.Data}
		var err error
		if answered && i == len(backlog)-1 {
			err = sse.WriteFinalSSE(frame)
		} else {
			err = sse.WriteSSE(frame)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// followLive writes a resumed stream's live events from q until its response, the request's or
// the session's end, or a write failure. It reports whether the stream was detached while
// behind (its connection must then be aborted rather than ended cleanly).
func followLive(ctx context.Context, sessionDone <-chan struct{}, sse *middleware.SSEWriter, rs *resumable, q *resumeQueue) (abort bool) {
	broken := sse.Done()
	for {
		select {
		case <-q.gone:
			// Detached (the handler closed the stream again, another GET took over, or this one
			// fell behind): whatever is still queued is in the store too.
			return q.behind
		default:
		}
		select {
		case it := <-q.ch:
			if it.final && it.data == nil {
				rs.drop() // a cancelled request: everything was written, no response follows
				return false
			}
			frame := middleware.SSEEvent{ID: eventID(rs.id, it.seq), Data: it.data}
			if it.final {
				if sse.WriteFinalSSE(frame) == nil {
					rs.drop()
				}
				return false
			}
			if sse.WriteSSE(frame) != nil {
				return false
			}
		case <-q.gone:
			return q.behind
		case <-ctx.Done():
			return false
		case <-sessionDone:
			return false
		case <-broken:
			return false
		}
	}
}

// replayShared serves a GET whose Last-Event-ID names a stream of the session that this process
// does not hold, from the shared event store (see session.SharedEventStore): the retry field and
// the stored events after the id. With a session.FollowedEventStore it then follows the stream,
// woken by the store as events are stored (no polling), until the request's response (after which
// the store forgets the stream), the stream's disappearance from the store, or the client leaving;
// when the replica running the stream is gone, the GET ends with a JSON-RPC error for the
// stream's request, so that the client sends it again. With a plain shared store the GET ends
// after the stored events and the client comes back after the retry interval. It reports false,
// having written nothing, when the store does not know the stream.
func (e *Endpoint) replayShared(w http.ResponseWriter, r *http.Request, ex *middleware.Exchange, l *live, lastEventID string) bool {
	rec := l.rec
	stream, seq, ok := parseEventID(lastEventID)
	if !ok {
		return false
	}
	key := strconv.FormatUint(stream, 10)
	ctx := r.Context()
	known, err := e.res.shared.Has(ctx, rec.ID, key)
	if err != nil {
		middleware.Refuse(w, r, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.CodeInternalError, "Service unavailable: the stream could not be resumed")
		return true
	}
	if !known {
		return false
	}
	sse := ex.SSE(w)
	if sse.Start() != nil || sse.WriteRetry(e.res.retry) != nil {
		return true
	}
	f := &sharedFollow{e: e, sse: sse, rec: rec, cs: l.cs, stream: stream, key: key, seq: seq}
	ctx, stop := untilExpiry(ctx)
	defer stop()
	if e.res.followed == nil {
		f.replay(ctx)
		return true
	}
	f.follow(ctx)
	return true
}

// sharedFollow is a GET following a stream that another replica runs (or ran).
type sharedFollow struct {
	e      *Endpoint
	sse    *middleware.SSEWriter
	rec    *session.Entry
	cs     *core.Session
	stream uint64
	key    string
	seq    uint64 // the last event written
	wrote  bool   // the last replay wrote events
}

// replay writes the stored events after the last one written. It reports whether the GET is
// over: the response was written (the store then forgets the stream), or the store or a write
// failed.
func (f *sharedFollow) replay(ctx context.Context) (over bool) {
	backlog, err := f.e.res.store.After(ctx, f.rec.ID, f.key, f.seq)
	if err != nil {
		return true // the client reconnects and tries again
	}
	for _, ev := range backlog {
		frame := middleware.SSEEvent{ID: eventID(f.stream, ev.Seq), Data: ev.Data}
		if isResponse(ev.Data) {
			if f.sse.WriteFinalSSE(frame) == nil {
				f.e.res.store.DropStream(context.WithoutCancel(ctx), f.rec.ID, f.key)
			}
			return true
		}
		if f.sse.WriteSSE(frame) != nil {
			return true
		}
		f.seq = ev.Seq
	}
	f.wrote = len(backlog) > 0
	return false
}

// follow writes the stream's events as the store wakes it, until the GET is over. The owner of
// the stream is checked first and after each lapse of a replica.
func (f *sharedFollow) follow(ctx context.Context) {
	wake := make(chan struct{}, 1)
	var lapsed atomic.Bool
	stop, err := f.e.res.followed.Follow(ctx, f.rec.ID, f.key, func(l bool) {
		if l {
			lapsed.Store(true)
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		f.replay(ctx) // what is stored; the client comes back for the rest
		return
	}
	defer stop()
	checkOwner := true
	broken, ended := f.sse.Done(), f.cs.Done()
	for {
		if f.replay(ctx) {
			return
		}
		if checkOwner && f.ownerGone(ctx) {
			return
		}
		if !f.wrote {
			if still, err := f.e.res.shared.Has(ctx, f.rec.ID, f.key); err != nil || !still {
				return // forgotten (answered elsewhere, or dropped): nothing more will come
			}
		}
		select {
		case <-wake:
			checkOwner = lapsed.Swap(false)
		case <-ctx.Done():
			return
		case <-ended:
			return
		case <-broken:
			return
		}
	}
}

// ownerGone reports whether the GET is over because of the stream's owner: the replica running
// it is gone (the stream then ends with errOwnerGone for its request), the store has no owner
// for it, or the owner could not be read (the client comes back).
func (f *sharedFollow) ownerGone(ctx context.Context) bool {
	id, alive, known, err := f.e.res.followed.Owner(ctx, f.rec.ID, f.key)
	switch {
	case err != nil || !known:
		return true
	case alive:
		return false
	}
	resp := &core.Response{ID: id, Error: errOwnerGone()}
	_ = f.sse.WriteFinalSSE(middleware.SSEEvent{ID: eventID(f.stream, f.seq+1), Data: transport.Core.EncodeResponseMessage(resp)})
	return true
}

// errOwnerGone answers a request whose stream a replica that died was running.
func errOwnerGone() *jsonrpc.Error {
	return jsonrpc.InternalError("The server replica handling the request stopped before answering it; send the request again")
}

// isResponse reports whether an encoded message is a JSON-RPC response.
func isResponse(data []byte) bool {
	msg, derr := transport.Core.DecodeMessage(data)
	return derr == nil && msg.IsResponse()
}
