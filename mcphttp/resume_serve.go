package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// resumableRequest serves a request POST on a resumable stream. The call runs on its own
// goroutine with a context the connection does not cancel, so the handler may return (the
// connection closed, by the client or on the handler's request) while the call goes on; what
// the call sends then waits in the store for a resuming GET.
func (e *Endpoint) resumableRequest(w http.ResponseWriter, r *http.Request, rec *session.Entry, st *streams, msg *core.Message) {
	caller := CallerKey(r)
	if ok, err := e.res.callers.acquire(r.Context(), caller); !ok || err != nil {
		// The caller runs as many resumable calls as it may: this one is served like a
		// request without resumability.
		e.request(w, r, rec.Core, msg, true)
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
	sse := middleware.NewSSEWriter(w, e.sse)
	rs, err := st.openStream(context.WithoutCancel(r.Context()), e.res, rec.ID, sse, cancel)
	if err != nil {
		cancel()
		release()
		if errors.Is(err, errStreamsBusy) {
			// The session runs as many resumable calls as it may, each with its client
			// attached: this one is served like a request without resumability.
			e.request(w, r, rec.Core, msg, true)
			return
		}
		middleware.RefuseSessionNotFound(w, r, msg.ID)
		return
	}
	stopBase := context.AfterFunc(e.base, cancel)
	call, err := rec.Core.Begin(ctx, msg, rs)
	if err != nil {
		stopBase()
		cancel()
		release()
		st.remove(rs)
		e.beginFailed(w, r, msg, err)
		return
	}
	tail := &streamTail{w: w, timeout: e.sse.WriteTimeout}
	defer tail.bound()
	defer sse.Close()
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
		resp = call.Run()
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
func (e *Endpoint) resume(w http.ResponseWriter, r *http.Request, rec *session.Entry, rs *resumable, after uint64) bool {
	q, backlog, finished, answered, err := rs.attachGet(r.Context(), after)
	if errors.Is(err, errStreamForgotten) {
		return false
	}
	if err != nil {
		middleware.Refuse(w, r, http.StatusInternalServerError, core.ID{}, core.CodeInternalError, "Internal error: the stream could not be resumed")
		return true
	}
	tail := &streamTail{w: w, timeout: e.sse.WriteTimeout}
	defer tail.bound()
	sse := middleware.NewSSEWriter(w, e.sse)
	defer sse.Close()
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
	tail.abort = followLive(r.Context(), rec.Core.Done(), sse, rs, q)
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
		case <-sse.Done():
			return false
		}
	}
}

// replayShared serves a GET whose Last-Event-ID names a stream of the session that this process
// does not hold, from the shared event store (see session.SharedEventStore): the retry field, the stored
// events after the id, then, every sharedPollInterval, the events stored since, until the
// request's response (after which the store forgets the stream), the stream's disappearance from
// the store, or the client leaving. It reports false, having written nothing, when the store
// does not know the stream.
func (e *Endpoint) replayShared(w http.ResponseWriter, r *http.Request, rec *session.Entry, lastEventID string) bool {
	stream, seq, ok := parseEventID(lastEventID)
	if !ok {
		return false
	}
	key := strconv.FormatUint(stream, 10)
	ctx := r.Context()
	known, err := e.res.shared.Has(ctx, rec.ID, key)
	if err != nil {
		middleware.Refuse(w, r, http.StatusServiceUnavailable, core.ID{}, core.CodeInternalError, "Service unavailable: the stream could not be resumed")
		return true
	}
	if !known {
		return false
	}
	tail := &streamTail{w: w, timeout: e.sse.WriteTimeout}
	defer tail.bound()
	sse := middleware.NewSSEWriter(w, e.sse)
	defer sse.Close()
	if sse.Start() != nil || sse.WriteRetry(e.res.retry) != nil {
		return true
	}
	tick := time.NewTicker(sharedPollInterval)
	defer tick.Stop()
	for {
		backlog, err := e.res.store.After(ctx, rec.ID, key, seq)
		if err != nil {
			return true // the client reconnects and tries again
		}
		for _, ev := range backlog {
			frame := middleware.SSEEvent{ID: eventID(stream, ev.Seq), Data: ev.Data}
			if isResponse(ev.Data) {
				if sse.WriteFinalSSE(frame) == nil {
					e.res.store.DropStream(context.WithoutCancel(ctx), rec.ID, key)
				}
				return true
			}
			if sse.WriteSSE(frame) != nil {
				return true
			}
			seq = ev.Seq
		}
		if len(backlog) == 0 {
			if still, err := e.res.shared.Has(ctx, rec.ID, key); err != nil || !still {
				return true // forgotten (answered elsewhere, or dropped): nothing more will come
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return true
		case <-rec.Core.Done():
			return true
		case <-sse.Done():
			return true
		}
	}
}

// isResponse reports whether an encoded message is a JSON-RPC response.
func isResponse(data []byte) bool {
	msg, derr := core.DecodeMessage(data)
	return derr == nil && msg.IsResponse()
}
