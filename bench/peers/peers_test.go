package peers_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/peers"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// One redis-server for the test binary, started by the first test or benchmark of mcpkit-redis
// and stopped by TestMain.
var (
	redisOnce sync.Once
	redisSrv  *testutil.RedisServer
	redisErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if redisSrv != nil {
		redisSrv.Close()
	}
	os.Exit(code)
}

// config returns the Config of impl: for mcpkit-redis, the URL of the shared redis-server
// (skipping, or failing under MCPKIT_REQUIRE_BINARIES, without redis-server).
func config(tb testing.TB, impl string) peers.Config {
	tb.Helper()
	if impl != "mcpkit-redis" {
		return peers.Config{}
	}
	bin := testutil.NeedBinary(tb, "redis-server", "redis-server")
	redisOnce.Do(func() { redisSrv, redisErr = testutil.StartRedis(bin) })
	if redisErr != nil {
		tb.Fatal(redisErr)
	}
	return peers.Config{RedisURL: redisSrv.URL()}
}

// TestEcho serves every implementation over loopback for every workload it supports and checks
// that a tools/call comes back with the echo, the way the load generator will send it; a
// 2026-07-28 answer must carry the resultType that lifecycle requires.
func TestEcho(t *testing.T) {
	for _, w := range peers.Workloads {
		for _, impl := range peers.Impls {
			if !peers.Supports(impl, w) {
				continue
			}
			t.Run(string(w)+"/"+impl, func(t *testing.T) {
				h, release, err := peers.Handler(impl, w, config(t, impl))
				if err != nil {
					t.Fatal(err)
				}
				defer release()
				srv := httptest.NewServer(h)
				defer srv.Close()
				hdr, err := peers.Open(t.Context(), srv.Client(), srv.URL, w)
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if err := peers.Check(t.Context(), srv.Client(), srv.URL, w, hdr); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
	if _, _, err := peers.Handler("mcpkit-redis", peers.Stateless, peers.Config{RedisURL: "redis://127.0.0.1:1/0"}); err == nil {
		t.Fatal("mcpkit-redis claims the stateless workload")
	}
	if _, _, err := peers.Handler("mcpkit-redis", peers.Session, peers.Config{}); err == nil {
		t.Fatal("mcpkit-redis serves without a Redis")
	}
}

// BenchmarkInProcess measures one tools/call per implementation and workload with the handler
// called directly (no network): the server's cost alone, ns, bytes and allocations per request.
// The harness (request and recorder reuse) allocates nothing per iteration beyond the body
// reader's NopCloser, the same for every implementation.
func BenchmarkInProcess(b *testing.B) {
	for _, w := range peers.Workloads {
		for _, impl := range peers.Impls {
			if !peers.Supports(impl, w) {
				continue
			}
			b.Run(string(w)+"/"+impl, func(b *testing.B) {
				h, release, err := peers.Handler(impl, w, config(b, impl))
				if err != nil {
					b.Fatal(err)
				}
				defer release()
				// The session (if any) is opened over loopback, then the calls go in process.
				srv := httptest.NewServer(h)
				hdr, err := peers.Open(context.Background(), srv.Client(), srv.URL, w)
				srv.Close()
				if err != nil {
					b.Fatal(err)
				}
				body := peers.Body(w)
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
				req.Header = hdr
				rd := strings.NewReader(body)
				rec := &recorder{h: http.Header{}}
				serve := func() {
					rec.reset()
					rd.Reset(body)
					req.Body = io.NopCloser(rd)
					req.ContentLength = int64(len(body))
					h.ServeHTTP(rec, req)
				}
				serve()
				if rec.status != http.StatusOK || !bytes.Contains(rec.buf.Bytes(), []byte(`"structuredContent":{"text":"hello"}`)) {
					b.Fatalf("tools/call: %d %s", rec.status, rec.buf.Bytes())
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					serve()
				}
			})
		}
	}
}

// recorder is a reusable ResponseWriter with Flush and write deadlines, like net/http's own.
type recorder struct {
	h      http.Header
	status int
	buf    bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.h }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.Write(p)
}

func (w *recorder) Flush() { w.WriteHeader(http.StatusOK) }

// SetWriteDeadline accepts deadlines as net/http's ResponseWriter does, so SSE writers take the
// path they take on a real connection.
func (w *recorder) SetWriteDeadline(time.Time) error { return nil }

// SetReadDeadline accepts read deadlines as net/http's ResponseWriter does (mcpkit bounds the
// body read with one): the error an unsupported call returns is not what is measured.
func (w *recorder) SetReadDeadline(time.Time) error { return nil }

func (w *recorder) reset() {
	clear(w.h)
	w.status = 0
	w.buf.Reset()
}
