package mcphttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// addLateTools registers two tools whose goroutines outlive them:
//
//   - "straggler" starts a goroutine that reports progress up to 50 times, beginning at the
//     moment the handler returns, so its notifications race with the transport choosing and
//     writing the answer;
//   - "afterglow" starts one that waits for the request's context to end and only then reports
//     progress 50 times.
//
// Both stop at the first refused notification once their context ended.
func addLateTools(s *core.Server) {
	obj := json.RawMessage(`{"type":"object"}`)
	spam := func(ctx context.Context, req *core.ToolRequest) {
		for i := range 50 {
			if err := req.Progress(float64(i), 0, "late"); err != nil && ctx.Err() != nil {
				return
			}
		}
	}
	s.AddTool(&core.Tool{Name: "straggler", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		start := make(chan struct{})
		go func() {
			<-start
			spam(ctx, req)
		}()
		close(start)
		return core.TextResult("done"), nil
	})
	s.AddTool(&core.Tool{Name: "afterglow", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		go func() {
			<-ctx.Done()
			spam(ctx, req)
		}()
		return core.TextResult("done"), nil
	})
}

// readAnswer sends req and reads the whole answer.
func readAnswer(t *testing.T, hc *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp, body
}

// checkCleanAnswer checks that an answer to request id is well formed whatever shape it took: a
// JSON answer is exactly one JSON object (Content-Length matching, no byte after it) and is the
// response; an SSE answer is progress notifications followed by the response as its very last
// frame. It reports whether the answer was an SSE stream.
func checkCleanAnswer(t *testing.T, resp *http.Response, body []byte, id string) (sse bool) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %q", resp.StatusCode, body)
	}
	switch ct := resp.Header.Get("Content-Type"); ct {
	case "application/json":
		dec := json.NewDecoder(bytes.NewReader(body))
		var w testutil.Wire
		if err := dec.Decode(&w); err != nil {
			t.Fatalf("JSON answer does not decode: %v: %q", err, body)
		}
		if rest, _ := io.ReadAll(dec.Buffered()); len(bytes.TrimSpace(rest)) > 0 || dec.More() {
			t.Fatalf("bytes after the JSON answer: %q", body)
		}
		if n := resp.Header.Get("Content-Length"); n != "" && n != strconv.Itoa(len(body)) {
			t.Fatalf("Content-Length %s for a %d-byte body", n, len(body))
		}
		if w.Method != "" || string(w.ID) != id || w.Result == nil {
			t.Fatalf("JSON answer is not the response to %s: %q", id, body)
		}
		return false
	case "text/event-stream":
		sr := testutil.NewSSEReader(bytes.NewReader(body))
		var frames []testutil.Wire
		for {
			ev, err := sr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("SSE answer: %v: %q", err, body)
			}
			if ev.IsComment() {
				if len(frames) > 0 && frames[len(frames)-1].Method == "" {
					t.Fatalf("a comment after the response: %q", body)
				}
				continue
			}
			frames = append(frames, testutil.DecodeWire(t, []byte(ev.Data)))
		}
		if len(frames) == 0 {
			t.Fatalf("empty SSE answer")
		}
		last := frames[len(frames)-1]
		if last.Method != "" || string(last.ID) != id || last.Result == nil {
			t.Fatalf("the last frame is not the response to %s: %q", id, body)
		}
		for _, w := range frames[:len(frames)-1] {
			if w.Method != "notifications/progress" {
				t.Fatalf("frame before the response: %s %s (answer %q)", w.Method, w.ID, body)
			}
		}
		return true
	default:
		t.Fatalf("Content-Type %q: %q", ct, body)
		return false
	}
}

// Notifications a tool's goroutine sends while the request is being answered, or after, never
// corrupt the answer: a 2026-07-28 request answers either one clean JSON object or an SSE stream
// whose last frame is the response; a legacy request's SSE stream ends with the response.
func TestLateNotificationsNeverFollowTheAnswer(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	addLateTools(f.server)
	const rounds = 150
	for _, tool := range []string{"straggler", "afterglow"} {
		t.Run("modern "+tool, func(t *testing.T) {
			c := f.client()
			var streamed int
			for i := range rounds {
				body := withMeta(i+1, "tools/call", map[string]any{"name": tool}, map[string]any{"progressToken": "p"})
				resp, answer := readAnswer(t, c.HTTP, c.NewModernPost(context.Background(), body))
				if checkCleanAnswer(t, resp, answer, strconv.Itoa(i+1)) {
					streamed++
				}
			}
			t.Logf("%d of %d answers were SSE streams", streamed, rounds)
		})
		t.Run("legacy "+tool, func(t *testing.T) {
			c := f.initialized(t)
			for i := range rounds {
				body := testutil.CallTool(i+1, tool, nil, "p")
				resp, answer := readAnswer(t, c.HTTP, c.NewPost(context.Background(), body))
				if !checkCleanAnswer(t, resp, answer, strconv.Itoa(i+1)) {
					t.Fatalf("legacy answer in SSE mode was not a stream: %q", answer)
				}
			}
		})
	}
}
