package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Defaults of Options.
const (
	DefaultPrefix  = "mcpkit:"
	DefaultTimeout = 2 * time.Second
)

// Options configure the connection of every backend of the package to one Redis. The zero value
// is the default.
type Options struct {
	// Prefix starts every key and channel name. Replicas that serve the same clients must share
	// it; unrelated deployments on one Redis must not. Empty means DefaultPrefix ("mcpkit:").
	Prefix string
	// Timeout bounds each Redis call, on top of the caller's context. Zero means
	// DefaultTimeout (2 s); a negative value panics (an unbounded call could pin a request).
	Timeout time.Duration
	// Logger gets what cannot be reported to a caller: messages dropped because no replica took
	// them, undecodable messages from the bus. Nil means zerolog to standard error.
	Logger *zerolog.Logger
	// ReplicaID names this process on the bus. Empty means a random UUID (recommended: a
	// restarted process is a new replica).
	ReplicaID string
}

// Envelope is one message of the router: a kind (what the payload is, chosen by the component
// that sends it), the replica that sent it, the session it concerns ("" for messages to a
// replica) and an opaque payload.
type Envelope struct {
	Kind    string
	From    string
	Session string
	Payload []byte
}

// Handler receives the envelopes of one kind. It runs on the router's receive goroutine, one
// envelope at a time in the order Redis delivered them: it must return quickly (queue, never
// write to a client or call Redis and wait).
type Handler func(Envelope)

// Router is the message bus of the replicas, on Redis pub/sub: every replica listens on its own
// channel and on the channel of each session it holds, and any replica can send a message of a
// kind to a replica or to a session (delivered to every replica holding that session). It is
// what carries a client's answer, a cancellation or a message for the standalone stream to the
// replica that needs it, change broadcasts, and whatever other component needs the same (for
// example a task store's updates and cancels for the replica running a task).
//
// Delivery is at most once: a message sent while a replica is cut off from Redis, or to a
// replica that died, is lost (the sender learns how many replicas received it).
type Router struct {
	rdb     redis.UniversalClient
	prefix  string
	timeout time.Duration
	log     zerolog.Logger
	id      string
	self    string // this replica's channel

	ps *redis.PubSub

	mu       sync.RWMutex
	handlers map[string]Handler
	joined   map[string]*joined // channel -> its holders and its confirmation
	closed   bool

	done chan struct{}
}

// NewRouter connects the router to rdb (which it does not close) and starts its receive
// goroutine; stop it with Close. It panics on invalid options.
func NewRouter(rdb redis.UniversalClient, opts Options) *Router {
	if rdb == nil {
		panic("redisstore: NewRouter needs a Redis client")
	}
	if opts.Timeout < 0 {
		panic("redisstore: Options.Timeout must not be negative")
	}
	if strings.ContainsAny(opts.ReplicaID, "\n ") {
		panic("redisstore: Options.ReplicaID must not contain spaces or newlines")
	}
	r := &Router{
		rdb:      rdb,
		prefix:   opts.Prefix,
		timeout:  opts.Timeout,
		id:       opts.ReplicaID,
		handlers: map[string]Handler{},
		joined:   map[string]*joined{},
		done:     make(chan struct{}),
	}
	if r.prefix == "" {
		r.prefix = DefaultPrefix
	}
	if r.timeout == 0 {
		r.timeout = DefaultTimeout
	}
	if r.id == "" {
		r.id = uuid.NewString()
	}
	if opts.Logger != nil {
		r.log = *opts.Logger
	} else {
		r.log = zerolog.New(os.Stderr).With().Timestamp().Str("component", "redisstore").Logger()
	}
	r.self = r.prefix + "r:" + r.id
	// go-redis re-subscribes every channel by itself after a reconnect.
	r.ps = rdb.Subscribe(context.Background())
	go r.receive()
	if err := r.listen(context.Background(), r.self); err != nil {
		r.log.Warn().Err(err).Msg("redisstore: subscribing to this replica's channel (retried on reconnect)")
	}
	return r
}

// ID returns this replica's id on the bus.
func (r *Router) ID() string { return r.id }

// Client returns the Redis client the router uses.
func (r *Router) Client() redis.UniversalClient { return r.rdb }

// Key returns a key (or channel) name under the prefix: Key("tasks:", id) is
// "<prefix>tasks:<id>".
func (r *Router) Key(parts ...string) string { return r.prefix + strings.Join(parts, "") }

// Logger returns the router's logger.
func (r *Router) Logger() *zerolog.Logger { return &r.log }

// Bound returns ctx bounded by the router's Timeout: every Redis call of the package goes
// through it.
func (r *Router) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.timeout)
}

// Handle registers f for envelopes of kind (replacing an earlier one). Envelopes of a kind
// nobody handles are dropped.
func (r *Router) Handle(kind string, f Handler) {
	if strings.ContainsAny(kind, "\n") || kind == "" {
		panic("redisstore: a message kind must be non-empty and on one line")
	}
	r.mu.Lock()
	r.handlers[kind] = f
	r.mu.Unlock()
}

func (r *Router) sessionChannel(id string) string { return r.prefix + "c:" + id }

// sessionKey is the key of a session's record. Keys of one session share its hash tag.
func (r *Router) sessionKey(id string) string { return r.prefix + "s:{" + id + "}" }

// ReplicaChannel returns the channel name of a replica.
func (r *Router) replicaChannel(id string) string { return r.prefix + "r:" + id }

// Join makes this replica receive the messages sent to a session, until as many Leave calls.
func (r *Router) Join(ctx context.Context, sessionID string) error {
	return r.listen(ctx, r.sessionChannel(sessionID))
}

// Leave undoes one Join.
func (r *Router) Leave(ctx context.Context, sessionID string) error {
	return r.unlisten(ctx, r.sessionChannel(sessionID))
}

// joined is a channel this replica listens on.
type joined struct {
	holders   int
	confirmed chan struct{} // closed when Redis confirmed the subscription
	once      sync.Once
}

// listen subscribes to a channel (reference-counted) and waits, bounded by the timeout, until
// Redis confirms it, so that a message sent after it returns reaches this replica.
func (r *Router) listen(ctx context.Context, ch string) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errRouterClosed
	}
	j := r.joined[ch]
	first := j == nil
	if first {
		j = &joined{confirmed: make(chan struct{})}
		r.joined[ch] = j
	}
	j.holders++
	r.mu.Unlock()
	ctx, cancel := r.Bound(ctx)
	defer cancel()
	if first {
		if err := r.ps.Subscribe(ctx, ch); err != nil {
			return err
		}
	}
	select {
	case <-j.confirmed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("redisstore: subscribing to a channel: %w", ctx.Err())
	}
}

func (r *Router) unlisten(ctx context.Context, ch string) error {
	r.mu.Lock()
	j := r.joined[ch]
	if j == nil {
		r.mu.Unlock()
		return nil
	}
	if j.holders--; j.holders > 0 {
		r.mu.Unlock()
		return nil
	}
	delete(r.joined, ch)
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil
	}
	ctx, cancel := r.Bound(ctx)
	defer cancel()
	return r.ps.Unsubscribe(ctx, ch)
}

// confirm records Redis's confirmation of a subscription.
func (r *Router) confirm(ch string) {
	r.mu.RLock()
	j := r.joined[ch]
	r.mu.RUnlock()
	if j != nil {
		j.once.Do(func() { close(j.confirmed) })
	}
}

var errRouterClosed = errors.New("redisstore: router closed")

// ToSession sends an envelope of kind to every replica holding the session, this one included
// when it does, and returns how many replicas received it.
func (r *Router) ToSession(ctx context.Context, sessionID, kind string, payload []byte) (int64, error) {
	return r.publish(ctx, r.sessionChannel(sessionID), kind, sessionID, payload)
}

// ToReplica sends an envelope of kind to one replica and reports whether it was received (false
// for a replica that is gone).
func (r *Router) ToReplica(ctx context.Context, replicaID, kind string, payload []byte) (bool, error) {
	n, err := r.publish(ctx, r.replicaChannel(replicaID), kind, "", payload)
	return n > 0, err
}

// publish sends one envelope on a channel, bounded by the timeout.
func (r *Router) publish(ctx context.Context, ch, kind, sessionID string, payload []byte) (int64, error) {
	ctx, cancel := r.Bound(ctx)
	defer cancel()
	n, err := r.rdb.Publish(ctx, ch, encodeEnvelope(kind, r.id, sessionID, payload)).Result()
	if err != nil {
		return 0, fmt.Errorf("redisstore: publish %s: %w", kind, err)
	}
	return n, nil
}

// encodeEnvelope lays an envelope out as three header lines and the payload:
// kind, sender and session, each ending with a newline.
func encodeEnvelope(kind, from, sessionID string, payload []byte) []byte {
	b := make([]byte, 0, len(kind)+len(from)+len(sessionID)+3+len(payload))
	b = append(b, kind...)
	b = append(b, '\n')
	b = append(b, from...)
	b = append(b, '\n')
	b = append(b, sessionID...)
	b = append(b, '\n')
	return append(b, payload...)
}

func decodeEnvelope(s string) (Envelope, bool) {
	b := []byte(s)
	var fields [3][]byte
	for i := range fields {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			return Envelope{}, false
		}
		fields[i], b = b[:j], b[j+1:]
	}
	return Envelope{Kind: string(fields[0]), From: string(fields[1]), Session: string(fields[2]), Payload: b}, true
}

// receive runs the handlers of the envelopes Redis delivers, in order.
func (r *Router) receive() {
	defer close(r.done)
	for v := range r.ps.ChannelWithSubscriptions(redis.WithChannelSize(4096)) {
		var m *redis.Message
		switch v := v.(type) {
		case *redis.Subscription:
			if v.Kind == "subscribe" {
				r.confirm(v.Channel)
			}
			continue
		case *redis.Message:
			m = v
		default:
			continue
		}
		env, ok := decodeEnvelope(m.Payload)
		if !ok {
			r.log.Warn().Str("channel", m.Channel).Msg("redisstore: dropped a malformed message from the bus")
			continue
		}
		r.mu.RLock()
		f := r.handlers[env.Kind]
		r.mu.RUnlock()
		if f != nil {
			f(env)
		}
	}
}

// Close stops receiving and closes the pub/sub connection (not the client).
func (r *Router) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	err := r.ps.Close()
	<-r.done
	return err
}
