package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

// The failover scenario runs when the script sets MCPKIT_FAILOVER ("cluster" or "sentinel"):
// MCPKIT_REDIS_CLUSTER names the Cluster's seed nodes, MCPKIT_REDIS_SENTINEL the Sentinels
// (MASTER@ADDR,...), MCPKIT_REDIS_PIDS the PID of each Redis server ("port:pid ..."), and
// MCPKIT_FAILOVER_REPORT a file the figures are appended to.

// failoverSessions is how many sessions carry traffic through the failover.
const failoverSessions = 12

// outcome tallies the answers of the traffic during a failover.
type outcome struct {
	mu       sync.Mutex
	ok       int
	refused  int            // 503 with a JSON-RPC error body
	lost     map[string]int // 404: the session is gone
	bad      []string       // anything else: a 5xx without a JSON-RPC body, a transport error
	lastFail time.Time
	// lastRefusal is the last 503 and when it came, for the log.
	lastRefusal string
}

func (o *outcome) record(id string, status int, body []byte, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil:
		o.bad = append(o.bad, err.Error())
	case status == http.StatusOK:
		o.ok++
		return
	case status == http.StatusServiceUnavailable && jsonRPCError(body):
		o.refused++
		o.lastRefusal = fmt.Sprintf("%s %.200s", time.Now().Format("15:04:05.000"), body)
	case status == http.StatusNotFound && jsonRPCError(body):
		o.lost[id]++
	default:
		o.bad = append(o.bad, fmt.Sprintf("%d %.200s", status, body))
	}
	o.lastFail = time.Now()
}

// jsonRPCError reports whether body is a JSON-RPC error response.
func jsonRPCError(body []byte) bool {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Error   json.RawMessage `json:"error"`
	}
	return json.Unmarshal(body, &m) == nil && m.JSONRPC == "2.0" && len(m.Error) > 0
}

// call sends one tools/call of a session through the proxy and records the answer.
func call(ctx context.Context, c *testutil.Client, id int, o *outcome) {
	req := c.NewPost(ctx, testutil.CallTool(id, "test_simple_text", map[string]any{}, nil))
	resp, err := httpClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			o.record(c.SessionID, 0, nil, err)
		}
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil && ctx.Err() != nil {
		return
	}
	o.record(c.SessionID, resp.StatusCode, body, err)
}

// victim finds the Redis primary that holds the first session's record and its PID.
func victim(t *testing.T, mode, sessionID string) (addr string, pid int) {
	t.Helper()
	addr, err := primaryOf(mode, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	for _, pp := range strings.Fields(os.Getenv("MCPKIT_REDIS_PIDS")) {
		p, id, _ := strings.Cut(pp, ":")
		if p == port {
			pid, _ = strconv.Atoi(id)
		}
	}
	if pid == 0 {
		t.Fatalf("no PID for the primary %s in MCPKIT_REDIS_PIDS", addr)
	}
	return addr, pid
}

// primaryOf asks Redis which primary holds the session's record now (the Cluster, or Sentinel).
func primaryOf(mode, sessionID string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch mode {
	case "cluster":
		cc, err := redisstore.NewClusterClient(redisstore.SplitAddrs(os.Getenv("MCPKIT_REDIS_CLUSTER"))...)
		if err != nil {
			return "", err
		}
		defer cc.Close()
		primary, err := cc.MasterForKey(ctx, redisstore.DefaultPrefix+"s:{"+sessionID+"}")
		if err != nil {
			return "", fmt.Errorf("the primary of the session: %w", err)
		}
		return primary.Options().Addr, nil
	case "sentinel":
		master, sentinels, err := redisstore.ParseSentinel(os.Getenv("MCPKIT_REDIS_SENTINEL"))
		if err != nil {
			return "", err
		}
		sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
		defer sc.Close()
		hp, err := sc.GetMasterAddrByName(ctx, master).Result()
		if err != nil {
			return "", fmt.Errorf("asking Sentinel for the primary: %w", err)
		}
		return net.JoinHostPort(hp[0], hp[1]), nil
	}
	return "", fmt.Errorf("MCPKIT_FAILOVER=%q, want cluster or sentinel", mode)
}

// TestFailover: traffic on a dozen sessions runs through the proxy while the Redis primary that
// holds some of them is killed. Until the promotion, requests get 503 with a JSON-RPC body (never
// another 5xx, never a dropped connection); afterwards the same sessions, their subscriptions,
// a GET stream, a listen stream and a task work again without starting over. The window and
// what was lost in it are logged and appended to MCPKIT_FAILOVER_REPORT.
func TestFailover(t *testing.T) {
	mode := os.Getenv("MCPKIT_FAILOVER")
	if mode == "" {
		t.Skip("run by scripts/cluster.sh (make cluster-test) on a Redis Cluster or Sentinel setup")
	}
	c := setup(t)
	sessions := make([]*testutil.Client, failoverSessions)
	for i := range sessions {
		sessions[i] = initialize(t, c.proxy)
	}
	// Before: a subscription and a GET stream on replica 1, a listen stream on replica 2, a
	// task created on replica 3.
	s0 := as(sessions[0], c.replicas[0])
	if w := s0.Call(t, 1, "resources/subscribe", map[string]any{"uri": "test://watched-resource"}); w.Error != nil {
		t.Fatalf("resources/subscribe: %+v", w.Error)
	}
	get := s0.Open(t, s0.NewRequest(context.Background(), http.MethodGet))
	defer get.Body.Close()
	getEvents := testutil.NewSSEReader(get.Body)
	l := testutil.NewClient(c.replicas[1], httpClient)
	listen := l.Open(t, l.NewModernPost(context.Background(), testutil.ModernRequest(1, "subscriptions/listen",
		map[string]any{"notifications": map[string]any{"toolsListChanged": true}})))
	defer listen.Body.Close()
	listenEvents := testutil.NewSSEReader(listen.Body)
	if ack := testutil.DecodeWire(t, []byte(next(t, listenEvents).Data)); ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen began with %s", ack.Method)
	}
	taskID := createTask(t, c.replicas[2])

	addr, pid := victim(t, mode, sessions[0].SessionID)
	o := &outcome{lost: map[string]int{}}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				s := sessions[(n*3+w)%len(sessions)]
				call(ctx, as(s, c.proxy), 1000+n, o)
			}
		}()
	}
	time.Sleep(time.Second) // traffic before the kill
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the primary %s (pid %d): %v", addr, pid, err)
	}
	// Recovered: two seconds of traffic without a failure, within a minute. A failover can also
	// cost no request at all (the replicas' connections move to the promoted primary between two
	// requests): then the session's record is on another primary and ten seconds passed without
	// a failure.
	deadline := killed.Add(time.Minute)
	for {
		time.Sleep(200 * time.Millisecond)
		o.mu.Lock()
		last := o.lastFail
		o.mu.Unlock()
		if last.After(killed) && time.Since(last) > 2*time.Second {
			break
		}
		if !last.After(killed) && time.Since(killed) > 10*time.Second {
			if now, err := primaryOf(mode, sessions[0].SessionID); err == nil && now != addr {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			wg.Wait()
			t.Fatalf("no recovery within a minute of killing %s: %d ok, %d refused with 503, lost %v, other %q",
				addr, o.ok, o.refused, o.lost, head(o.bad))
		}
	}
	stop()
	wg.Wait()
	var window time.Duration // none when nothing failed after the kill
	if o.lastFail.After(killed) {
		window = o.lastFail.Sub(killed)
	}
	report := fmt.Sprintf("%s: killed the primary %s; failures for %.1f s after the kill: %d requests refused with 503 (JSON-RPC body), %d answered, %d sessions of %d lost, %d other failures",
		mode, addr, window.Seconds(), o.refused, o.ok, len(o.lost), len(sessions), len(o.bad))
	t.Log(report)
	t.Logf("killed at %s; the last refusal: %s", killed.Format("15:04:05.000"), o.lastRefusal)
	if f := os.Getenv("MCPKIT_FAILOVER_REPORT"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, report)
			fh.Close()
		}
	}
	if len(o.bad) > 0 {
		t.Errorf("answers other than 200 and a JSON-RPC 503 during the failover: %q", head(o.bad))
	}
	if o.refused == 0 && o.ok == 0 {
		t.Fatal("no traffic went through")
	}

	// After: every session answers, the subscription and both streams get what is sent after
	// the promotion, and the task finishes and reads back.
	for i, s := range sessions {
		if _, gone := o.lost[s.SessionID]; gone {
			continue
		}
		if w := as(s, c.proxy).Call(t, 5000+i, "tools/call", map[string]any{"name": "test_simple_text"}); w.Error != nil {
			t.Errorf("session %d after the failover: %+v", i, w.Error)
		}
	}
	p := as(sessions[1], c.proxy)
	if w := p.Call(t, 6000, "tools/call", map[string]any{"name": "interop_trigger_resource_updated"}); w.Error != nil {
		t.Fatalf("triggering a resource update: %+v", w.Error)
	}
	if ev := next(t, getEvents); !strings.Contains(ev.Data, "notifications/resources/updated") {
		t.Fatalf("the GET stream of the subscribed session got %s", ev.Data)
	}
	if w := p.Call(t, 6001, "tools/call", map[string]any{"name": "test_trigger_tool_change"}); w.Error != nil {
		t.Fatalf("triggering a tools change: %+v", w.Error)
	}
	if ev := next(t, listenEvents); !strings.Contains(ev.Data, "notifications/tools/list_changed") {
		t.Fatalf("the listen stream got %s", ev.Data)
	}
	waitTask(t, c.proxy, taskID)
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

// taskCall sends a 2026-07-28 request declaring the tasks extension and returns its result.
func taskCall(t *testing.T, url, method string, params map[string]any) map[string]any {
	t.Helper()
	params["_meta"] = testutil.Envelope(testutil.ModernVersion, map[string]any{
		"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}})
	c := testutil.NewClient(url, httpClient)
	w := c.Do(t, c.NewModernPost(context.Background(), testutil.ModernRequest(1, method, params))).Message(t)
	if w.Error != nil {
		t.Fatalf("%s at %s: %d %s", method, url, w.Error.Code, w.Error.Message)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// createTask starts a task that finishes after the failover (an outcome recorded while the
// primary is down is lost: the task would stay working until its TTL).
func createTask(t *testing.T, url string) string {
	t.Helper()
	m := taskCall(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 8, "label": "failover"}})
	id, _ := m["taskId"].(string)
	if m["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call slow_compute = %v", m)
	}
	return id
}

// waitTask polls tasks/get through url until the task completed.
func waitTask(t *testing.T, url, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		g := taskCall(t, url, "tasks/get", map[string]any{"taskId": id})
		if g["status"] == "completed" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task stayed %v after the failover", g["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}
