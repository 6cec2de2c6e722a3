// Command stress runs a bounded load and fault run against the conformance fixture
// (examples/everything) on loopback and prints what it measured: a session flood past the
// per-caller and global caps, stalled readers while changes are broadcast, a disconnect storm,
// a table of hostile requests and a task flood from one caller; then two replicas on one
// redis-server, one of them killed (SIGKILL) with a task running, a task waiting for input and a
// legacy request in flight, which the other must fail, refuse and end. It fails (exit 1) on a
// leak of goroutines or heap, a 5xx other than 503, a fixture that died (a panic), a request that
// hung, or a dead replica's work left waiting.
//
//	go build -o bin/everything ./examples/everything
//	go run ./internal/stress -fixture bin/everything [-short]
//
// make stress runs it at full size; CI runs -short.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sizes of one run.
type sizes struct {
	flood, floodWorkers int // initializes sent in the session flood, and how many at once
	stalled             int // legacy GET streams that never read
	broadcasts          int // tool-list changes published while they stall
	probes              int // timed tools/call on a healthy session, before and during the stall
	storm               int // clients that open a stream and drop it
	tasks, taskWorkers  int // task-augmented calls in the task flood, and how many at once
	lease               time.Duration
}

var (
	full = sizes{flood: 12000, floodWorkers: 64, stalled: 100, broadcasts: 1000, probes: 300, storm: 1000,
		tasks: 12000, taskWorkers: 32, lease: 15 * time.Second}
	short = sizes{flood: 1500, floodWorkers: 32, stalled: 20, broadcasts: 200, probes: 100, storm: 200,
		tasks: 1500, taskWorkers: 16, lease: time.Second}
)

// requestTimeout bounds every request: an answer that takes longer is a hang.
const requestTimeout = 10 * time.Second

func main() {
	fixture := flag.String("fixture", "bin/everything", "the fixture binary (examples/everything)")
	isShort := flag.Bool("short", false, "a smaller run (CI)")
	flag.Parse()
	sz := full
	if *isShort {
		sz = short
	}
	r, err := run(*fixture, sz)
	if r != nil {
		r.print()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stress: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("stress: PASS")
}

type stats struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heapAlloc"`
}

type report struct {
	before, after stats
	peak          stats
	statuses      sync.Map // phase + " " + status -> *atomic.Int64
	p50, p99      [2]time.Duration
	figures       []string // lines of the task flood and the replica kill
}

func (r *report) note(format string, args ...any) {
	r.figures = append(r.figures, fmt.Sprintf(format, args...))
}

func (r *report) count(phase string, status int) {
	v, _ := r.statuses.LoadOrStore(phase+" "+strconv.Itoa(status), new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (r *report) print() {
	fmt.Printf("fixture goroutines: %d before, %d at the peak, %d after\n", r.before.Goroutines, r.peak.Goroutines, r.after.Goroutines)
	fmt.Printf("fixture heap (after GC): %.1f MiB before, %.1f MiB at the peak, %.1f MiB after\n",
		mib(r.before.HeapAlloc), mib(r.peak.HeapAlloc), mib(r.after.HeapAlloc))
	if r.after == (stats{}) {
		fmt.Println("(no figures after: the run stopped early)")
	}
	if r.p99[0] > 0 {
		fmt.Printf("tools/call latency, calm: p50 %v p99 %v; with stalled readers and broadcasts: p50 %v p99 %v (p99 ratio %.2f)\n",
			r.p50[0], r.p99[0], r.p50[1], r.p99[1], float64(r.p99[1])/float64(r.p99[0]))
	}
	for _, f := range r.figures {
		fmt.Println(f)
	}
	var keys []string
	r.statuses.Range(func(k, _ any) bool { keys = append(keys, k.(string)); return true })
	slices.Sort(keys)
	fmt.Println("answers by phase and status:")
	for _, k := range keys {
		v, _ := r.statuses.Load(k)
		fmt.Printf("  %-28s %d\n", k, v.(*atomic.Int64).Load())
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// target is the running fixture.
type target struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
	addr string
	exit chan error
	hc   *http.Client
}

func start(bin string, args ...string) (*target, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"-http", addr, "-stats"}, args...)...)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &target{cmd: cmd, base: "http://" + addr, addr: addr, exit: make(chan error, 1),
		hc: &http.Client{Timeout: requestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	go func() { t.exit <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := t.stats(); err == nil {
			return t, nil
		}
		select {
		case err := <-t.exit:
			return nil, fmt.Errorf("the fixture exited before answering: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			t.stop()
			return nil, errors.New("the fixture did not answer within 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports an error when the fixture died (a panic ends the process).
func (t *target) alive() error {
	select {
	case err := <-t.exit:
		t.exit <- err
		return fmt.Errorf("the fixture died: %w", err)
	default:
		return nil
	}
}

func (t *target) stop() {
	if t.alive() != nil {
		return
	}
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-t.exit:
		if err != nil {
			fmt.Fprintln(os.Stderr, "stress: the fixture did not exit cleanly on SIGTERM:", err)
		}
	case <-time.After(10 * time.Second):
		fmt.Fprintln(os.Stderr, "stress: the fixture ignored SIGTERM for 10 s; killing it")
		_ = t.cmd.Process.Kill()
		fmt.Fprintln(os.Stderr, "stress: the fixture ended:", <-t.exit)
	}
}

func (t *target) stats() (stats, error) {
	var s stats
	resp, err := t.hc.Get(t.base + "/debug/stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return s, fmt.Errorf("stats: %d (is -stats supported?)", resp.StatusCode)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stress","version":"1"}}}`

// post sends one legacy POST and returns the status, the session id header and the body.
func (t *target) post(ctx context.Context, session, body string) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b, err
}

// session initializes one legacy session.
func (t *target) session(ctx context.Context) (string, error) {
	st, id, body, err := t.post(ctx, "", initBody)
	if err != nil || st != 200 || id == "" {
		return "", fmt.Errorf("initialize: %d %w %s", st, err, body)
	}
	if st, _, _, err := t.post(ctx, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || st != 202 {
		return "", fmt.Errorf("initialized: %d %w", st, err)
	}
	return id, nil
}

func (t *target) delete(ctx context.Context, id string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, t.base+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := t.hc.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// check fails on statuses a hostile client must never cause.
func check(phase string, status int) error {
	if status >= 500 && status != http.StatusServiceUnavailable {
		return fmt.Errorf("%s: answered %d", phase, status)
	}
	return nil
}

func run(bin string, sz sizes) (*report, error) {
	t, err := start(bin)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	r := &report{}
	if r.before, err = t.stats(); err != nil {
		return r, err
	}
	r.peak = r.before
	for _, phase := range []struct {
		name string
		fn   func(*target, *report, sizes) error
	}{
		{"flood", flood},
		{"stall", stall},
		{"storm", storm},
		{"hostile", hostile},
		{"tasks", taskFlood},
	} {
		start := time.Now()
		if err := phase.fn(t, r, sz); err != nil {
			return r, fmt.Errorf("%s: %w", phase.name, err)
		}
		if err := t.alive(); err != nil {
			return r, err
		}
		if s, err := t.stats(); err == nil {
			r.peak.Goroutines = max(r.peak.Goroutines, s.Goroutines)
			r.peak.HeapAlloc = max(r.peak.HeapAlloc, s.HeapAlloc)
		}
		fmt.Printf("phase %-8s %v\n", phase.name, time.Since(start).Round(time.Millisecond))
	}
	if err := settle(t, r); err != nil {
		return r, err
	}
	start := time.Now()
	if err := replicaKill(bin, r, sz); err != nil {
		return r, fmt.Errorf("replica kill: %w", err)
	}
	fmt.Printf("phase %-8s %v\n", "kill", time.Since(start).Round(time.Millisecond))
	return r, nil
}

// freeAddr returns a loopback address no one listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr, nil
}

// settle waits for the fixture to come back to its starting point once every client left:
// goroutines within a small margin, heap within a small factor.
func settle(t *target, r *report) error {
	t.hc.CloseIdleConnections()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := t.stats()
		if err != nil {
			return err
		}
		r.after = s
		leakG := s.Goroutines > r.before.Goroutines+10
		leakH := s.HeapAlloc > 2*r.before.HeapAlloc+16<<20
		if !leakG && !leakH {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("leak: %d goroutines (%d before), %.1f MiB heap (%.1f before) 20 s after the run",
				s.Goroutines, r.before.Goroutines, mib(s.HeapAlloc), mib(r.before.HeapAlloc))
		}
		t.hc.CloseIdleConnections()
		time.Sleep(250 * time.Millisecond)
	}
}

// flood initializes sessions from one address as fast as it can, past the per-caller cap, and
// deletes the ones it got.
func flood(t *target, r *report, sz sizes) error {
	var next atomic.Int64
	var mu sync.Mutex
	var got []string
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range sz.floodWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(sz.flood) {
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				st, id, _, err := t.post(ctx, "", initBody)
				cancel()
				if err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("initialize: %w", err))
					return
				}
				r.count("flood", st)
				if err := check("initialize", st); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if id != "" {
					mu.Lock()
					got = append(got, id)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if s, err := t.stats(); err == nil {
		r.peak.Goroutines = max(r.peak.Goroutines, s.Goroutines)
		r.peak.HeapAlloc = max(r.peak.HeapAlloc, s.HeapAlloc)
	}
	if v := firstErr.Load(); v != nil {
		return v.(error)
	}
	var dw sync.WaitGroup
	ids := make(chan string)
	for range sz.floodWorkers {
		dw.Go(func() {
			for id := range ids {
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				t.delete(ctx, id)
				cancel()
			}
		})
	}
	for _, id := range got {
		ids <- id
	}
	close(ids)
	dw.Wait()
	return nil
}

// stalledGET opens a legacy GET stream on a raw connection with a small receive buffer and
// never reads it.
func stalledGET(t *target, session string) (net.Conn, error) {
	d := net.Dialer{Timeout: requestTimeout, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", t.addr)
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n", t.addr, session)
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(requestTimeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, " 200 ") {
		c.Close()
		return nil, fmt.Errorf("GET stream: %q %w", line, err)
	}
	return c, nil // never read again
}

func (t *target) callTool(ctx context.Context, session, name string) (int, error) {
	st, _, body, err := t.post(ctx, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
	if err == nil && st == 200 && !bytes.Contains(body, []byte(`"result"`)) {
		return st, fmt.Errorf("tools/call %s: no result in %q", name, body)
	}
	return st, err
}

// probe times tools/call on a healthy session.
func probe(t *target, r *report, session string, n int) ([]time.Duration, error) {
	var d []time.Duration
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		t0 := time.Now()
		st, err := t.callTool(ctx, session, "test_simple_text")
		cancel()
		if err != nil {
			return nil, err
		}
		r.count("probe", st)
		if st != 200 {
			return nil, fmt.Errorf("probe answered %d", st)
		}
		d = append(d, time.Since(t0))
	}
	slices.Sort(d)
	return d, nil
}

func pct(d []time.Duration, p float64) time.Duration { return d[int(float64(len(d)-1)*p)] }
