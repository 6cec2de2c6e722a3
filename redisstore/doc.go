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
//		Store: redisstore.NewSessions(router, redisstore.SessionsOptions{}),
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
//     with a TTL of the idle timeout, and a sorted set of live sessions that enforces the cap
//     across replicas in the same script that creates a record. A request for a session this
//     replica holds costs one round trip (one script checks the record, renews its TTL and
//     answers its revision); the first request for a session on a replica fetches the record, the
//     endpoint builds the in-process session from it (SessionState) and hands it to the store
//     (Hold), which joins the session's channel.
//     initialize, logging/setLevel and resources/subscribe|unsubscribe write the state through
//     (one script, which also announces the new revision to the other replicas). DELETE removes
//     the record and every replica ends its copy.
//   - Broadcaster (core.Broadcaster): one PUBLISH per change; each replica delivers to its own
//     legacy GET streams and listen streams, filtered there as in process.
//   - EventStore (session.SharedEventStore): one script per stored event (push and trim to the
//     bounds), a list read per resumption. A GET with Last-Event-ID that lands on a replica that
//     does not run the stream replays what is stored and ends, so the client polls again after
//     the retry interval, wherever its next GET lands.
//   - TaskStore (tasks.Store, tasks.Signaler): a key per task holding its JSON record,
//     expiring with the task's TTL, and sorted sets that enforce the task limits in the script
//     that creates a task; an update is one optimistic transaction on the task's key (retried
//     when another replica changed it). The replica running a task's handler joins the task's
//     channel, so a tasks/update or tasks/cancel served by another replica reaches the handler
//     ("mcp.task").
//   - Router: the bus. Every replica listens on its own channel ("<prefix>r:<replica>") and on
//     the channel of each session it holds ("<prefix>c:<session>"). On a Redis Cluster the
//     channels are sharded (SSUBSCRIBE, SPUBLISH: delivered by the primary of the channel's slot,
//     not flooded to every node); a session's channel carries its hash tag
//     ("<prefix>c:{<session>}"), and each replica keeps one pub/sub connection per primary it
//     listens on, moved by go-redis to the promoted replica after a failover.
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
//     nobody waits for it or runs the request (core.SessionHooks.Forward); the replica that
//     does takes it (core.Session.Deliver);
//   - "mcp.out": a message for the session's standalone GET stream, sent by a replica that does
//     not hold the stream (core.SessionHooks.Remote);
//   - "mcp.state": the new state of a session after a change, applied by the other replicas;
//   - "mcp.end": the session was deleted.
//
// The broadcaster sends "mcp.change" on the changes channel. Other components (a task store
// sending updates and cancels to the replica that runs a task) register kinds of their own and
// use Key for their Redis keys. Delivery is at most once: a message for a replica that died, or
// sent while a replica is cut off from Redis, is dropped with a log line and never retried. A
// session's record survives the replica that created it: the other replicas go on serving it.
//
// # Topologies
//
// Every backend takes a redis.UniversalClient: one node (NewClient), a primary that Sentinel
// watches and fails over (NewSentinelClient), or a Redis Cluster (NewClusterClient). Every script
// touches the keys of one hash slot: a session's keys share its hash tag ("{<session>}"), so do a
// task's. On a single node or under Sentinel the session index (the cap on sessions of all
// replicas) is kept in the same script as the record; on a Cluster it lives in its own slot, is
// written at initialize and DELETE (pipelined beside the record's script) and renewed by each
// replica's reaper for the sessions it holds, so that no per-request script leaves the session's
// slot.
package redisstore

import (
	"errors"
	"strings"

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
func NewClusterClient(addrs ...string) (*redis.ClusterClient, error) {
	if len(addrs) == 0 {
		return nil, errors.New("redisstore: a Redis Cluster needs at least one seed address")
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true, DialerRetries: 2}), nil
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
