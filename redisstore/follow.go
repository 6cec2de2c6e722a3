package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// Router kinds of the event store: an event of a stream was stored ("mcp.event", on the
// stream's channel), and a replica lapsed ("mcp.lapse", on the lapse channel every event store
// listens on, payload the replica's id).
const (
	kindEvent = "mcp.event"
	kindLapse = "mcp.lapse"
)

// lapseChannel is the session-channel name of the lapse broadcast.
const lapseChannel = "events-lapse"

// streamChannel is the session-channel name of a stream's wake-ups.
func streamChannel(sessionID, streamID string) string { return "ev:" + sessionID + ":" + streamID }

// startFollowing registers the store's kinds and lapse handler and joins the lapse channel.
func (e *EventStore) startFollowing() {
	e.r.Handle(kindEvent, e.receive)
	e.r.Handle(kindLapse, e.receiveLapse)
	e.r.OnLapse(e.lapsed)
	if err := e.r.Join(context.Background(), lapseChannel); err != nil {
		e.r.log.Warn().Err(err).Msg("redisstore: joining the event store's lapse channel (retried on reconnect)")
	}
}

// Own implements session.FollowedEventStore: the stream's next Append records this replica and
// the request as its owner, and every Append of it wakes its followers.
func (e *EventStore) Own(sessionID, streamID string, request jsonrpc.ID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.owned[sessionID] == nil {
		e.owned[sessionID] = map[string]string{}
	}
	e.owned[sessionID][streamID] = request.String()
}

// disown forgets a stream this process owned.
func (e *EventStore) disown(sessionID, streamID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.owned[sessionID]; m != nil {
		delete(m, streamID)
		if len(m) == 0 {
			delete(e.owned, sessionID)
		}
	}
}

// ownerRecord returns, for a stream this process owns, its owner record and the channel and
// message that wake its followers ("" and nil otherwise).
func (e *EventStore) ownerRecord(sessionID, streamID string) (owner, ch string, msg []byte) {
	e.mu.Lock()
	id, ok := e.owned[sessionID][streamID]
	e.mu.Unlock()
	if !ok {
		return "", "", nil
	}
	name := streamChannel(sessionID, streamID)
	return e.r.id + "\n" + id, e.r.sessionChannel(name), encodeEnvelope(kindEvent, e.r.id, name, nil)
}

// wakeOnCluster wakes a stream's followers after the append script, whose slot the channel is
// not in.
func (e *EventStore) wakeOnCluster(ctx context.Context, ch string, msg []byte) {
	if err := e.r.rdb.SPublish(ctx, ch, msg).Err(); err != nil {
		e.r.log.Warn().Err(err).Msg("redisstore: waking a stream's followers")
	}
}

// Owner implements session.FollowedEventStore: the stream's owner record, and the lease of its
// replica (Router.Alive).
func (e *EventStore) Owner(ctx context.Context, sessionID, streamID string) (jsonrpc.ID, bool, bool, error) {
	bctx, cancel := e.r.Bound(ctx)
	rec, err := e.r.rdb.Get(bctx, e.ownerKey(sessionID, streamID)).Result()
	cancel()
	if errors.Is(err, redis.Nil) {
		return jsonrpc.ID{}, false, false, nil
	}
	if err != nil {
		return jsonrpc.ID{}, false, false, fmt.Errorf("redisstore: reading a stream's owner: %w", err)
	}
	replica, idJSON, ok := strings.Cut(rec, "\n")
	var id jsonrpc.ID
	if !ok || id.UnmarshalJSON([]byte(idJSON)) != nil {
		return jsonrpc.ID{}, false, false, errors.New("redisstore: a malformed stream owner record")
	}
	if replica == e.r.id {
		return id, true, true, nil
	}
	alive, err := e.r.Alive(ctx, replica)
	if err != nil {
		return jsonrpc.ID{}, false, false, err
	}
	return id, alive, true, nil
}

// Follow implements session.FollowedEventStore: this replica joins the stream's channel.
func (e *EventStore) Follow(ctx context.Context, sessionID, streamID string, wake func(lapsed bool)) (func(), error) {
	name := streamChannel(sessionID, streamID)
	e.mu.Lock()
	e.next++
	n := e.next
	if e.followers[name] == nil {
		e.followers[name] = map[int]func(bool){}
	}
	e.followers[name][n] = wake
	e.mu.Unlock()
	forget := func() {
		e.mu.Lock()
		delete(e.followers[name], n)
		if len(e.followers[name]) == 0 {
			delete(e.followers, name)
		}
		e.mu.Unlock()
	}
	if err := e.r.Join(ctx, name); err != nil {
		forget()
		return nil, fmt.Errorf("redisstore: following a stream: %w", err)
	}
	stop := func() {
		forget()
		lctx, cancel := context.WithTimeout(context.Background(), e.r.timeout)
		defer cancel()
		if err := e.r.Leave(lctx, name); err != nil {
			e.r.log.Warn().Err(err).Msg("redisstore: leaving a stream's channel")
		}
	}
	return stop, nil
}

// receive wakes the followers of a stream an event was stored in.
func (e *EventStore) receive(env Envelope) {
	e.mu.Lock()
	fs := make([]func(bool), 0, len(e.followers[env.Session]))
	for _, f := range e.followers[env.Session] {
		fs = append(fs, f)
	}
	e.mu.Unlock()
	for _, f := range fs {
		f(false)
	}
}

// receiveLapse wakes every follower in this process: the owner of its stream may be the replica
// that lapsed.
func (e *EventStore) receiveLapse(Envelope) {
	e.mu.Lock()
	var fs []func(bool)
	for _, m := range e.followers {
		for _, f := range m {
			fs = append(fs, f)
		}
	}
	e.mu.Unlock()
	for _, f := range fs {
		f(true)
	}
}

// lapsed tells every replica's followers that a replica lapsed (Router.OnLapse).
func (e *EventStore) lapsed(ctx context.Context, replica string) error {
	if _, err := e.r.ToSession(ctx, lapseChannel, kindLapse, []byte(replica)); err != nil {
		return fmt.Errorf("redisstore: announcing a lapsed replica to the streams' followers: %w", err)
	}
	return nil
}
