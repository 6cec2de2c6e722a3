package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// modernMeta is the _meta envelope of the run's 2026-07-28 requests: the tasks extension and
// elicitation declared.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"stress","version":"1"}}`

// modern sends one 2026-07-28 request (params without their _meta; name is the Mcp-Name
// mirror) and returns the status and the body.
func (t *target) modern(ctx context.Context, id int, method, name, params string) (int, []byte, error) {
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":{` + params + `,` + modernMeta + `}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// answer is what the run reads of a JSON-RPC response (a JSON body, or the last data line of an
// SSE body).
type answer struct {
	Result map[string]any `json:"result"`
	Error  *struct {
		Code int64  `json:"code"`
		Data string `json:"data"`
	} `json:"error"`
}

func decodeAnswer(body []byte) (answer, error) {
	var a answer
	if i := bytes.LastIndex(body, []byte("data: ")); i >= 0 {
		body = body[i+len("data: "):]
	}
	err := json.Unmarshal(bytes.TrimSpace(body), &a)
	return a, err
}

// createTask calls a task-augmented tool and returns the task id.
func (t *target) createTask(ctx context.Context, tool, args string) (string, error) {
	st, body, err := t.modern(ctx, 1, "tools/call", tool, `"name":"`+tool+`","arguments":`+args)
	if err != nil || st != 200 {
		return "", fmt.Errorf("tools/call %s: %d %w %.200s", tool, st, err, body)
	}
	a, err := decodeAnswer(body)
	id, _ := a.Result["taskId"].(string)
	if err != nil || id == "" {
		return "", fmt.Errorf("tools/call %s: no task in %.200s", tool, body)
	}
	return id, nil
}

// getTask reads a task with tasks/get.
func (t *target) getTask(ctx context.Context, id string) (map[string]any, error) {
	st, body, err := t.modern(ctx, 2, "tasks/get", id, `"taskId":"`+id+`"`)
	if err != nil || st != 200 {
		return nil, fmt.Errorf("tasks/get: %d %w %.200s", st, err, body)
	}
	a, err := decodeAnswer(body)
	if err != nil || a.Result == nil {
		return nil, fmt.Errorf("tasks/get: %.200s", body)
	}
	return a.Result, nil
}

// taskFlood has one caller make task-augmented calls of a quick tool as fast as it can, far past
// its share of tasks: every call must get a task (its oldest finished tasks evicted to make
// room) or, while all of its share still runs, -32603 "Server busy"; never another error, and the
// caller is never locked out (its last call gets a task).
func taskFlood(t *target, r *report, sz sizes) error {
	var next, created, busy atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	started := time.Now()
	for range sz.taskWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(sz.tasks) {
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				st, body, err := t.modern(ctx, 1, "tools/call", "slow_compute", `"name":"slow_compute","arguments":{"seconds":0}`)
				cancel()
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				r.count("tasks", st)
				a, derr := decodeAnswer(body)
				switch {
				case st == 200 && derr == nil && a.Result["resultType"] == "task":
					created.Add(1)
				case st == 200 && derr == nil && a.Error != nil && strings.Contains(a.Error.Data, "Server busy"):
					busy.Add(1)
				default:
					firstErr.CompareAndSwap(nil, fmt.Errorf("task call answered %d %.200s", st, body))
					return
				}
			}
		})
	}
	wg.Wait()
	if v := firstErr.Load(); v != nil {
		return v.(error)
	}
	elapsed := time.Since(started)
	if _, err := t.createTask(context.Background(), "slow_compute", `{"seconds":0}`); err != nil {
		return fmt.Errorf("the flooding caller is locked out afterwards: %w", err)
	}
	r.note("task flood: %d task calls from one caller in %v: %d tasks, %d busy; a call after it still gets a task",
		sz.tasks, elapsed.Round(time.Millisecond), created.Load(), busy.Load())
	return nil
}

// redisProc is a redis-server the run started.
type redisProc struct {
	cmd  *exec.Cmd
	addr string
}

func startRedis() (*redisProc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &redisProc{cmd: cmd, addr: addr}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_, _ = io.WriteString(c, "PING\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "+PONG") {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, errors.New("redis-server did not answer within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *redisProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// replicaKill runs two replicas on one redis-server, kills one with SIGKILL while it runs a
// task, holds a task waiting for input and a legacy request in flight, and checks what the
// survivor makes of them: the input answers are refused, the resumed request stream ends with a
// JSON-RPC error for its request, and both tasks become failed, within a bound of the lease.
func replicaKill(bin string, r *report, sz sizes) error {
	rp, err := startRedis()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			r.note("replica kill: skipped (no redis-server)")
			return nil
		}
		return err
	}
	defer rp.stop()
	args := []string{"-redis", "redis://" + rp.addr + "/0", "-state-key", strings.Repeat("ab", 32), "-lease-ttl", sz.lease.String()}
	a, err := start(bin, args...)
	if err != nil {
		return err
	}
	defer a.stop()
	b, err := start(bin, args...)
	if err != nil {
		return err
	}
	defer b.stop()
	ctx := context.Background()
	slow, err := a.createTask(ctx, "slow_compute", `{"seconds":600}`)
	if err != nil {
		return err
	}
	asking, err := a.createTask(ctx, "confirm_delete", `{"filename":"f.txt"}`)
	if err != nil {
		return err
	}
	key, err := b.inputKey(ctx, asking)
	if err != nil {
		return err
	}
	inflight, err := a.inFlight(ctx)
	if err != nil {
		return err
	}
	defer inflight.close()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	if err := <-a.exit; err == nil {
		return errors.New("the killed replica exited cleanly")
	}
	a.exit <- errors.New("killed") // a.stop has nothing left to stop
	killed := time.Now()
	bound := 2*sz.lease + 10*time.Second

	if err := b.refusedUpdate(ctx, asking, key); err != nil {
		return err
	}
	got, err := b.resumeDead(inflight, bound)
	if err != nil {
		return err
	}
	r.note("replica kill: the resumed request stream ended after %v with %s", time.Since(killed).Round(time.Millisecond), got)
	for _, id := range []string{slow, asking} {
		if err := b.awaitFailed(ctx, id, killed.Add(bound)); err != nil {
			return err
		}
	}
	r.note("replica kill: both tasks of the killed replica failed %v after the SIGKILL (lease %v); the answer to the one asking for input was refused",
		time.Since(killed).Round(time.Millisecond), sz.lease)
	return b.alive()
}

// inputKey waits until a task asks for input and returns the key of its request.
func (t *target) inputKey(ctx context.Context, id string) (string, error) {
	for deadline := time.Now().Add(requestTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		g, err := t.getTask(ctx, id)
		if err != nil {
			return "", err
		}
		reqs, _ := g["inputRequests"].(map[string]any)
		for k := range reqs {
			return k, nil
		}
	}
	return "", fmt.Errorf("task %s never asked for input", id)
}

// refusedUpdate answers a dead replica's task's input request and wants it refused (-32603).
func (t *target) refusedUpdate(ctx context.Context, id, key string) error {
	st, body, err := t.modern(ctx, 3, "tasks/update", id, `"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept","content":{"confirm":true}}}`)
	if err != nil || st != 200 {
		return fmt.Errorf("tasks/update: %d %w", st, err)
	}
	if a, err := decodeAnswer(body); err != nil || a.Error == nil || a.Error.Code != -32603 {
		return fmt.Errorf("tasks/update to a dead replica's task answered %.300s, want -32603", body)
	}
	return nil
}

// awaitFailed polls tasks/get until the task is failed, by the deadline.
func (t *target) awaitFailed(ctx context.Context, id string, deadline time.Time) error {
	for {
		g, err := t.getTask(ctx, id)
		if err != nil {
			return err
		}
		if g["status"] == "failed" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("task %s of the killed replica is still %v", id, g["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inflight is a legacy request running on a replica, on a resumable stream.
type inflight struct {
	session, lastID string
	conn            net.Conn
}

func (f *inflight) close() { f.conn.Close() }

// inFlight opens a legacy session and starts a long request on a resumable stream, reading up to
// its priming event.
func (t *target) inFlight(ctx context.Context) (*inflight, error) {
	session, err := t.session(ctx)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", t.addr, requestTimeout)
	if err != nil {
		return nil, err
	}
	body := `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"interop_slow","arguments":{"seconds":120}}}`
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
		t.addr, session, len(body), body)
	_ = c.SetReadDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("the in-flight request's priming event: %w", err)
		}
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "id:"); ok {
			return &inflight{session: session, lastID: strings.TrimSpace(id), conn: c}, nil
		}
	}
}

// resumeDead resumes the in-flight request of the killed replica here and returns the last
// message of the stream, which must be a JSON-RPC error for the request.
func (t *target) resumeDead(f *inflight, bound time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", f.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", f.lastID)
	hc := &http.Client{} // no timeout of its own: ctx bounds it
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("GET with Last-Event-ID: %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("the resumed stream of the killed replica did not end within %v: %w", bound, err)
	}
	var last string
	for _, line := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			last = d
		}
	}
	if !strings.Contains(last, `"id":77`) || !strings.Contains(last, `"error"`) {
		return "", fmt.Errorf("the resumed stream ended with %q, want a JSON-RPC error for request 77", last)
	}
	return last, nil
}
