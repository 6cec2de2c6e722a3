package redisstore_test

import (
	"context"
	"flag"
	"log"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

// One real redis-server for the whole test binary, started by the first test that needs it and
// stopped by TestMain; each test gets its own key prefix.
var (
	redisOnce sync.Once
	redisSrv  *testutil.RedisServer
	redisErr  error
	prefixes  atomic.Int64
)

// quietRedis drops go-redis's own log lines (dial failures while a test has Redis stopped).
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{})
	flag.Parse()
	if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv(testutil.RequireBinariesEnv) == "" {
		// The examples talk to a real redis-server and cannot skip themselves: leave them out,
		// as the tests skip (under MCPKIT_REQUIRE_BINARIES they run, and fail).
		_ = flag.Set("test.skip", "^Example")
	}
	code := m.Run()
	if redisSrv != nil {
		redisSrv.Close()
	}
	os.Exit(code)
}

// clusterSeeds, from MCPKIT_REDIS_CLUSTER (host:port,host:port,...), runs every test of the
// package on that Redis Cluster instead of a redis-server of its own (the cluster test does, see
// scripts/cluster.sh): each script must then keep to one hash slot.
var clusterSeeds = redisstore.SplitAddrs(os.Getenv("MCPKIT_REDIS_CLUSTER"))

// onCluster stands for the Redis Cluster of clusterSeeds where tests pass a server around.
var onCluster = &testutil.RedisServer{Addr: "cluster"}

// needRedis returns the shared server, skipping the test (or failing it under
// MCPKIT_REQUIRE_BINARIES) when redis-server is not installed.
func needRedis(t testing.TB) *testutil.RedisServer {
	t.Helper()
	if len(clusterSeeds) > 0 {
		return onCluster
	}
	bin := testutil.NeedBinary(t, "redis-server", "redis-server")
	redisOnce.Do(func() { redisSrv, redisErr = testutil.StartRedis(bin) })
	if redisErr != nil {
		t.Fatalf("starting redis-server: %v", redisErr)
	}
	return redisSrv
}

// exampleRedis returns the shared server for an example (TestMain leaves the examples out when
// redis-server is not installed).
func exampleRedis() *testutil.RedisServer {
	redisOnce.Do(func() {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			redisErr = err
			return
		}
		redisSrv, redisErr = testutil.StartRedis(bin)
	})
	if redisErr != nil {
		log.Fatalf("starting redis-server: %v", redisErr)
	}
	return redisSrv
}

// ownRedis starts a server for this test alone (tests that stop and restart it).
func ownRedis(t testing.TB) *testutil.RedisServer {
	t.Helper()
	if len(clusterSeeds) > 0 {
		t.Skip("stops its own redis-server: not on a shared Redis Cluster")
	}
	bin := testutil.NeedBinary(t, "redis-server", "redis-server")
	srv, err := testutil.StartRedis(bin)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns a client of srv (of the Redis Cluster, for onCluster), closed with the test.
func newClient(t testing.TB, srv *testutil.RedisServer) redis.UniversalClient {
	t.Helper()
	var rdb redis.UniversalClient
	var err error
	if srv == onCluster {
		rdb, err = redisstore.NewClusterClient(clusterSeeds...)
	} else {
		rdb, err = redisstore.NewClient(srv.URL())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// testPrefix returns a key prefix no other test uses (nor an earlier run on the same Redis
// Cluster: the process id is part of it).
func testPrefix() string {
	return "t" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(prefixes.Add(1), 10) + ":"
}

// newRouter returns a router on srv under prefix, closed with the test. Its lease lasts an hour,
// so that no renewal falls in a test's count of round trips (the lease's own tests use shorter).
func newRouter(t testing.TB, srv *testutil.RedisServer, prefix string) *redisstore.Router {
	t.Helper()
	nop := quietLogger()
	r := redisstore.NewRouter(newClient(t, srv), redisstore.Options{Prefix: prefix, Logger: &nop, LeaseTTL: time.Hour})
	t.Cleanup(func() { _ = r.Close() })
	return r
}
