package mcphttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

const (
	msgListenConflict = "Conflict: a subscriptions/listen stream with this id is already open"
	metaSubID         = "io.modelcontextprotocol/subscriptionId"
)

// listenBody is the body of a subscriptions/listen request with the given filter.
func listenBody(id any, filter map[string]any) string {
	return testutil.ModernRequest(id, "subscriptions/listen", map[string]any{"notifications": filter})
}

var toolsOnly = map[string]any{"toolsListChanged": true}

// listenStream is an open listen stream as a test reads it.
type listenStream struct {
	resp *http.Response
	sr   *testutil.SSEReader
}

// listen opens a listen stream, checks the SSE headers and reads the acknowledgement, which it
// returns.
func (f *fixture) listen(t *testing.T, id any, filter map[string]any) (*listenStream, testutil.Wire) {
	t.Helper()
	c := f.client()
	resp := openStream(t, c, c.NewModernPost(context.Background(), listenBody(id, filter)))
	wantSSEHeaders(t, resp)
	ls := &listenStream{resp: resp, sr: testutil.NewSSEReader(resp.Body)}
	ack := ls.next(t)
	if ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first frame %s %s, want the acknowledgement", ack.Method, ack.Params)
	}
	wantSubID(t, ack, mustJSON(t, id))
	return ls, ack
}

// next reads the next message frame (skipping keepalive comments), which must be a data-only
// frame, and decodes it.
func (ls *listenStream) next(t *testing.T) testutil.Wire {
	t.Helper()
	ev, err := nextEvent(t, ls.sr, true)
	if err != nil {
		t.Fatalf("reading the listen stream: %v", err)
	}
	if ev.Event != "" || ev.ID != "" {
		t.Fatalf("listen frames carry neither event nor id lines: %+v", ev)
	}
	return testutil.DecodeWire(t, []byte(ev.Data))
}

func (ls *listenStream) close() { ls.resp.Body.Close() }

// wantSubID checks params._meta.subscriptionId of a notification.
func wantSubID(t *testing.T, w testutil.Wire, id string) {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(w.Params, &p); err != nil {
		t.Fatalf("params %s: %v", w.Params, err)
	}
	if got := string(p.Meta[metaSubID]); got != id {
		t.Fatalf("%s: subscriptionId %s, want %s (params %s)", w.Method, got, id, w.Params)
	}
}

// wantChange checks a change notification delivered on a listen stream.
func wantChange(t *testing.T, w testutil.Wire, method, id string) {
	t.Helper()
	if w.Method != method {
		t.Fatalf("frame %s %s, want %s", w.Method, w.Params, method)
	}
	wantSubID(t, w, id)
}

// The acknowledgement comes first and names the honored subset of the filter: a type is honored
// only when the server's capability flag promises it.
func TestListenAck(t *testing.T) {
	all := map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
		"resourceSubscriptions": []string{"test://doc"}}
	for _, tc := range []struct {
		name    string
		caps    *core.ServerCapabilities
		filter  map[string]any
		honored string
	}{
		{"derived capabilities", nil, all,
			`{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["test://doc"]}`},
		{"flags decide", &core.ServerCapabilities{
			Tools:     &core.ListChangedCapability{ListChanged: true},
			Prompts:   &core.ListChangedCapability{},
			Resources: &core.ResourcesCapability{Subscribe: true},
		}, all, `{"toolsListChanged":true,"resourceSubscriptions":["test://doc"]}`},
		{"no subscribe", &core.ServerCapabilities{
			Resources: &core.ResourcesCapability{ListChanged: true},
		}, all, `{"resourcesListChanged":true}`},
		{"nothing asked", nil, map[string]any{}, `{}`},
		{"false is not asked", nil, map[string]any{"toolsListChanged": false, "resourceSubscriptions": []string{}}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var co *core.Options
			if tc.caps != nil {
				co = &core.Options{Capabilities: tc.caps, SubscribeHandler: core.AcceptSubscription}
			}
			f := newFixtureWith(t, mcphttp.Options{}, co, nil)
			checkModernSchema(t, "SubscriptionsListenRequest", []byte(listenBody("s1", tc.filter)))
			ls, ack := f.listen(t, "s1", tc.filter)
			defer ls.close()
			checkModernSchema(t, "SubscriptionsAcknowledgedNotification", mustJSONRaw(t, ack))
			var p struct {
				Notifications json.RawMessage `json:"notifications"`
			}
			if err := json.Unmarshal(ack.Params, &p); err != nil {
				t.Fatal(err)
			}
			sameJSONText(t, "honored filter", p.Notifications, tc.honored)
		})
	}
}

// Each type is opt-in: a stream receives only what it asked for, every frame tagged with its id.
func TestListenFiltering(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	a, _ := f.listen(t, "a", toolsOnly)
	defer a.close()
	b, _ := f.listen(t, "b", map[string]any{"promptsListChanged": true, "resourcesListChanged": true})
	defer b.close()
	n, _ := f.listen(t, "n", map[string]any{})
	defer n.close()

	f.server.NotifyToolsListChanged(context.Background())
	f.server.NotifyPromptsListChanged(context.Background())
	f.server.NotifyResourcesListChanged(context.Background())
	f.server.NotifyToolsListChanged(context.Background())
	f.server.NotifyPromptsListChanged(context.Background())

	// a: tools, tools (nothing between them); b: prompts, resources, prompts.
	for range 2 {
		w := a.next(t)
		wantChange(t, w, core.ToolsListChanged, `"a"`)
		checkModernSchema(t, "ToolListChangedNotification", mustJSONRaw(t, w))
	}
	for _, m := range []string{core.PromptsListChanged, core.ResourcesListChanged, core.PromptsListChanged} {
		w := b.next(t)
		wantChange(t, w, m, `"b"`)
		checkModernSchema(t, "ServerNotification", mustJSONRaw(t, w))
	}
	// Nothing else reached any of them: after a graceful close each has only its final frames.
	f.server.NotifyResourceUpdated(context.Background(), "test://doc")
	closeGracefully(t, f, map[any]*listenStream{"a": a, "b": b, "n": n})
}

// closeGracefully closes the fixture's handler and checks that each stream's remaining frames
// are exactly notifications/cancelled and the final result.
func closeGracefully(t *testing.T, f *fixture, streams map[any]*listenStream) {
	t.Helper()
	if err := f.h.Close(); err != nil {
		t.Fatal(err)
	}
	for id, ls := range streams {
		idJSON := mustJSON(t, id)
		cancelled := ls.next(t)
		if cancelled.Method != "notifications/cancelled" {
			t.Fatalf("stream %s received %s %s", idJSON, cancelled.Method, cancelled.Params)
		}
		if res := ls.next(t); string(res.ID) != idJSON || res.Result == nil {
			t.Fatalf("stream %s: final frame %s %s", idJSON, res.ID, res.Result)
		}
		if _, err := nextEvent(t, ls.sr, false); !errors.Is(err, io.EOF) {
			t.Fatalf("stream %s after the final frame: %v", idJSON, err)
		}
	}
}

// notifications/resources/updated reaches only the streams subscribed to that URI.
func TestListenResourceUpdated(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	a, _ := f.listen(t, 1, map[string]any{"resourceSubscriptions": []string{"test://doc"}})
	defer a.close()
	b, _ := f.listen(t, 2, map[string]any{"resourceSubscriptions": []string{"test://other"}})
	defer b.close()
	c, _ := f.listen(t, 3, map[string]any{"resourceSubscriptions": []string{"test://other", "test://doc"}, "toolsListChanged": true})
	defer c.close()

	f.server.NotifyResourceUpdated(context.Background(), "test://doc")
	f.server.NotifyResourceUpdated(context.Background(), "test://other")
	f.server.NotifyResourceUpdated(context.Background(), "test://nobody")
	f.server.NotifyResourceUpdated(context.Background(), "test://doc")

	uri := func(w testutil.Wire) string {
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(w.Params, &p)
		return p.URI
	}
	for _, tc := range []struct {
		ls   *listenStream
		id   string
		uris []string
	}{
		{a, "1", []string{"test://doc", "test://doc"}},
		{b, "2", []string{"test://other"}},
		{c, "3", []string{"test://doc", "test://other", "test://doc"}},
	} {
		for _, want := range tc.uris {
			w := tc.ls.next(t)
			wantChange(t, w, core.ResourceUpdated, tc.id)
			checkModernSchema(t, "ResourceUpdatedNotification", mustJSONRaw(t, w))
			if got := uri(w); got != want {
				t.Fatalf("stream %s: uri %q, want %q", tc.id, got, want)
			}
		}
	}
	// Nothing else reached any of them.
	f.server.NotifyToolsListChanged(context.Background())
	wantChange(t, c.next(t), core.ToolsListChanged, "3")
	closeGracefully(t, f, map[any]*listenStream{1: a, 2: b, 3: c})
}

// Two streams open at once, each with its own subscription id on every frame.
func TestListenConcurrentStreams(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	a, _ := f.listen(t, "a", toolsOnly)
	defer a.close()
	b, _ := f.listen(t, 7, toolsOnly)
	defer b.close()
	if n := f.h.Listeners().Len(); n != 2 {
		t.Fatalf("Len = %d", n)
	}
	for range 3 {
		f.server.NotifyToolsListChanged(context.Background())
	}
	for range 3 {
		wantChange(t, a.next(t), core.ToolsListChanged, `"a"`)
		wantChange(t, b.next(t), core.ToolsListChanged, `7`)
	}
}

// MaxStreams caps the open streams (503), the reservation is atomic under concurrent listens, and
// a client closing its stream frees its slot.
func TestListenCap(t *testing.T) {
	const msgFull = "Service unavailable: maximum concurrent subscriptions/listen streams (%d) reached"
	f := newFixture(t, mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: 1}})
	first, _ := f.listen(t, "first", toolsOnly)
	rep := f.modern(t, listenBody("second", toolsOnly))
	rep.WantError(t, http.StatusServiceUnavailable, -32603, fmt.Sprintf(msgFull, 1), `"second"`)
	checkModernSchema(t, "JSONRPCErrorResponse", rep.Body)

	first.close()
	recv(t, f.connClosed, "the first stream's connection to close")
	if n := f.h.Listeners().Len(); n != 0 {
		t.Fatalf("Len = %d after the client left", n)
	}
	third, _ := f.listen(t, "third", toolsOnly)
	defer third.close()
	f.server.NotifyToolsListChanged(context.Background())
	wantChange(t, third.next(t), core.ToolsListChanged, `"third"`)

	t.Run("concurrent", func(t *testing.T) {
		const max, tries = 3, 12
		f := newFixture(t, mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: max}})
		var ok, full atomic.Int32
		var wg sync.WaitGroup
		for i := range tries {
			wg.Go(func() {
				c := f.client()
				resp, err := c.HTTP.Do(c.NewModernPost(context.Background(), listenBody(i, toolsOnly)))
				if err != nil {
					t.Error(err)
					return
				}
				t.Cleanup(func() { resp.Body.Close() })
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusServiceUnavailable:
					full.Add(1)
				default:
					t.Errorf("status %d", resp.StatusCode)
				}
			})
		}
		wg.Wait()
		if ok.Load() != max || full.Load() != tries-max {
			t.Fatalf("%d streams opened and %d refused, want %d and %d", ok.Load(), full.Load(), max, tries-max)
		}
		if n := f.h.Listeners().Len(); n != max {
			t.Fatalf("Len = %d", n)
		}
	})
}

// killableListener hands out connections whose writes can be made to fail, as on a connection
// whose peer vanished without closing it: reads still block (no FIN arrives), writes fail.
type killableListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*killableConn
}

type killableConn struct {
	net.Conn
	dead atomic.Bool
}

var errPeerGone = errors.New("test: the peer is gone")

func (c *killableConn) Write(p []byte) (int, error) {
	if c.dead.Load() {
		return 0, errPeerGone
	}
	return c.Conn.Write(p)
}

func (l *killableListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	kc := &killableConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, kc)
	l.mu.Unlock()
	return kc, nil
}

func (l *killableListener) killAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.dead.Store(true)
	}
}

// A keepalive write finds a dead peer and frees its slot.
func TestListenKeepAliveFreesDeadPeer(t *testing.T) {
	var kl *killableListener
	f := newFixtureWith(t, mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: 1, KeepAlive: 5 * time.Millisecond}}, nil,
		func(l net.Listener) net.Listener {
			kl = &killableListener{Listener: l}
			return kl
		})
	ls, _ := f.listen(t, "k", toolsOnly)
	defer ls.close()
	// Keepalive comments arrive...
	waitPing(t, ls)
	// ...until the peer vanishes: the next one fails, and the slot is free again.
	kl.killAll()
	recv(t, f.connClosed, "the dead stream's connection to close")
	if n := f.h.Listeners().Len(); n != 0 {
		t.Fatalf("Len = %d after the peer vanished", n)
	}
	again, _ := f.listen(t, "k", toolsOnly)
	again.close()
}

// With keepalive off, a listen stream costs its handler goroutine and nothing else: no timer
// goroutine, nothing left behind once the stream ends.
func TestListenNoKeepAlive(t *testing.T) {
	leakCheck := goleak.IgnoreCurrent()
	server := newServer(newTools())
	h := mcphttp.New(server, mcphttp.Options{Listen: mcphttp.ListenersOptions{KeepAlive: -1}})
	ls := &liveServer{h: h, srv: httptest.NewServer(h), tr: &http.Transport{}}
	c := ls.client()
	resp := openStream(t, c, c.NewModernPost(context.Background(), listenBody("q", toolsOnly)))
	wantSSEHeaders(t, resp)
	sr := testutil.NewSSEReader(resp.Body)
	if ev, err := nextEvent(t, sr, false); err != nil || ev.IsComment() {
		t.Fatalf("first item %+v %v", ev, err)
	}
	// The stream delivers...
	server.NotifyToolsListChanged(context.Background())
	if ev, err := nextEvent(t, sr, false); err != nil || ev.IsComment() {
		t.Fatalf("second item %+v %v", ev, err)
	}
	// ...and while it is open and idle, exactly one goroutine runs kit code: its handler.
	if got := kitGoroutines(); len(got) != 1 || !strings.Contains(got[0], "(*Listeners).stream") {
		t.Fatalf("goroutines running kit code while a listen stream is idle:\n%s", strings.Join(got, "\n\n"))
	}
	// It ends gracefully, without a single comment, and nothing is left.
	_ = ls.h.Close()
	var last testutil.Event
	for {
		ev, err := nextEvent(t, sr, false)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.IsComment() {
			t.Fatalf("a keepalive comment with keepalive off: %q", ev.Comment)
		}
		last = ev
	}
	if w := testutil.DecodeWire(t, []byte(last.Data)); string(w.ID) != `"q"` || w.Result == nil {
		t.Fatalf("last frame %s", last.Data)
	}
	resp.Body.Close()
	ls.stop()
	goleak.VerifyNone(t, leakCheck)
}

// kitGoroutines returns the stacks of the goroutines that have a frame of the kit's mcphttp or
// middleware packages.
func kitGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "mcpkit/mcpkit/mcphttp.") || strings.Contains(g, "mcpkit/mcpkit/middleware.") {
			if strings.Contains(g, "mcphttp_test.") {
				continue // the test itself
			}
			out = append(out, g)
		}
	}
	return out
}

// Changes published while streams open never overtake the acknowledgement: the first frame of
// every stream is its ack, and what follows carries its id.
func TestListenAckFirstUnderPublishing(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	stop := make(chan struct{})
	var published atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			f.server.NotifyToolsListChanged(context.Background())
			published.Add(1)
			runtime.Gosched()
		}
	}()
	c := f.client()
	for i := range 40 {
		resp := openStream(t, c, c.NewModernPost(context.Background(), listenBody(i, toolsOnly)))
		wantSSEHeaders(t, resp)
		ls := &listenStream{resp: resp, sr: testutil.NewSSEReader(resp.Body)}
		ack := ls.next(t)
		if ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("stream %d: first frame %s", i, ack.Method)
		}
		wantSubID(t, ack, fmt.Sprint(i))
		// Whatever follows (until the stream is dropped for falling behind) is tagged with its id.
		for range 3 {
			ev, err := nextEvent(t, ls.sr, true)
			if err != nil {
				break
			}
			wantChange(t, testutil.DecodeWire(t, []byte(ev.Data)), core.ToolsListChanged, fmt.Sprint(i))
		}
		ls.close()
	}
	close(stop)
	<-done
	if published.Load() == 0 {
		t.Fatal("nothing was published")
	}
}

// Close ends every stream gracefully while changes are being published: notifications/cancelled
// naming the listen request, then the complete result as the very last frame (no comment after
// it either), and new listens get 503.
func TestListenGracefulClose(t *testing.T) {
	f := newFixture(t, mcphttp.Options{Listen: mcphttp.ListenersOptions{KeepAlive: time.Millisecond}})
	ids := []any{"g1", 2, "g-3", 40}
	type item struct {
		ev  testutil.Event
		err error
	}
	streams := make([][]item, len(ids))
	var readers sync.WaitGroup
	for i, id := range ids {
		ls, _ := f.listen(t, id, toolsOnly)
		readers.Go(func() {
			for {
				ev, err := ls.sr.Next()
				streams[i] = append(streams[i], item{ev, err})
				if err != nil {
					return
				}
			}
		})
		defer ls.close()
	}
	// Publish fewer changes than a stream's queue holds, so no stream is dropped for falling
	// behind, and close half-way through.
	halfway := make(chan struct{})
	publisher := make(chan struct{})
	go func() {
		defer close(publisher)
		for i := range 200 {
			if i == 100 {
				close(halfway)
			}
			f.server.NotifyToolsListChanged(context.Background())
		}
	}()
	<-halfway
	if err := f.h.Close(); err != nil {
		t.Fatal(err)
	}
	<-publisher
	readers.Wait()
	f.modern(t, listenBody("late", toolsOnly)).WantError(t, http.StatusServiceUnavailable, -32603, msgShuttingDown, `"late"`)

	for i, id := range ids {
		idJSON := mustJSON(t, id)
		items := streams[i]
		if err := items[len(items)-1].err; !errors.Is(err, io.EOF) {
			t.Fatalf("stream %s ended with %v, want EOF", idJSON, err)
		}
		var frames []testutil.Wire
		for _, it := range items[:len(items)-1] {
			if it.ev.IsComment() {
				if len(frames) > 0 && frames[len(frames)-1].Result != nil {
					t.Fatalf("stream %s: a comment after the final result", idJSON)
				}
				continue
			}
			frames = append(frames, testutil.DecodeWire(t, []byte(it.ev.Data)))
		}
		if len(frames) < 2 {
			t.Fatalf("stream %s: %d frames", idJSON, len(frames))
		}
		last, cancelled := frames[len(frames)-1], frames[len(frames)-2]
		raw := mustJSONRaw(t, last)
		checkModernSchema(t, "SubscriptionsListenResultResponse", raw)
		sameJSONText(t, "final result", raw, `{"jsonrpc":"2.0","id":`+idJSON+`,"result":{"resultType":"complete","_meta":{`+
			`"io.modelcontextprotocol/subscriptionId":`+idJSON+`,"io.modelcontextprotocol/serverInfo":{"name":"mcphttp-test","version":"1.0.0"}}}}`)
		checkModernSchema(t, "CancelledNotification", mustJSONRaw(t, cancelled))
		var cp struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if err := json.Unmarshal(cancelled.Params, &cp); err != nil || cancelled.Method != "notifications/cancelled" || string(cp.RequestID) != idJSON {
			t.Fatalf("stream %s: before the result %s %s", idJSON, cancelled.Method, cancelled.Params)
		}
		for _, w := range frames[:len(frames)-2] { // the ack was read by listen
			wantChange(t, w, core.ToolsListChanged, idJSON)
		}
	}
}

// A second stream with an id already open is 409; the first keeps working.
func TestListenDuplicateID(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	first, _ := f.listen(t, "dup", toolsOnly)
	defer first.close()
	f.modern(t, listenBody("dup", toolsOnly)).WantError(t, http.StatusConflict, -32600, msgListenConflict, `"dup"`)
	// The number 5 and the string "5" are different ids.
	five, _ := f.listen(t, 5, toolsOnly)
	defer five.close()
	fiveStr, _ := f.listen(t, "5", toolsOnly)
	defer fiveStr.close()
	if n := f.h.Listeners().Len(); n != 3 {
		t.Fatalf("Len = %d", n)
	}
	f.server.NotifyToolsListChanged(context.Background())
	wantChange(t, first.next(t), core.ToolsListChanged, `"dup"`)
	wantChange(t, five.next(t), core.ToolsListChanged, `5`)
	wantChange(t, fiveStr.next(t), core.ToolsListChanged, `"5"`)
}

// §3.7 rows 1-4: what a listen request must carry.
func TestListenErrors(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	const msgFilter = "Invalid params: subscriptions/listen requires a `notifications` filter object"
	for _, tc := range []struct {
		name, body string
		code       int64
		msg, id    string
	}{
		{"no id", testutil.ModernRequest(nil, "subscriptions/listen", map[string]any{"notifications": map[string]any{}}),
			-32600, "Invalid Request: subscriptions/listen requires an id", "null"},
		{"no envelope", testutil.Request(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{}}),
			-32600, "Invalid Request: modern requests require the SEP-2575 `_meta` envelope", "1"},
		{"no capabilities", testutil.Request(2, "subscriptions/listen", map[string]any{"notifications": map[string]any{},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": modernVersion}}),
			-32602, "Invalid params: missing or invalid `io.modelcontextprotocol/clientCapabilities` in `_meta`", "2"},
		{"version not a string", testutil.Request(3, "subscriptions/listen", map[string]any{"notifications": map[string]any{},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": 5, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}),
			-32602, "Invalid params: missing or invalid `io.modelcontextprotocol/protocolVersion` in `_meta`", "3"},
		{"no filter", testutil.ModernRequest(4, "subscriptions/listen", nil), -32602, msgFilter, "4"},
		{"filter not an object", listenBody(5, nil), -32602, msgFilter, "5"},
		{"filter of the wrong shape", testutil.ModernRequest(6, "subscriptions/listen",
			map[string]any{"notifications": map[string]any{"toolsListChanged": "yes"}}), -32602, msgFilter, "6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := f.modern(t, tc.body)
			rep.WantError(t, http.StatusBadRequest, tc.code, tc.msg, tc.id)
		})
	}
	if n := f.h.Listeners().Len(); n != 0 {
		t.Fatalf("Len = %d after refusals", n)
	}
}

// With DisableListen, subscriptions/listen is an unknown method.
func TestListenDisabled(t *testing.T) {
	f := newFixture(t, mcphttp.Options{DisableListen: true})
	if f.h.Listeners() != nil {
		t.Fatal("Listeners() with listen disabled")
	}
	rep := f.modern(t, listenBody(1, toolsOnly))
	if w := testutil.DecodeWire(t, rep.Body); rep.Status != http.StatusNotFound || w.Error == nil || w.Error.Code != -32601 || string(w.ID) != "1" {
		t.Fatalf("listen disabled: %d %s", rep.Status, rep.Body)
	}
}

// A legacy GET stream and a listen stream both receive a tools list change, each in its own
// shape.
func TestListenAndLegacyGET(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	legacy := f.initialized(t)
	get := openStream(t, legacy, legacy.NewRequest(context.Background(), http.MethodGet))
	wantSSEHeaders(t, get)
	ls, _ := f.listen(t, "l", toolsOnly)
	defer ls.close()

	f.server.NotifyToolsListChanged(context.Background())
	wantChange(t, ls.next(t), core.ToolsListChanged, `"l"`)
	ev, err := nextEvent(t, testutil.NewSSEReader(get.Body), true)
	if err != nil {
		t.Fatal(err)
	}
	if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != core.ToolsListChanged || strings.Contains(string(w.Params), metaSubID) {
		t.Fatalf("GET stream frame %s", ev.Data)
	}
}

// stalledListen opens a listen stream on a raw connection, reads the response head and never
// reads again.
func stalledListen(t *testing.T, addr string, id any) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := listenBody(id, toolsOnly)
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: %s\r\n"+
		"MCP-Protocol-Version: %s\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		addr, testutil.AcceptBoth, modernVersion, len(body), body)
	_ = conn.SetReadDeadline(time.Now().Add(bound))
	head, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), nil)
	if err != nil {
		t.Fatal(err)
	}
	if head.StatusCode != http.StatusOK || head.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %q", head.StatusCode, head.Header.Get("Content-Type"))
	}
	return conn
}

// A listen stream whose client stopped reading holds up nobody: publishing goes on, other streams
// get every change, and the stalled stream is dropped (its writer gives up after WriteTimeout).
func TestListenStalledReader(t *testing.T) {
	f := newFixtureOn(t, mcphttp.Options{WriteTimeout: 300 * time.Millisecond, Listen: mcphttp.ListenersOptions{KeepAlive: -1}},
		func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	stalledListen(t, f.srv.Listener.Addr().String(), "stalled")
	healthy, _ := f.listen(t, "healthy", toolsOnly)
	defer healthy.close()
	// Far more changes than the stalled stream's socket buffers and queue hold; each publish
	// returns before the healthy client has even read it.
	for range 2000 {
		t0 := time.Now()
		f.server.NotifyToolsListChanged(context.Background())
		if d := time.Since(t0); d > time.Second {
			t.Fatalf("a publish took %v", d)
		}
		wantChange(t, healthy.next(t), core.ToolsListChanged, `"healthy"`)
	}
	recv(t, f.connClosed, "the stalled stream to be dropped")
	if n := f.h.Listeners().Len(); n != 1 {
		t.Fatalf("Len = %d, want only the healthy stream", n)
	}
	f.server.NotifyToolsListChanged(context.Background())
	wantChange(t, healthy.next(t), core.ToolsListChanged, `"healthy"`)
}

// Listeners mounted alone behind the layers it needs (the method check answers 405 to other
// methods, Decode reads the body): it serves listen streams and ends them gracefully on Close.
func TestListenersStandalone(t *testing.T) {
	s := newServer(newTools())
	l := mcphttp.NewListeners(s, mcphttp.ListenersOptions{KeepAlive: -1})
	srv := httptest.NewServer(middleware.MethodAccept(middleware.MethodAcceptOptions{Stateless: true})(
		middleware.Decode(middleware.DecodeOptions{})(l)))
	t.Cleanup(srv.Close)
	t.Cleanup(l.Close)
	c := testutil.NewClient(srv.URL, srv.Client())
	rep := c.Do(t, c.NewRequest(context.Background(), http.MethodGet))
	rep.WantError(t, http.StatusMethodNotAllowed, -32600, "Method not allowed", "null")

	resp := openStream(t, c, c.NewModernPost(context.Background(), listenBody("solo", toolsOnly)))
	wantSSEHeaders(t, resp)
	ls := &listenStream{resp: resp, sr: testutil.NewSSEReader(resp.Body)}
	defer ls.close()
	if ack := ls.next(t); ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first frame %s", ack.Method)
	}
	s.NotifyToolsListChanged(context.Background())
	wantChange(t, ls.next(t), core.ToolsListChanged, `"solo"`)
	l.Close()
	if w := ls.next(t); w.Method != "notifications/cancelled" {
		t.Fatalf("after Close: %s", w.Method)
	}
	if w := ls.next(t); string(w.ID) != `"solo"` || w.Result == nil {
		t.Fatalf("final frame %s %s", w.ID, w.Result)
	}
	if l.Len() != 0 {
		t.Fatalf("Len = %d after Close", l.Len())
	}
	// Closed: no more streams, and changes go nowhere.
	s.NotifyToolsListChanged(context.Background())
	c.Do(t, c.NewModernPost(context.Background(), listenBody("again", toolsOnly))).WantError(t,
		http.StatusServiceUnavailable, -32603, msgShuttingDown, `"again"`)
}

// With WriteTimeout off, a listen stream whose client stopped reading would block its handler
// in a write forever, and Close waits for every handler: CloseTimeout bounds that wait, while a
// healthy stream still ends gracefully.
func TestListenCloseBoundedWithoutWriteTimeout(t *testing.T) {
	const closeTimeout = 300 * time.Millisecond
	f := newFixtureOn(t, mcphttp.Options{WriteTimeout: -1, Listen: mcphttp.ListenersOptions{KeepAlive: -1, CloseTimeout: closeTimeout}},
		func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	// Big frames (a long resource URI), so that the stalled client's socket buffers fill up
	// long before its queue could overflow (which would drop the stream instead).
	uri := "test://" + strings.Repeat("x", 16<<10)
	filter := map[string]any{"resourceSubscriptions": []string{uri}}
	addr := f.srv.Listener.Addr().String()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := listenBody("stalled", filter)
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: %s\r\n"+
		"MCP-Protocol-Version: %s\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		addr, testutil.AcceptBoth, modernVersion, len(body), body)
	healthy, _ := f.listen(t, "healthy", filter)
	defer healthy.close()
	for range 100 { // 1.6 MB for the stalled stream, and still less than its queue holds
		f.server.NotifyResourceUpdated(context.Background(), uri)
		wantChange(t, healthy.next(t), core.ResourceUpdated, `"healthy"`)
	}
	if n := f.h.Listeners().Len(); n != 2 {
		t.Fatalf("Len = %d before Close, want the stalled stream still open too", n)
	}
	closed := make(chan time.Duration, 1)
	t0 := time.Now()
	go func() {
		f.h.Listeners().Close()
		closed <- time.Since(t0)
	}()
	if w := healthy.next(t); w.Method != "notifications/cancelled" {
		t.Fatalf("healthy stream after Close: %s", w.Method)
	}
	if w := healthy.next(t); string(w.ID) != `"healthy"` || w.Result == nil {
		t.Fatalf("healthy stream's final frame %s %s", w.ID, w.Result)
	}
	d := recv(t, closed, "Close to return despite the stalled stream")
	if d < closeTimeout/2 || d > closeTimeout+2*time.Second {
		t.Fatalf("Close took %v with CloseTimeout %v (the stalled stream's handler was not blocked?)", d, closeTimeout)
	}
	if n := f.h.Listeners().Len(); n != 0 {
		t.Fatalf("Len = %d after Close", n)
	}
}

// Listen ids are unique per principal (Options.Principal): two principals may both use id 1 while
// a second stream of the same principal with that id is refused; callers with no principal
// share one scope (two anonymous callers refuse each other), and never a principal's.
func TestListenIDScope(t *testing.T) {
	principal := func(r *http.Request) string { return r.Header.Get("X-Test-Client") }
	as := func(f *fixture, t *testing.T, client string) *listenStream {
		t.Helper()
		c := f.client()
		c.Header.Set("X-Test-Client", client)
		resp := openStream(t, c, c.NewModernPost(context.Background(), listenBody(1, toolsOnly)))
		wantSSEHeaders(t, resp)
		ls := &listenStream{resp: resp, sr: testutil.NewSSEReader(resp.Body)}
		if ack := ls.next(t); ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("client %s: first frame %s", client, ack.Method)
		}
		return ls
	}
	refusedAs := func(f *fixture, t *testing.T, client string) {
		t.Helper()
		c := f.client()
		c.Header.Set("X-Test-Client", client)
		c.Do(t, c.NewModernPost(context.Background(), listenBody(1, toolsOnly))).WantError(t,
			http.StatusConflict, -32600, msgListenConflict, "1")
	}

	t.Run("per principal", func(t *testing.T) {
		f := newFixture(t, mcphttp.Options{Principal: principal})
		alice := as(f, t, "alice")
		defer alice.close()
		bob := as(f, t, "bob")
		defer bob.close()
		refusedAs(f, t, "alice")
		f.server.NotifyToolsListChanged(context.Background())
		wantChange(t, alice.next(t), core.ToolsListChanged, "1")
		wantChange(t, bob.next(t), core.ToolsListChanged, "1")
		// Once alice's stream is gone, her id is free again; bob's stream is untouched.
		alice.close()
		deadline := time.Now().Add(bound)
		for f.h.Listeners().Len() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("Len = %d after alice left", f.h.Listeners().Len())
			}
			time.Sleep(5 * time.Millisecond)
		}
		again := as(f, t, "alice")
		defer again.close()
		f.server.NotifyToolsListChanged(context.Background())
		wantChange(t, bob.next(t), core.ToolsListChanged, "1")
		wantChange(t, again.next(t), core.ToolsListChanged, "1")
	})
	t.Run("anonymous", func(t *testing.T) {
		f := newFixture(t, mcphttp.Options{Principal: principal})
		nobody := as(f, t, "")
		defer nobody.close()
		alice := as(f, t, "alice") // a principal never shares nobody's scope
		defer alice.close()
		refusedAs(f, t, "")
		f.server.NotifyToolsListChanged(context.Background())
		wantChange(t, nobody.next(t), core.ToolsListChanged, "1")
		wantChange(t, alice.next(t), core.ToolsListChanged, "1")
	})
	t.Run("one scope", func(t *testing.T) {
		f := newFixture(t, mcphttp.Options{}) // no principal: every caller is nobody
		alice := as(f, t, "alice")
		defer alice.close()
		refusedAs(f, t, "bob")
		f.server.NotifyToolsListChanged(context.Background())
		wantChange(t, alice.next(t), core.ToolsListChanged, "1")
	})
}

// Mounted without the layers, Listeners, Modern and the Endpoint decode nothing themselves: a POST
// that reaches them without a decoded message is refused with 500, naming the missing layer.
func TestHandlersWithoutDecodeRefuse(t *testing.T) {
	s := newServer(newTools())
	l := mcphttp.NewListeners(s, mcphttp.ListenersOptions{KeepAlive: -1})
	t.Cleanup(l.Close)
	m := mcphttp.NewModern(s, mcphttp.ModernOptions{})
	ep := mcphttp.NewEndpoint(s, mcphttp.EndpointOptions{Stateless: true})
	t.Cleanup(func() { _ = ep.Close() })
	for name, h := range map[string]http.Handler{"listen": l, "modern": m, "endpoint": ep} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			c := testutil.NewClient(srv.URL, srv.Client())
			c.Do(t, c.NewModernPost(context.Background(), listenBody("l", toolsOnly))).WantError(t, http.StatusInternalServerError, -32603,
				"Internal error: the request reached the handler without a Decode layer in front of it", "null")
		})
	}
}
