// Package redisstore shares the state of an MCP server between replicas on Redis, so that
// several processes behind a round-robin load balancer serve the same clients: legacy sessions,
// change broadcasts, the resumability event store, and the messages that land on a replica other
// than the one that needs them. The in-process defaults of the kit stay the defaults: nothing
// here runs unless it is configured.
//
// # Wiring
//
//	rdb, err := redisstore.NewClient("redis://127.0.0.1:6379/0")
//	router := redisstore.NewRouter(rdb, redisstore.Options{})
//	server := core.NewServer(impl, core.Options{
//		Broadcaster: redisstore.NewBroadcaster(router),
//		Extensions: []core.Extension{tasks.New(tasks.Options{
//			Store: redisstore.NewTaskStore(router, redisstore.TaskStoreOptions{})})},
//		RequestState: core.RequestStateOptions{Key: sharedKey}, // the same 32 bytes on every replica
//	})
//	h := mcphttp.New(server, mcphttp.Options{
//		Store:   redisstore.NewSessions(router, redisstore.SessionsOptions{}),
//		Callers: redisstore.NewCaps(router), // per-caller caps counted across replicas
//		Resumability: mcphttp.ResumabilityOptions{Enabled: true,
//			Store: redisstore.NewEventStore(router, redisstore.EventStoreOptions{})},
//	})
//	defer router.Close() // runs after h.Close
//	defer h.Close()
//
// The 2026-07-28 lifecycle is stateless: it needs only the broadcaster (for
// subscriptions/listen) and the shared requestState key.
//
// # What each backend costs
//
//   - Sessions (session.Store, session.Checker, session.Holder): a Redis hash per session
//     with a TTL a little over the idle timeout, and a sorted set of live sessions that enforces the cap
//     across replicas in the same script that creates a record. A request for a session this
//     replica holds costs one round trip on its path: one script checks the record, answers its
//     revision and claims the request's id (a GET without Last-Event-ID: the standalone stream)
//     in the record, in two or three Redis commands when the revision is current (one HMGET
//     more when it is not); it renews the record's TTL (and, off a Cluster, the session index
//     to the same instant) only when this replica's last renewal is older than a sixteenth of
//     the idle timeout, to the idle timeout plus an eighth (SessionsOptions.IdleTimeout). The
//     session layer releases the claim after the response
//     (see session.Claim); the release is queued, and goes in the store's next round trip,
//     riding a lookup of the session when there is one (at most one round trip per request,
//     off its path). The lookups of concurrent requests share round trips: one goroutine per
//     store sends everything queued (lookups and releases) in one pipeline as soon as it is
//     woken, never waiting for more, and hands each request its own reply; a request whose
//     context ends stops waiting, and a claim its lookup took all the same is released. On a Redis
//     Cluster each lookup goes alone to its node (a pipeline would answer only when its
//     slowest node did, so one node down would hold up every session's lookups). A duplicate id in flight, or a second GET stream, is refused with 409 on
//     every replica alike; a claim whose replica's lease lapsed, or whose request on this
//     replica is done, is taken over by the next request that wants it. The first request for a session on a replica fetches the record, the
//     endpoint builds the in-process session from it (SessionState) and hands it to the store
//     (Hold), which joins the session's channel.
//     initialize, logging/setLevel and resources/subscribe|unsubscribe write the state through
//     (one script, which also announces the new revision to the other replicas). DELETE removes
//     the record and every replica ends its copy.
//   - Broadcaster (core.Broadcaster): one PUBLISH per change; each replica delivers to its own
//     legacy GET streams and listen streams, filtered there as in process.
//   - EventStore (session.SharedEventStore): one script per stored event (push and trim to the
//     bounds), a list read per resumption. It is a session.FollowedEventStore: a stream's first
//     event (stored when it opens) records the replica running it and the request it answers,
//     and each event stored wakes the replicas following the stream over pub/sub ("mcp.event").
//     A GET with Last-Event-ID that lands on a replica that does not run the stream replays what
//     is stored and follows it, woken, until its response; when the replica running it lapsed
//     (see Replica leases; the survivor that claims it tells every replica, "mcp.lapse"), the
//     GET ends with a JSON-RPC error for the request, so that the client sends it again.
//   - TaskStore (tasks.Store, tasks.Signaler): a key per task holding its JSON record,
//     expiring with the task's TTL, and sorted sets that enforce the task limits in the script
//     that creates a task; an update is one optimistic transaction on the task's key (retried
//     when another replica changed it). The replica running a task's handler joins the task's
//     channel, so a tasks/update or tasks/cancel served by another replica reaches the handler
//     ("mcp.task"). Each task records the replica that runs it, and a sorted set per replica
//     holds its unfinished tasks: when that replica's lease lapses (see Replica leases), the
//     survivor that claims it makes them failed (tasks.Supervisor), and answers that reach no
//     replica are refused (tasks.ErrNotRunning).
//   - Caps (mcphttp.CallerCounter, mcphttp.Options.Callers): the per-caller caps of the
//     transport (sessions, listen streams and resumable calls per caller) counted across
//     replicas: a hash per caller and cap ("<prefix>cap:{<cap>|<caller>}") with a field per
//     replica holding units, one script to take a unit (at initialize, at the opening of a listen
//     stream, at the start of a resumable call) and one to give it back (when the session ends on
//     the replica that created it, when the stream closes, when the call is done); nothing for a
//     plain request. A replica's units are freed by a survivor when its lease lapses. The task
//     limits per principal are counted in Redis by the TaskStore already.
//   - ReplayCache (auth.ReplayCache, for auth.DPoPOptions.Replay): one SET NX per DPoP request,
//     a key per accepted proof expiring at the end of its window, so a proof replayed on
//     another replica is refused.
//   - Router: the bus. Every replica listens on its own channel ("<prefix>r:<replica>") and on
//     the channel of each session it holds ("<prefix>c:<session>"). On a Redis Cluster the
//     channels are sharded (SSUBSCRIBE, SPUBLISH: delivered by the primary of the channel's slot,
//     not flooded to every node, the count of receivers exact), spread over 16 slots by a hash
//     tag ("<prefix>{bus<n>}c:<session>"); each replica keeps one pub/sub connection per slot it
//     listens in, which go-redis moves to the promoted replica after a failover.
//
// Every Redis call is bounded by the caller's context and Options.Timeout. When Redis is down
// or slow, requests that need it fail with a clear error (on HTTP 503 with a JSON-RPC error
// body), nothing panics, and service resumes by itself when Redis is back.
//
// # The router
//
// A message on the router is an Envelope: a kind, the sending replica, the session it concerns
// and an opaque payload, sent to one replica (ToReplica) or to every replica holding a session
// (ToSession); Handle registers the receiver of a kind. The session store uses it for:
//
//   - "mcp.message": a client's JSON-RPC response to a server-to-client request (sampling,
//     elicitation, roots, ping) or a notifications/cancelled that landed on a replica where
//     nobody waits for it or runs the request (the session's forward hook); the replica that
//     does takes it (core.Session.Deliver);
//   - "mcp.out": a message for the session's standalone GET stream, sent by a replica that does
//     not hold the stream (the session's remote path);
//   - "mcp.state": the new state of a session after a change, applied by the other replicas;
//   - "mcp.end": the session was deleted.
//
// The broadcaster sends "mcp.change" on the changes channel. Other components (a task store
// sending updates and cancels to the replica that runs a task) register kinds of their own and
// use Key for their Redis keys. Delivery is at most once: a message for a replica that died, or
// sent while a replica is cut off from Redis, is dropped with a log line and never retried. A
// session's record survives the replica that created it: the other replicas go on serving it.
//
// # Replica leases
//
// Each Router holds a liveness lease in Redis: its entry in the replica index, a sorted set
// ("<prefix>{replicas}:live") scored with the lease's expiry on Redis's clock. NewRouter takes it
// before it returns, one ticker renews it at a third of Options.LeaseTTL (default 15 s; never per
// request), and Close removes it. Alive(ctx, replicaID) tells whether a replica's lease is live: a
// component that records which replica holds something (a request id in flight, a task it runs, a
// stream it serves) asks it before waiting on that replica.
//
// OnLapse(f) registers a LapseHandler, f(ctx, replicaID), that frees what a dead replica held. On
// the same ticker a janitor (on every replica with a handler) claims the replicas whose lease
// lapsed in one script, one replica per claim, moving it to "<prefix>{replicas}:lapsed" with a
// claim that lasts one LeaseTTL, so that one surviving replica runs its handlers for each lapsed
// replica, once; the claim ends when they all returned nil. When one returned an error (Redis
// failed mid-cleanup), the claim is left to expire and the cleanup runs again. A replica that closes is handed to the janitors at once, for what
// its components did not release themselves. If the claimant dies before its handlers return, its
// claim expires and another replica runs them again: handlers free what is still held by that
// replica and nothing else, so running them twice is harmless. A replica paused past its lease
// (a long stall, a partition) finds on its next renewal that it lapsed, logs it, and is live again
// from then on; what it held may have been freed meanwhile.
//
// A replica is taken for dead LeaseTTL after its last renewal, and its holdings are freed within
// a third of LeaseTTL after that.
//
// # Topologies
//
// Every backend takes a redis.UniversalClient: one node (NewClient), a primary that Sentinel
// watches and fails over (NewSentinelClient), or a Redis Cluster (NewClusterClient). Every script
// touches the keys of one hash slot: a session's keys share its hash tag ("{<session>}"), so do a
// task's, and the replica index has its own ("{replicas}"). On a single node or under Sentinel the session index (the cap on sessions of all
// replicas) is kept in the same script as the record; on a Cluster it lives in its own slot, is
// written at initialize and DELETE (pipelined beside the record's script) and renewed by each
// replica's reaper for the sessions it holds, so that no per-request script leaves the session's
// slot.
package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient returns a go-redis client for a redis:// or rediss:// URL, with context deadlines
// honoured on every call (the package bounds each call with the caller's context) and two dial
// attempts per connection, so that a Redis that is down fails requests quickly instead of
// holding them for the whole timeout.
func NewClient(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opts.ContextTimeoutEnabled = true
	opts.DialerRetries = 2
	return redis.NewClient(opts), nil
}

// NewClusterClient returns a go-redis client of a Redis Cluster reached through its seed nodes
// (host:port), with the same deadlines and dial attempts as NewClient. It follows the cluster's
// redirections (MOVED, ASK) and its failovers by itself.
//
// go-redis alone keeps dialing a primary that died until something reloads its view of the
// slots; the client returned reloads it (CLUSTER SLOTS, at most every 200 ms, off the request)
// whenever a command fails for another reason than a Redis answer, so that requests reach the
// promoted replica as soon as the cluster promoted it.
func NewClusterClient(addrs ...string) (*redis.ClusterClient, error) {
	if len(addrs) == 0 {
		return nil, errors.New("redisstore: a Redis Cluster needs at least one seed address")
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true, DialerRetries: 2})
	cc.AddHook(&reloader{cc: cc})
	return cc, nil
}

// reloader reloads a Cluster client's slots after a failed command (see NewClusterClient).
type reloader struct {
	cc      *redis.ClusterClient
	running atomic.Bool
}

func (h *reloader) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *reloader) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.after(err)
		return err
	}
}

func (h *reloader) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.after(err)
		return err
	}
}

// after starts one reload when err is not an answer of Redis (a dial or network error, a
// timeout) or says the cluster is down, unless one runs.
func (h *reloader) after(err error) {
	var answer redis.Error
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.TxFailedErr) ||
		(errors.As(err, &answer) && !strings.HasPrefix(answer.Error(), "CLUSTERDOWN")) {
		return
	}
	if !h.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer h.running.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		defer cancel()
		h.cc.ReloadState(ctx)
		time.Sleep(200 * time.Millisecond) // at most five reloads a second
	}()
}

// NewSentinelClient returns a go-redis client of the primary that the Sentinels at addrs
// (host:port) know as master, with the same deadlines and dial attempts as NewClient: after a
// failover it asks the Sentinels for the new primary and reconnects there.
func NewSentinelClient(master string, addrs ...string) (*redis.Client, error) {
	if master == "" || len(addrs) == 0 {
		return nil, errors.New("redisstore: Sentinel needs a master name and at least one Sentinel address")
	}
	return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: addrs,
		ContextTimeoutEnabled: true, DialerRetries: 2}), nil
}

// ParseSentinel splits "MASTER@ADDR,ADDR,..." (the form of examples/everything's
// -redis-sentinel flag) into the master name and the Sentinel addresses.
func ParseSentinel(spec string) (master string, addrs []string, err error) {
	master, list, ok := strings.Cut(spec, "@")
	addrs = SplitAddrs(list)
	if !ok || master == "" || len(addrs) == 0 {
		return "", nil, errors.New("redisstore: want MASTER@HOST:PORT,HOST:PORT (one Sentinel address or more)")
	}
	return master, addrs, nil
}

// SplitAddrs splits a comma-separated list of host:port addresses, dropping empty entries.
func SplitAddrs(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
