package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
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
	// LeaseTTL is the lifetime of this replica's liveness lease, which it renews in Redis at a
	// third of it (see Router.Alive and Router.OnLapse): a replica that stops renewing (killed,
	// cut off from Redis) is taken for dead that long after its last renewal, and what it held
	// is then freed by a surviving replica. Every replica must use the same value. Zero means
	// DefaultLeaseTTL (15 s); a negative value or one under 10 ms panics.
	LeaseTTL time.Duration
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
	cluster bool // rdb is a Redis Cluster: no script may leave one hash slot
	prefix  string
	timeout time.Duration
	log     zerolog.Logger

	leaseTTL  time.Duration
	leaseStop chan struct{} // closed by Close: the lease's ticker stops
	leaseDone chan struct{} // closed when the lease's ticker stopped
	id        string
	self      string // this replica's channel

	ps *redis.PubSub // one node or Sentinel: every channel on one connection

	mu       sync.RWMutex
	handlers map[string]Handler
	joined   map[string]*joined       // channel -> its holders and its confirmation
	shards   map[string]*redis.PubSub // Cluster: a sharded pub/sub connection per slot (see busSlots)
	lapse    []LapseHandler
	closed   bool

	shardMu   sync.Mutex // held while a Cluster shard's connection opens
	dispatch  sync.Mutex // handlers run one envelope at a time, whichever connection got it
	receivers sync.WaitGroup
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
	if opts.LeaseTTL < 0 || (opts.LeaseTTL > 0 && opts.LeaseTTL < minLeaseTTL) {
		panic("redisstore: Options.LeaseTTL must be zero or at least 10ms")
	}
	if strings.ContainsAny(opts.ReplicaID, "\n ") {
		panic("redisstore: Options.ReplicaID must not contain spaces or newlines")
	}
	r := &Router{
		rdb:      rdb,
		cluster:  isCluster(rdb),
		prefix:   opts.Prefix,
		timeout:  opts.Timeout,
		leaseTTL: opts.LeaseTTL,
		id:       opts.ReplicaID,
		handlers: map[string]Handler{},
		joined:   map[string]*joined{},
		shards:   map[string]*redis.PubSub{},
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
	if r.leaseTTL == 0 {
		r.leaseTTL = DefaultLeaseTTL
	}
	if opts.Logger != nil {
		r.log = *opts.Logger
	} else {
		r.log = zerolog.New(os.Stderr).With().Timestamp().Str("component", "redisstore").Logger()
	}
	r.self = r.replicaChannel(r.id)
	// go-redis re-subscribes every channel by itself after a reconnect (on a Cluster, at the
	// primary that holds the channel's slot after a failover).
	if !r.cluster {
		r.ps = rdb.Subscribe(context.Background())
		r.receivers.Add(1)
		go r.receive(r.ps)
	}
	if err := r.listen(context.Background(), r.self); err != nil {
		r.log.Warn().Err(err).Msg("redisstore: subscribing to this replica's channel (retried on reconnect)")
	}
	r.startLease()
	return r
}

// isCluster reports whether rdb talks to a Redis Cluster.
func isCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
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

// sessionChannel is the channel of a session.
func (r *Router) sessionChannel(id string) string { return r.channel("c:" + id) }

// busSlots is how many hash slots a Cluster's channels spread over. On a Cluster the channels are
// sharded (SSUBSCRIBE, SPUBLISH: delivered by the primary of the channel's slot, which counts its
// receivers exactly), and a replica keeps one pub/sub connection per slot it listens in:
// go-redis subscribes a connection's channels again in one command after a reconnect (a
// failover), which Redis refuses for channels of different slots.
const busSlots = 16

// channel names a channel of the bus: the name under the prefix, and on a Cluster a hash tag
// first that puts it in one of busSlots slots.
func (r *Router) channel(name string) string {
	if !r.cluster {
		return r.prefix + name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return r.prefix + "{bus" + strconv.Itoa(int(h.Sum32()%busSlots)) + "}" + name
}

// publishCommand is the command the session scripts announce with: PUBLISH, or "" on a Cluster,
// where the channel is not in the session's slot and the store publishes after the script.
func (r *Router) publishCommand() string {
	if r.cluster {
		return ""
	}
	return "PUBLISH"
}

// sessionKey is the key of a session's record. Keys of one session share its hash tag.
func (r *Router) sessionKey(id string) string { return r.prefix + "s:{" + id + "}" }

// ReplicaChannel returns the channel name of a replica.
func (r *Router) replicaChannel(id string) string { return r.channel("r:" + id) }

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
	ps        *redis.PubSub // the connection it is subscribed on
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
		if err := r.subscribe(ctx, j, ch); err != nil {
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
	if j.ps == nil {
		return nil
	}
	if r.cluster {
		return j.ps.SUnsubscribe(ctx, ch)
	}
	return j.ps.Unsubscribe(ctx, ch)
}

// subscribe subscribes ch on its connection: the one connection, or on a Cluster the sharded
// connection of ch's slot (opened on first use; go-redis opens it at the slot's primary).
func (r *Router) subscribe(ctx context.Context, j *joined, ch string) error {
	if !r.cluster {
		r.mu.Lock()
		j.ps = r.ps
		r.mu.Unlock()
		return r.ps.Subscribe(ctx, ch)
	}
	cc := r.rdb.(*redis.ClusterClient)
	addr, _, _ := strings.Cut(strings.TrimPrefix(ch, r.prefix), "}") // the channel's slot tag
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errRouterClosed
	}
	ps := r.shards[addr]
	if ps != nil {
		j.ps = ps
		r.mu.Unlock()
		return ps.SSubscribe(ctx, ch)
	}
	r.mu.Unlock()
	// A shard's connection is opened by its first subscription, before anything reads from it:
	// go-redis picks the node of a sharded connection from its channels, so a read on a
	// connection without any would open it on a random node.
	r.shardMu.Lock()
	defer r.shardMu.Unlock()
	r.mu.Lock()
	ps = r.shards[addr]
	r.mu.Unlock()
	if ps == nil {
		ps = cc.SSubscribe(context.Background())
		if err := ps.SSubscribe(ctx, ch); err != nil {
			_ = ps.Close()
			return err
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return errors.Join(errRouterClosed, ps.Close())
		}
		r.shards[addr] = ps
		j.ps = ps
		r.receivers.Add(1)
		go r.receive(ps)
		r.mu.Unlock()
		return nil
	}
	r.mu.Lock()
	j.ps = ps
	r.mu.Unlock()
	return ps.SSubscribe(ctx, ch)
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
	msg := encodeEnvelope(kind, r.id, sessionID, payload)
	var n int64
	var err error
	if r.cluster {
		n, err = r.rdb.SPublish(ctx, ch, msg).Result()
	} else {
		n, err = r.rdb.Publish(ctx, ch, msg).Result()
	}
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

// receive runs the handlers of the envelopes Redis delivers on one connection, in order.
func (r *Router) receive(ps *redis.PubSub) {
	defer r.receivers.Done()
	for v := range ps.ChannelWithSubscriptions(redis.WithChannelSize(4096)) {
		var m *redis.Message
		switch v := v.(type) {
		case *redis.Subscription:
			if v.Kind == "subscribe" || v.Kind == "ssubscribe" {
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
			r.dispatch.Lock()
			f(env)
			r.dispatch.Unlock()
		}
	}
}

// Close stops renewing this replica's lease and removes it (handing what the replica's components
// still hold to the lapse handlers of a surviving replica), stops receiving and closes the
// pub/sub connections (not the client).
func (r *Router) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	err := r.stopLease()
	r.mu.Lock()
	all := make([]*redis.PubSub, 0, len(r.shards)+1)
	if r.ps != nil {
		all = append(all, r.ps)
	}
	for _, ps := range r.shards {
		all = append(all, ps)
	}
	r.mu.Unlock()
	for _, ps := range all {
		err = errors.Join(err, ps.Close())
	}
	r.receivers.Wait()
	return err
}
