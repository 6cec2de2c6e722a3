package redisstore

// What the shared session store writes through and receives on the router: state changes
// announced to the other replicas, client messages and stream messages forwarded to the replica
// waiting for them, and deletions.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/session"
	"github.com/redis/go-redis/v9"
)

// install connects the protocol session to the store: changes written through, stray answers
// and cancels forwarded, messages for a standalone stream held elsewhere routed there.
func (s *Sessions) install(l session.Live) {
	id := l.Entry().ID
	transport.Core.SetHooks(l.Session(), transport.SessionHooks{
		Persist: func(ctx context.Context, st core.SessionState) error { return s.persist(ctx, id, st) },
		Forward: func(ctx context.Context, msg *jsonrpc.Message) { s.forward(ctx, id, msg) },
		Remote:  remoteOut{s: s, id: id},
	})
}

func (s *Sessions) persist(ctx context.Context, id string, st core.SessionState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	header := kindState + "\n" + s.r.id + "\n" + id + "\n"
	rev, err := persistScript.Run(ctx, s.r.rdb, []string{s.key(id)}, b, s.r.sessionChannel(id), header, s.r.publishCommand()).Int64()
	if errors.Is(err, redis.Nil) {
		return session.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("redisstore: saving a session: %w", err)
	}
	if s.r.cluster { // announced here: the channel is not in the record's slot
		payload := append(strconv.AppendInt(nil, rev, 10), '\n')
		if _, err := s.r.ToSession(ctx, id, kindState, append(payload, b...)); err != nil {
			s.r.log.Warn().Err(err).Msg("redisstore: announcing a session's new state")
		}
	}
	s.mu.Lock()
	if h := s.local[id]; h != nil && rev > h.rev {
		h.rev = rev
	}
	s.mu.Unlock()
	return nil
}

// forward sends a message nobody here waits for to the other replicas holding the session.
func (s *Sessions) forward(ctx context.Context, id string, msg *jsonrpc.Message) {
	data := transport.Core.EncodeMessage(msg)
	if data == nil {
		return
	}
	n, err := s.r.ToSession(context.WithoutCancel(ctx), id, kindMessage, data)
	switch {
	case err != nil:
		s.r.log.Warn().Err(err).Msg("redisstore: a client message for another replica was dropped")
	case n <= 1: // this replica only
		s.r.log.Info().Str("method", msg.Method).Msg("redisstore: no replica waits for this client message; dropped")
	}
}

// remoteOut is the session-level path of a session whose standalone stream another replica
// holds.
type remoteOut struct {
	s  *Sessions
	id string
}

// Send implements transport.Sender: ErrNoPath when no other replica holds the session.
func (o remoteOut) Send(ctx context.Context, msg []byte) error {
	n, err := o.s.r.ToSession(ctx, o.id, kindOut, msg)
	if err != nil {
		return err
	}
	if n <= 1 {
		return core.ErrNoPath
	}
	return nil
}

func (s *Sessions) onMessage(e Envelope) {
	if e.From == s.r.id {
		return
	}
	h := s.held(e.Session)
	if h == nil {
		return
	}
	msg, derr := transport.Core.DecodeMessage(e.Payload)
	if derr != nil {
		return
	}
	transport.Core.Deliver(h.s.Session(), msg)
}

func (s *Sessions) onOut(e Envelope) {
	if e.From == s.r.id {
		return
	}
	if h := s.held(e.Session); h != nil {
		// The stream's queue never blocks; a replica without the stream drops it.
		_ = transport.Core.SendLocal(h.s.Session(), context.Background(), e.Payload)
	}
}

func (s *Sessions) onState(e Envelope) {
	if e.From == s.r.id {
		return
	}
	revText, state, ok := cut(e.Payload)
	if !ok {
		return
	}
	rev, err := strconv.ParseInt(string(revText), 10, 64)
	if err != nil {
		return
	}
	var st core.SessionState
	if json.Unmarshal(state, &st) != nil {
		return
	}
	s.mu.Lock()
	h := s.local[e.Session]
	if h == nil || rev <= h.rev {
		s.mu.Unlock()
		return
	}
	h.rev = rev
	s.mu.Unlock()
	transport.Core.Restore(h.s.Session(), st)
}

// onEnd lets go of a session deleted on another replica. Ending it runs its close hooks, which
// may call Redis (the event store forgets its events): never on the router's receive goroutine.
func (s *Sessions) onEnd(e Envelope) {
	if h := s.release(e.Session); h != nil {
		go s.end(e.Session, h)
	}
}

func cut(b []byte) (before, after []byte, ok bool) {
	for i, c := range b {
		if c == '\n' {
			return b[:i], b[i+1:], true
		}
	}
	return nil, nil, false
}
