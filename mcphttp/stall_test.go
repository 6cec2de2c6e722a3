package mcphttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/session"
)

// smallSendBuffers makes every accepted connection's kernel send buffer small, so that a client
// that stops reading stalls the server's writes after a few kilobytes instead of megabytes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// stalledGET opens the GET stream of a session on a raw connection, reads the response head (so
// the stream is known to be open) and never reads again.
func stalledGET(t *testing.T, addr, sessionID string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(8 << 10)
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", addr, sessionID)
	_ = conn.SetReadDeadline(time.Now().Add(bound))
	head, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), nil)
	if err != nil {
		t.Fatal(err)
	}
	if head.StatusCode != http.StatusOK || head.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %q", head.StatusCode, head.Header.Get("Content-Type"))
	}
	return conn
}

// A client that opens its GET stream and then stops reading must not hold up anyone else: not
// the senders on its own session-level path, not broadcasts, not initialize, not other sessions'
// requests, not the reaper (even when it reaps a stalled session). Only that stream's own writer
// waits, for at most WriteTimeout, and then lets the stream go.
func TestStalledReaderDelaysNobody(t *testing.T) {
	// An operation held up by a's stuck writer would wait for its write deadline: the rest of
	// writeTimeout, at least writeTimeout/2 while the loop below runs. fast sits below that
	// and well above what an operation takes on a loaded machine with -race.
	const writeTimeout = 3 * time.Second
	const fast = time.Second // every other operation must take less than this
	start := time.Now()

	clk := testutil.NewClock()
	store := session.NewMemory(session.MemoryOptions{IdleTimeout: time.Hour, UnusedIdleTimeout: -1, Now: clk.Now})
	// No per-caller session cap: the loop below opens sessions as fast as the machine allows for
	// a second, which on an idle machine is more than the default cap of 1000.
	f := newFixtureOn(t, mcphttp.Options{Store: store, WriteTimeout: writeTimeout, KeepAlive: -1, MaxSessionsPerCaller: -1},
		func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	addr := f.srv.Listener.Addr().String()
	a := f.initialized(t) // stalled; we watch its stream being released
	b := f.initialized(t) // stalled; the reaper ends it mid-stall
	busy := f.initialized(t)
	stalledGET(t, addr, a.SessionID)
	stalledGET(t, addr, b.SessionID)

	timed := func(what string, fn func()) {
		t.Helper()
		t0 := time.Now()
		fn()
		if d := time.Since(t0); d >= fast {
			t.Fatalf("%s took %v while readers were stalled", what, d)
		}
	}

	// Flood both stalled streams: first large messages, far more than the socket buffers hold,
	// so the stream's writer gets stuck in a write; then small ones until the queue is full.
	// Sends only queue, so each returns at once.
	big := map[string]any{"level": "info", "data": strings.Repeat("x", 64<<10)}
	small := map[string]any{"level": "info", "data": "x"}
	flood := func(id string) {
		t.Helper()
		live, err := f.h.Endpoint().Lookup(context.Background(), id, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			params := small
			if i < 16 {
				params = big
			}
			var err error
			timed("a send on the stalled session's path", func() {
				err = live.Session().Notify(context.Background(), "notifications/message", params)
			})
			if err != nil {
				if i < mcphttp.StreamQueueSize {
					t.Fatalf("send %d refused: %v", i, err)
				}
				return
			}
			if i > 100*mcphttp.StreamQueueSize {
				t.Fatal("the queue never filled: the reader is not stalled")
			}
		}
	}
	// a's writer starts its stuck write after this moment, so its deadline is no earlier than
	// floodFrom + writeTimeout: everything measured against it below holds however long the
	// flooding itself took.
	floodFrom := time.Now()
	flood(a.SessionID)
	flood(b.SessionID)
	stalledAt := time.Now()
	t.Logf("both streams stalled %v after the start", stalledAt.Sub(start))

	// stillHeld checks that a's stream is still held by its stuck writer: another GET is 409.
	stillHeld := func() {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp := openStream(t, a, a.NewRequest(ctx, http.MethodGet))
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("a's stream was released %v after it stalled, before WriteTimeout", time.Since(stalledAt))
		}
		body, _ := io.ReadAll(resp.Body)
		testutil.Reply{Status: resp.StatusCode, Header: resp.Header, Body: body}.
			WantError(t, http.StatusConflict, -32600, msgOneStream, "null")
	}
	stillHeld()

	// The reaper ends b, mid-stall: expire it while a and busy are renewed.
	clk.Advance(59 * time.Minute)
	timed("a request of another session", func() { wantResult(t, busy.Call(t, "renew", "ping", nil), `"renew"`) })
	stillHeld() // and renews a
	clk.Advance(2 * time.Minute)
	timed("reaping a stalled session", func() {
		if n := store.Reap(); n != 1 {
			t.Fatalf("Reap = %d, want 1", n)
		}
	})

	// Keep working until half the write timeout has passed since the flooding began: everything
	// stays fast (one round at least, however long the flooding took).
	rounds := 0
	for rounds == 0 || time.Since(floodFrom) < writeTimeout/2 {
		timed("initialize", func() { f.initialized(t) })
		timed("tools/call of another session", func() {
			rep := busy.Post(t, testutil.CallTool(rounds, "echo", map[string]any{"text": "still here"}, nil))
			if rep.Status != http.StatusOK {
				t.Fatalf("busy session: %d %s", rep.Status, rep.Body)
			}
		})
		timed("a broadcast", func() {
			f.server.AddTool(&core.Tool{Name: fmt.Sprintf("b%d", rounds), InputSchema: []byte(`{"type":"object"}`)},
				func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) { return nil, nil })
		})
		timed("Reap", func() { store.Reap() })
		rounds++
	}
	// All of that happened while a's writer was stuck.
	stillHeld()
	t.Logf("%d rounds of initialize + tools/call + broadcast + Reap during the stall", rounds)

	// Within the write timeout (plus slack) a's stuck write fails and its stream is released:
	// a new GET is then accepted. Polled, with a bound: nothing else tells us.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var resp *http.Response
	for resp == nil {
		if time.Since(stalledAt) > writeTimeout+1500*time.Millisecond {
			t.Fatalf("a's stream still held %v after it stalled", time.Since(stalledAt))
		}
		<-tick.C
		ctx, cancel := context.WithCancel(context.Background())
		r := openStream(t, a, a.NewRequest(ctx, http.MethodGet))
		if r.StatusCode == http.StatusOK {
			resp = r
			t.Cleanup(cancel)
			break
		}
		r.Body.Close()
		cancel()
		if r.StatusCode != http.StatusConflict {
			t.Fatalf("GET while waiting for the release: %d", r.StatusCode)
		}
	}
	t.Logf("a's stream released %v after it stalled", time.Since(stalledAt))
	// The new stream works: a broadcast reaches it.
	wantSSEHeaders(t, resp)
	f.server.NotifyToolsListChanged(context.Background())
	ev, err := nextEvent(t, testutil.NewSSEReader(resp.Body), true)
	if err != nil {
		t.Fatal(err)
	}
	if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != "notifications/tools/list_changed" {
		t.Fatalf("on the new stream: %s", ev.Data)
	}
	b.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
	if d := time.Since(start); d > 3*writeTimeout {
		t.Fatalf("test took %v", d)
	}
}
