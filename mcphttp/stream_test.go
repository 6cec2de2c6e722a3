package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// Row 23: a request on its own SSE stream, its progress notifications before its response.
func TestSSEResponseWithProgress(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	resp := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(8, "progress", map[string]any{"steps": 3}, "tok-1")))
	wantSSEHeaders(t, resp)
	sr := testutil.NewSSEReader(resp.Body)
	for i := 1; i <= 3; i++ {
		ev, err := nextEvent(t, sr, true)
		if err != nil {
			t.Fatalf("progress frame %d: %v", i, err)
		}
		if ev.Event != "" || ev.ID != "" {
			t.Fatalf("legacy frames carry no event or id line: %+v", ev)
		}
		checkSchema(t, "ProgressNotification", []byte(ev.Data))
		w := testutil.DecodeWire(t, []byte(ev.Data))
		var p struct {
			Token    string  `json:"progressToken"`
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
		}
		if err := json.Unmarshal(w.Params, &p); err != nil {
			t.Fatal(err)
		}
		if w.Method != "notifications/progress" || p.Token != "tok-1" || p.Progress != float64(i) || p.Total != 3 {
			t.Fatalf("frame %d = %s", i, ev.Data)
		}
	}
	ev, err := nextEvent(t, sr, true)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "JSONRPCResultResponse", []byte(ev.Data))
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), "8")); got != "done" {
		t.Fatalf("result text %q", got)
	}
	if _, err := nextEvent(t, sr, false); !errors.Is(err, io.EOF) {
		t.Fatalf("after the response: %v, want the end of the stream", err)
	}
}

// Row 23: the headers go out before the handler finishes.
func TestSSEHeadersCommittedAtOnce(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	resp := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(1, "block", nil, nil)))
	// openStream returned: the headers arrived while the tool is still blocked.
	if got := recv(t, f.tools.entered, "the tool to start"); got != "1" {
		t.Fatalf("tool entered with id %s", got)
	}
	wantSSEHeaders(t, resp)
	close(f.tools.release)
	ev, err := nextEvent(t, testutil.NewSSEReader(resp.Body), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), "1")); got != "released" {
		t.Fatalf("result %q", got)
	}
}

// Row 22: a request id already in flight on the session.
func TestRequestIDInFlight(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts mcphttp.Options
	}{{"sse", mcphttp.Options{}}, {"json", mcphttp.Options{JSONResponse: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newFixture(t, mode.opts)
			c := f.initialized(t)
			done := make(chan testutil.Reply, 1)
			go func() { done <- c.Post(t, testutil.CallTool(5, "block", nil, nil)) }()
			recv(t, f.tools.entered, "the first request to start")

			c.Post(t, testutil.Request(5, "ping", nil)).WantError(t, http.StatusConflict, -32600, msgInFlight, "5")
			c.Post(t, testutil.CallTool(5, "echo", map[string]any{"text": "x"}, nil)).WantError(t, http.StatusConflict, -32600, msgInFlight, "5")
			// Another id, and the same id on another session, are fine meanwhile.
			wantResult(t, c.Call(t, 6, "ping", nil), "6")
			other := f.initialized(t)
			wantResult(t, other.Call(t, 5, "ping", nil), "5")

			close(f.tools.release)
			rep := recv(t, done, "the first request to finish")
			if rep.Status != http.StatusOK {
				t.Fatalf("first request: %d %s", rep.Status, rep.Body)
			}
			if got := toolText(t, wantResult(t, rep.Message(t), "5")); got != "released" {
				t.Fatalf("first request result %q", got)
			}
			// The id is free again.
			wantResult(t, c.Call(t, 5, "ping", nil), "5")
		})
	}
}

// Row 24: JSON mode answers 200 JSON, or 202 when the client cancelled the request.
func TestJSONMode(t *testing.T) {
	f := newFixture(t, mcphttp.Options{JSONResponse: true})
	c := f.initialized(t)
	rep := c.Post(t, testutil.CallTool(1, "echo", map[string]any{"text": "hi"}, nil))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("JSON mode: %d %q", rep.Status, rep.Header.Get("Content-Type"))
	}
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, rep.Body), "1")); got != "hi" {
		t.Fatalf("echo %q", got)
	}
	// Progress has no path in JSON mode: the tool sees an error and the call still answers.
	rep = c.Post(t, testutil.CallTool(2, "progress", map[string]any{"steps": 1}, "tok"))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("JSON mode with progress: %d %q", rep.Status, rep.Header.Get("Content-Type"))
	}

	done := make(chan testutil.Reply, 1)
	go func() { done <- c.Post(t, testutil.CallTool("slow", "block", nil, nil)) }()
	recv(t, f.tools.entered, "the request to start")
	wantEmpty(t, c.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": "slow", "reason": "enough"})), http.StatusAccepted)
	wantEmpty(t, recv(t, done, "the cancelled request to end"), http.StatusAccepted)
}

// Row 23: a cancelled request's stream closes without a response frame.
func TestSSECancelledRequestHasNoResponseFrame(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	resp := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(3, "block", nil, nil)))
	wantSSEHeaders(t, resp)
	recv(t, f.tools.entered, "the request to start")
	wantEmpty(t, c.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": 3})), http.StatusAccepted)
	if ev, err := nextEvent(t, testutil.NewSSEReader(resp.Body), true); !errors.Is(err, io.EOF) {
		t.Fatalf("cancelled stream: event %+v, error %v; want the end of the stream", ev, err)
	}
}

// A client that goes away cancels its request's context, in both modes.
func TestClientDisconnectCancels(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts mcphttp.Options
	}{{"sse", mcphttp.Options{}}, {"json", mcphttp.Options{JSONResponse: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			f := newFixture(t, mode.opts)
			c := f.initialized(t)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				resp, err := c.HTTP.Do(c.NewPost(ctx, testutil.CallTool(1, "waitctx", nil, nil)))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				errc <- err
			}()
			recv(t, f.tools.entered, "the request to start")
			cancel()
			cause := recv(t, f.tools.ctxDone, "the handler's context to end")
			if !errors.Is(cause, context.Canceled) {
				t.Fatalf("cause %v, want context.Canceled", cause)
			}
			if err := recv(t, errc, "the client to give up"); !errors.Is(err, context.Canceled) {
				t.Fatalf("client error %v", err)
			}
			// The id is released once the handler returned: the session keeps working.
			wantResult(t, c.Call(t, 2, "ping", nil), "2")
		})
	}
}

// Row 24 and §3.4/§3.5 row 1: stateless mode.
func TestStateless(t *testing.T) {
	f := newFixture(t, mcphttp.Options{Stateless: true})
	if f.h.Store() != nil {
		t.Fatal("a stateless handler has a store")
	}
	c := f.client()
	rep := c.Post(t, testutil.Initialize(1, "2025-11-25"))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("stateless initialize: %d %q", rep.Status, rep.Header.Get("Content-Type"))
	}
	if sid := rep.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Fatalf("stateless initialize issued session %q", sid)
	}
	wantResult(t, testutil.DecodeWire(t, rep.Body), "1")

	// Each POST is on its own: the initialize above left nothing behind.
	rep = c.Post(t, testutil.CallTool(2, "whoami", nil, nil))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("stateless request: %d %q", rep.Status, rep.Header.Get("Content-Type"))
	}
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, rep.Body), "2")); got != "nobody" {
		t.Fatalf("a stateless request saw client %q from an earlier POST", got)
	}
	// Nor does an in-flight request: the same id twice at once is fine.
	done := make(chan testutil.Reply, 1)
	go func() { done <- c.Post(t, testutil.CallTool(7, "block", nil, nil)) }()
	recv(t, f.tools.entered, "the request to start")
	wantResult(t, c.Call(t, 7, "ping", nil), "7")
	close(f.tools.release)
	if rep := recv(t, done, "the blocked request"); rep.Status != http.StatusOK {
		t.Fatalf("blocked request: %d %s", rep.Status, rep.Body)
	}

	wantEmpty(t, c.Post(t, testutil.Notification("notifications/initialized", nil)), http.StatusAccepted)
	// A session id is ignored, not looked up.
	c.SessionID = "whatever"
	wantResult(t, c.Call(t, 3, "ping", nil), "3")
	// The protocol header is still checked.
	f.raw(t, http.MethodPost, ping, "Accept", testutil.AcceptBoth, "MCP-Protocol-Version", "").
		WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+msgSupportedSuffix, `"p-1"`)

	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		rep := c.Do(t, c.NewRequest(context.Background(), m))
		rep.WantError(t, http.StatusMethodNotAllowed, -32600, msgMethodNotAllowed, "null")
		if a := rep.Header.Get("Allow"); a != "POST" {
			t.Fatalf("%s: Allow = %q, want POST", m, a)
		}
	}
	// 405 comes before the Accept check.
	f.raw(t, http.MethodGet, "", "Accept", "text/html").WantError(t, http.StatusMethodNotAllowed, -32600, msgMethodNotAllowed, "null")
}

// §3.4: the GET ladder.
func TestGetLadder(t *testing.T) {
	var allow atomic.Bool
	allow.Store(true)
	f := newFixture(t, mcphttp.Options{Principal: func(*http.Request) string {
		if allow.Load() {
			return "owner"
		}
		return "someone else"
	}})
	c := f.initialized(t)
	sid := c.SessionID
	// Row 2, before the session checks.
	f.raw(t, http.MethodGet, "", "Accept", "application/json").WantError(t, http.StatusNotAcceptable, -32600, msgNotAcceptableSSE, "null")
	f.raw(t, http.MethodGet, "", "Mcp-Session-Id", sid).WantError(t, http.StatusNotAcceptable, -32600, msgNotAcceptableSSE, "null")
	// Row 3.
	f.raw(t, http.MethodGet, "", "Accept", "text/event-stream").WantError(t, http.StatusBadRequest, -32600, msgMissingSession, "null")
	// Row 4.
	f.raw(t, http.MethodGet, "", "Accept", "text/event-stream", "Mcp-Session-Id", "no-such-session").
		WantError(t, http.StatusNotFound, -32600, msgNotFound, "null")
	// Row 5.
	allow.Store(false)
	f.raw(t, http.MethodGet, "", "Accept", "text/event-stream", "Mcp-Session-Id", sid).
		WantError(t, http.StatusForbidden, -32600, msgForbidden, "null")
	allow.Store(true)
	// Row 6.
	f.raw(t, http.MethodGet, "", "Accept", "text/event-stream", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "").
		WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+msgSupportedSuffix, "null")
	// Row 8, then row 7 for a second stream.
	resp := openStream(t, c, c.NewRequest(context.Background(), http.MethodGet))
	wantSSEHeaders(t, resp)
	f.raw(t, http.MethodGet, "", "Accept", "*/*", "Mcp-Session-Id", sid).
		WantError(t, http.StatusConflict, -32600, msgOneStream, "null")
	// Another session has its own stream.
	other := f.initialized(t)
	wantSSEHeaders(t, openStream(t, other, other.NewRequest(context.Background(), http.MethodGet)))
}

// §3.4 after row 8: broadcasts ride the GET stream, keepalives keep it warm, DELETE ends it.
func TestGetStream(t *testing.T) {
	f := newFixture(t, mcphttp.Options{KeepAlive: 20 * time.Millisecond})
	c := f.initialized(t)
	resp := openStream(t, c, c.NewRequest(context.Background(), http.MethodGet))
	wantSSEHeaders(t, resp)
	sr := testutil.NewSSEReader(resp.Body)

	// Keepalive comments arrive with nothing else to send.
	ev, err := nextEvent(t, sr, false)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.IsComment() || !strings.HasPrefix(ev.CommentText(), "ping ") {
		t.Fatalf("first item %+v, want a keepalive comment", ev)
	}
	if _, err := time.Parse(time.RFC3339, strings.TrimPrefix(ev.CommentText(), "ping ")); err != nil {
		t.Fatalf("keepalive time: %v", err)
	}

	// A tool added after initialize is announced on the stream.
	f.server.AddTool(&core.Tool{Name: "late", InputSchema: []byte(`{"type":"object"}`)},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("late"), nil
		})
	ev, err = nextEvent(t, sr, true)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "ToolListChangedNotification", []byte(ev.Data))
	if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != "notifications/tools/list_changed" {
		t.Fatalf("broadcast %s", ev.Data)
	}

	// DELETE ends the session and its stream.
	rep := c.Do(t, c.NewRequest(context.Background(), http.MethodDelete))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" || string(rep.Body) != `{"success":true}` {
		t.Fatalf("DELETE: %d %q %s", rep.Status, rep.Header.Get("Content-Type"), rep.Body)
	}
	for {
		ev, err := nextEvent(t, sr, false)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !ev.IsComment() {
			t.Fatalf("event after DELETE: %+v", ev)
		}
	}
}

// §3.5: the DELETE ladder.
func TestDeleteLadder(t *testing.T) {
	var allow atomic.Bool
	allow.Store(true)
	f := newFixture(t, mcphttp.Options{Principal: func(*http.Request) string {
		if allow.Load() {
			return "owner"
		}
		return "someone else"
	}})
	c := f.initialized(t)
	sid := c.SessionID
	f.raw(t, http.MethodDelete, "").WantError(t, http.StatusBadRequest, -32600, msgMissingSession, "null")
	f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", "no-such-session").WantError(t, http.StatusNotFound, -32600, msgNotFound, "null")
	allow.Store(false)
	f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid).WantError(t, http.StatusForbidden, -32600, msgForbidden, "null")
	allow.Store(true)
	f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "").
		WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+msgSupportedSuffix, "null")
	// An unknown version on the session is refused listing the versions the session can use.
	f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "x").
		WantError(t, http.StatusBadRequest, -32600, msgBadVersionPrefix+"x"+msgSupportedSuffix, "null")
	if f.h.Store().Len() != 1 {
		t.Fatal("a refused DELETE removed the session")
	}

	// An in-flight request of the session is cancelled by the DELETE.
	done := make(chan testutil.Reply, 1)
	go func() { done <- c.Post(t, testutil.CallTool(1, "waitctx", nil, nil)) }()
	recv(t, f.tools.entered, "the request to start")
	rep := f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" || string(rep.Body) != `{"success":true}` {
		t.Fatalf("DELETE: %d %q %s", rep.Status, rep.Header.Get("Content-Type"), rep.Body)
	}
	if cause := recv(t, f.tools.ctxDone, "the request to be cancelled"); !errors.Is(cause, core.ErrSessionClosed) {
		t.Fatalf("cause %v, want core.ErrSessionClosed", cause)
	}
	recv(t, done, "the cancelled request to end")
	if f.h.Store().Len() != 0 {
		t.Fatal("DELETE left the session in the store")
	}
	c.Post(t, ping).WantError(t, http.StatusNotFound, -32600, msgNotFound, `"p-1"`)
	f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", sid).WantError(t, http.StatusNotFound, -32600, msgNotFound, "null")
}

// A client that has the GET stream's headers gets every broadcast sent from then on: the stream
// is registered before the headers go out.
func TestGetStreamReadyWhenHeadersArrive(t *testing.T) {
	f := newFixture(t, mcphttp.Options{KeepAlive: -1})
	for i := range 20 {
		c := f.initialized(t)
		ctx, cancel := context.WithCancel(context.Background())
		resp := openStream(t, c, c.NewRequest(ctx, http.MethodGet))
		wantSSEHeaders(t, resp)
		f.server.NotifyToolsListChanged(context.Background())
		ev, err := nextEvent(t, testutil.NewSSEReader(resp.Body), true)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != "notifications/tools/list_changed" {
			t.Fatalf("round %d: %s", i, ev.Data)
		}
		cancel()
	}
}

// Rows 20 and 23: a server-to-client request rides the POST's stream, and the client's answer,
// POSTed on the same session, resolves it; an answer on another session does not.
func TestServerToClientRequestOnTheRequestStream(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	c := f.initialized(t)
	resp := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(1, "roots", nil, nil)))
	wantSSEHeaders(t, resp)
	sr := testutil.NewSSEReader(resp.Body)
	ev, err := nextEvent(t, sr, true)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "JSONRPCRequest", []byte(ev.Data))
	req := testutil.DecodeWire(t, []byte(ev.Data))
	if req.Method != "roots/list" || len(req.ID) == 0 || string(req.ID) == "null" {
		t.Fatalf("server-to-client request %s", ev.Data)
	}
	var id any
	if err := json.Unmarshal(req.ID, &id); err != nil {
		t.Fatal(err)
	}

	// The same id answered on another session: accepted, but it resolves nothing.
	other := f.initialized(t)
	wantEmpty(t, other.Post(t, testutil.Result(id, map[string]any{"roots": []any{map[string]any{"uri": "file:///other"}}})), http.StatusAccepted)
	// The answer on the right session.
	wantEmpty(t, c.Post(t, testutil.Result(id, map[string]any{"roots": []any{map[string]any{"uri": "file:///mine"}}})), http.StatusAccepted)

	ev, err = nextEvent(t, sr, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), "1")); got != "file:///mine" {
		t.Fatalf("tool saw roots %q, want file:///mine", got)
	}
}

// Server-to-client requests are refused where no stream can carry them.
func TestServerToClientRequestRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mcphttp.Options
		want string
	}{
		{"json", mcphttp.Options{JSONResponse: true}, "JSON response mode does not support server-to-client requests"},
		{"stateless", mcphttp.Options{Stateless: true}, "Stateless mode does not support server-to-client requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			c := f.client()
			if !tc.opts.Stateless {
				c.Initialize(t)
			}
			rep := c.Post(t, testutil.CallTool(1, "roots", nil, nil))
			if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
				t.Fatalf("%d %q", rep.Status, rep.Header.Get("Content-Type"))
			}
			if got := toolText(t, wantResult(t, rep.Message(t), "1")); !strings.Contains(got, tc.want) {
				t.Fatalf("tool error %q, want it to say %q", got, tc.want)
			}
		})
	}
}

// A legacy request answered on an SSE stream that finishes at once goes out as one response:
// the headers wait for the answer, so nothing is flushed before the handler ends and net/http
// sends it whole, with its length. A long call still gets its headers while it runs (see
// TestShutdown, which waits for them while its call blocks).
func TestQuickSSEAnswerIsOneResponse(t *testing.T) {
	ls := newLiveServer(mcphttp.Options{})
	defer ls.stop()
	defer ls.h.Close()
	c := ls.client()
	c.Initialize(t)
	resp := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(1, "echo", map[string]any{"text": "hi"}, nil)))
	defer resp.Body.Close()
	wantSSEHeaders(t, resp)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("Content-Length %d, Transfer-Encoding %v for a %d-byte answer: it was flushed in pieces", resp.ContentLength, resp.TransferEncoding, len(body))
	}
	if !strings.HasPrefix(string(body), "event: message\ndata: {") && !strings.HasPrefix(string(body), "data: {") || !strings.Contains(string(body), `"hi"`) {
		t.Errorf("body %q", body)
	}
}
