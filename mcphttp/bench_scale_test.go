package mcphttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// clientsEnv tells the test binary it runs as the client process of BenchmarkListen10000: the
// server's address and the number of streams to open.
const clientsEnv = "MCPKIT_BENCH_LISTEN_CLIENTS"

// scaleStreams is how many listen streams BenchmarkListen10000 holds open on one server.
const scaleStreams = 10000

// BenchmarkListen10000 holds 10,000 listen streams open on one server process and publishes
// changes to all of them. The clients run in a child process (this test binary again, as
// TestListenClientsProcess), so the server process needs one file per stream, not two; both
// raise their open-file limit for themselves, and the benchmark is skipped, saying why, where the
// hard limit is too low. It reports what the open streams cost the server (B/stream, heapB/stream,
// stackB/stream, goroutines/stream), open-ms (the time to open all of them, 16 at a time), and
// per change the time from publish until the last client read it (ns/op), publish-ns and the
// server's cpu-ns. It stops by itself: the streams close with the benchmark, and the child
// exits when its input closes.
func BenchmarkListen10000(b *testing.B) {
	const n = scaleStreams
	if err := raiseFDLimit(n + 256); err != nil {
		b.Skipf("%d listen streams on one process: %v", n, err)
	}
	s := newServer(newTools())
	h := mcphttp.New(s, benchListen(n, 0)) // the default keepalive, swept by one timer
	srv := httptest.NewServer(h)
	addr := srv.Listener.Addr().String()

	toChildR, toChildW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	fromChildR, fromChildW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestListenClientsProcess$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), clientsEnv+"="+addr+" "+strconv.Itoa(n))
	cmd.ExtraFiles = []*os.File{fromChildW, toChildR} // fd 3: the child reports; fd 4: it is told
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr

	heap0, stack0 := heapAndStacks()
	g0 := runtime.NumGoroutine()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	fromChildW.Close()
	toChildR.Close()
	// Cleanups run last first: the endpoint ends the streams gracefully while the child still
	// reads them, the server closes the connections, then the child is told to exit.
	b.Cleanup(func() {
		toChildW.Close()
		_ = cmd.Wait()
		fromChildR.Close()
	})
	b.Cleanup(srv.Close)
	b.Cleanup(func() { _ = h.Close() })

	report := bufio.NewReader(fromChildR)
	if line, err := report.ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("the client process did not open its streams: %q %v", line, err)
	}
	opened := time.Since(t0)
	heap1, stack1 := heapAndStacks()
	g1 := runtime.NumGoroutine()
	if l := h.Listeners().Len(); l != n {
		b.Fatalf("%d streams open, want %d", l, n)
	}

	var took time.Duration
	step := func(want byte) {
		if c, err := report.ReadByte(); err != nil || c != want {
			b.Fatalf("the client process said %q (%v), want %q", c, err, want)
		}
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		if _, err := toChildW.Write([]byte{'g'}); err != nil {
			b.Fatal(err)
		}
		step('a') // armed: it counts from here
		t := time.Now()
		_ = s.NotifyToolsListChanged(context.Background())
		took += time.Since(t)
		step('d') // every client read the change
	}
	b.StopTimer()
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "publish-ns")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns")
	// Reported last: ResetTimer drops the metrics reported before it.
	b.ReportMetric(float64(int64(heap1+stack1)-int64(heap0+stack0))/n, "B/stream")
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/n, "heapB/stream")
	b.ReportMetric(float64(int64(stack1)-int64(stack0))/n, "stackB/stream")
	b.ReportMetric(float64(g1-g0)/n, "goroutines/stream")
	b.ReportMetric(float64(opened.Milliseconds()), "open-ms")
}

// TestListenClientsProcess is the client side of BenchmarkListen10000, in a process of its own;
// run any other way it skips. It opens the streams it is told to, 16 at a time, says "ready" on
// fd 3, then for each byte on fd 4 answers 'a' and, once every stream read the next change, 'd'.
// It exits when fd 4 closes.
func TestListenClientsProcess(t *testing.T) {
	spec := os.Getenv(clientsEnv)
	if spec == "" {
		t.Skip("the client process of BenchmarkListen10000: it runs only when the benchmark starts it")
	}
	var addr string
	var n int
	if _, err := fmt.Sscan(spec, &addr, &n); err != nil {
		t.Fatalf("%s=%q: %v", clientsEnv, spec, err)
	}
	if err := raiseFDLimit(uint64(n) + 256); err != nil {
		t.Fatal(err)
	}
	report, orders := os.NewFile(3, "report"), os.NewFile(4, "orders")
	conns := make([]net.Conn, n)
	readers := make([]*bufio.Reader, n)
	var next atomic.Int64
	errs := make(chan error, 16)
	var dialers sync.WaitGroup
	for range 16 {
		dialers.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				var err error
				if conns[i], readers[i], err = dialListen(addr, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	dialers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var got sync.WaitGroup
	fanoutClients(conns, readers, &got)
	if _, err := io.WriteString(report, "ready\n"); err != nil {
		t.Fatal(err)
	}
	in := bufio.NewReader(orders)
	for {
		if _, err := in.ReadByte(); err != nil {
			return // the benchmark is over
		}
		got.Add(n)
		if _, err := report.Write([]byte{'a'}); err != nil {
			t.Fatal(err)
		}
		got.Wait()
		if _, err := report.Write([]byte{'d'}); err != nil {
			t.Fatal(err)
		}
	}
}
