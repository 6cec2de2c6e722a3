// Command everything is the conformance fixture of the kit: a server that offers the tools,
// resources, prompts and completions the official MCP conformance suite calls, with the exact
// results the suite expects.
//
//	go run ./examples/everything                          # Streamable HTTP on 127.0.0.1:3000, endpoint /mcp
//	go run ./examples/everything -http 127.0.0.1:8080     # another address
//	go run ./examples/everything -stdio                   # newline-delimited JSON-RPC on stdin/stdout
//	go run ./examples/everything -http 127.0.0.1:3001 -redis redis://127.0.0.1:6379/0 -state-key $KEY
//	                                                      # one replica of several sharing a Redis
//	go run ./examples/everything -redis-cluster 127.0.0.1:7000,127.0.0.1:7001 -state-key $KEY
//	                                                      # the same on a Redis Cluster (its seed nodes)
//	go run ./examples/everything -redis-sentinel mymaster@127.0.0.1:26379,127.0.0.1:26380 -state-key $KEY
//	                                                      # on the primary Sentinel watches (and fails over)
//
// With -redis (or -redis-cluster, or -redis-sentinel), legacy sessions, change broadcasts, the resumability event store, tasks and the
// answers that land on another replica go through that Redis (package redisstore), so several
// replicas on different ports can sit behind one round-robin load balancer. -state-key (64 hex
// characters, or MCPKIT_STATE_KEY) is the requestState key every replica must share.
//
// The HTTP endpoint keeps the kit's default DNS-rebinding protection, which accepts loopback
// hosts only: bind it to a loopback address.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/stdio"
)

// shutdownTimeout bounds the graceful shutdown of the HTTP server.
const shutdownTimeout = 5 * time.Second

// newServer builds the fixture server with everything registered. The order of registration is
// the order of the listings: the trivial entries come first, because some scenarios use the
// first listed tool or resource.
func newServer() *core.Server {
	s, _ := newServerWith(shared{})
	return s
}

// shared is what replicas share; the zero value keeps everything in process.
type shared struct {
	broadcaster core.Broadcaster
	tasks       tasks.Store
	stateKey    []byte
}

// newServerWith is newServer with shared pieces; it also returns the tasks extension, whose
// Shutdown ends the tasks running in the process.
func newServerWith(sh shared) (*core.Server, *tasks.Extension) {
	roots := &rootsChanges{}
	sk := skills.New(skills.Options{})
	tx := tasks.New(tasks.Options{Store: sh.tasks, Deferred: []string{"test_tool_with_task"}})
	s := core.NewServer(core.Implementation{Name: "mcpkit-everything", Version: "1.0.0"}, core.Options{
		SubscribeHandler:   core.AcceptSubscription,
		CompletionHandler:  complete,
		OnRootsListChanged: roots.seen,
		Broadcaster:        sh.broadcaster,
		RequestState:       core.RequestStateOptions{Key: sh.stateKey},
		Extensions: []core.Extension{
			tx,
			sk,
		},
	})
	addTools(s)
	addResources(s)
	addPrompts(s)
	addTaskTools(s)
	addSkills(sk)
	addInteropTools(s, roots)
	return s, tx
}

func main() {
	addr := flag.String("http", "127.0.0.1:3000", "serve Streamable HTTP on this address (endpoint /mcp)")
	useStdio := flag.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	flag.BoolVar(&serveStats, "stats", false, "also serve /debug/stats (goroutines and heap after a GC, as JSON) for make stress")
	redisURL := flag.String("redis", "", "share sessions, broadcasts, stored events and routed answers through this Redis (redis://host:port/db)")
	redisCluster := flag.String("redis-cluster", "", "the same through a Redis Cluster: its seed nodes, host:port,host:port,...")
	redisSentinel := flag.String("redis-sentinel", "", "the same through the primary Sentinel fails over: MASTER@host:port,host:port,... (the Sentinels)")
	stateKeyHex := flag.String("state-key", os.Getenv("MCPKIT_STATE_KEY"), "the requestState key shared by every replica: 64 hex characters (default $MCPKIT_STATE_KEY)")
	flag.DurationVar(&leaseTTL, "lease-ttl", 0, "with Redis: the lifetime of this replica's liveness lease (default 15s); every replica must use the same")
	flag.Parse()

	stateKey, err := parseStateKey(*stateKeyHex)
	if err != nil {
		log.Fatalf("everything: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rdb, err := redisClient(*redisURL, *redisCluster, *redisSentinel)
	if err != nil {
		log.Fatalf("everything: %v", err)
	}
	if rdb != nil {
		defer rdb.Close()
		if *useStdio {
			log.Fatalf("everything: -redis, -redis-cluster and -redis-sentinel are for HTTP replicas, not -stdio")
		}
		if err := serveReplica(ctx, *addr, rdb, stateKey); err != nil {
			log.Fatalf("everything: %v", err)
		}
		return
	}
	s, tx := newServerWith(shared{stateKey: stateKey})
	if *useStdio {
		if err := serveStdio(ctx, s); err != nil {
			fmt.Fprintln(os.Stderr, "everything:", err)
			os.Exit(1)
		}
		return
	}
	if err := serveHTTP(ctx, s, tx, *addr); err != nil {
		log.Fatalf("everything: %v", err)
	}
}

// serveStdio serves s on stdin and stdout until the input ends or ctx ends (a signal).
func serveStdio(ctx context.Context, s *core.Server) error {
	if err := stdio.Serve(ctx, s, stdio.Options{}); err != nil {
		return err
	}
	return nil
}

// parseStateKey decodes the -state-key flag: empty (a random key per process) or 64 hex
// characters.
func parseStateKey(h string) ([]byte, error) {
	if h == "" {
		return nil, nil
	}
	k, err := hex.DecodeString(h)
	if err != nil || len(k) != 32 {
		return nil, errors.New("-state-key (or MCPKIT_STATE_KEY) must be 64 hex characters (32 bytes)")
	}
	return k, nil
}

// redisClient returns the client of the one Redis topology the flags name (nil for none).
func redisClient(url, cluster, sentinel string) (redis.UniversalClient, error) {
	n := 0
	for _, f := range []string{url, cluster, sentinel} {
		if f != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, errors.New("-redis, -redis-cluster and -redis-sentinel name one Redis: give one of them")
	case url != "":
		c, err := redisstore.NewClient(url)
		if err != nil {
			return nil, fmt.Errorf("-redis: %w", err)
		}
		return c, nil
	case cluster != "":
		c, err := redisstore.NewClusterClient(redisstore.SplitAddrs(cluster)...)
		if err != nil {
			return nil, fmt.Errorf("-redis-cluster: %w", err)
		}
		return c, nil
	case sentinel != "":
		master, addrs, err := redisstore.ParseSentinel(sentinel)
		if err != nil {
			return nil, fmt.Errorf("-redis-sentinel: %w", err)
		}
		c, err := redisstore.NewSentinelClient(master, addrs...)
		if err != nil {
			return nil, fmt.Errorf("-redis-sentinel: %w", err)
		}
		return c, nil
	}
	return nil, nil
}

// serveReplica serves the fixture as one replica of several: every shared backend on rdb.
func serveReplica(ctx context.Context, addr string, rdb redis.UniversalClient, stateKey []byte) error {
	if stateKey == nil {
		log.Printf("everything: no -state-key: requestState tokens of this replica open here only")
	}
	router := redisstore.NewRouter(rdb, redisstore.Options{LeaseTTL: leaseTTL})
	defer router.Close()
	s, tx := newServerWith(shared{
		broadcaster: redisstore.NewBroadcaster(router),
		tasks:       redisstore.NewTaskStore(router, redisstore.TaskStoreOptions{}),
		stateKey:    stateKey,
	})
	h := mcphttp.New(s, mcphttp.Options{
		Store:   redisstore.NewSessions(router, redisstore.SessionsOptions{}),
		Callers: redisstore.NewCaps(router), // per-caller caps shared by the replicas
		Resumability: mcphttp.ResumabilityOptions{Enabled: true,
			Store: redisstore.NewEventStore(router, redisstore.EventStoreOptions{})},
	})
	return serveHandler(ctx, mountFixture(h), h, tx, addr)
}

// mountFixture mounts the endpoint at /mcp and at /.
func mountFixture(h *mcphttp.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	if serveStats {
		mux.HandleFunc("/debug/stats", stats)
	}
	return mux
}

// leaseTTL is redisstore.Options.LeaseTTL of a replica (the -lease-ttl flag).
var leaseTTL time.Duration

// serveStats turns on /debug/stats (the -stats flag).
var serveStats bool

// stats answers the process's goroutine count and live heap after a collection, for the
// stress run's leak check.
func stats(w http.ResponseWriter, _ *http.Request) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"goroutines":%d,"heapAlloc":%d}`, runtime.NumGoroutine(), ms.HeapAlloc)
}

// newHandler returns the HTTP handler of the fixture: the kit's endpoint, at /mcp and at /.
func newHandler(s *core.Server) (http.Handler, *mcphttp.Handler) {
	// Resumable request streams: the suite's server-sse-polling scenario checks the priming
	// event, the retry field and the replay after test_reconnection closes its stream.
	h := mcphttp.New(s, mcphttp.Options{Resumability: mcphttp.ResumabilityOptions{Enabled: true}})
	return mountFixture(h), h
}

// serveHTTP serves s on addr until ctx ends, then shuts down gracefully.
func serveHTTP(ctx context.Context, s *core.Server, tx *tasks.Extension, addr string) error {
	mux, h := newHandler(s)
	return serveHandler(ctx, mux, h, tx, addr)
}

// serveHandler serves mux on addr until ctx ends, then shuts h and the server down gracefully,
// and with them the tasks still running (tx: they become failed, saying the server shut down).
func serveHandler(ctx context.Context, mux http.Handler, h *mcphttp.Handler, tx *tasks.Extension, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := mcphttp.NewHTTPServer("", mux, mcphttp.HTTPServerOptions{})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("everything: serving MCP at http://%s/mcp", ln.Addr())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Printf("everything: shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// The endpoint first: it ends the long-lived SSE streams, which http.Server.Shutdown would
	// otherwise wait for.
	_ = h.Shutdown(shutdown)
	err = srv.Shutdown(shutdown)
	if terr := tx.Shutdown(shutdown); terr != nil {
		log.Printf("everything: %v", terr)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
