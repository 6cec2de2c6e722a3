package middleware

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/rs/zerolog"
)

// streaming answers with the exchange's stream: one message, then whatever last does with it.
func streaming(t *testing.T, got **SSEWriter, last func(*SSEWriter)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := ExchangeFrom(r.Context())
		if !ex.CanStream() {
			RefuseNoSSE(w, r, jsonrpc.ID{})
			return
		}
		sse := ex.SSE(w)
		if ex.SSE(w) != sse {
			t.Error("a second call of Exchange.SSE made another writer")
		}
		if got != nil {
			*got = sse
		}
		if err := sse.WriteMessage([]byte(`{"n":1}`)); err != nil {
			t.Error(err)
		}
		if last != nil {
			last(sse)
		}
	})
}

// The layer ends the stream the handler took once the handler returned: the writer is closed
// (no keepalive comment or late write reaches the response after it), and the response ends
// cleanly, or breaks when the handler aborted the stream.
func TestSSELayerEndsTheStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		last    func(*SSEWriter)
		wantErr error
	}{
		{"left open", nil, nil},
		{"closed by the handler", (*SSEWriter).Close, nil},
		{"aborted", (*SSEWriter).Abort, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sse *SSEWriter
			url := newServer(t, SSE(SSEOptions{KeepAlive: time.Millisecond})(streaming(t, &sse, tc.last))).URL
			resp, err := http.Post(url, "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("reading the stream: %v, want %v (body %q)", err, tc.wantErr, body)
			}
			if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(string(body), "data: {\"n\":1}\n\n") {
				t.Fatalf("answer %q %q", resp.Header.Get("Content-Type"), body)
			}
			select {
			case <-sse.Done():
			default:
				t.Fatal("the writer is still open after the handler returned")
			}
			if err := sse.WriteMessage([]byte(`{"late":true}`)); !errors.Is(err, ErrSSEClosed) {
				t.Fatalf("a late write: %v, want ErrSSEClosed", err)
			}
		})
	}
}

// A handler that panics leaves no stream open: its keepalive never writes to the response
// Recover answered.
func TestSSELayerEndsTheStreamOfAPanic(t *testing.T) {
	quiet := zerolog.Nop()
	var sse *SSEWriter
	h := Recover(RecoverOptions{Logger: &quiet})(SSE(SSEOptions{KeepAlive: time.Millisecond})(
		streaming(t, &sse, func(*SSEWriter) { panic("boom") })))
	func() {
		// The stream had started: Recover aborts the handler, as net/http expects.
		defer func() {
			if err, _ := recover().(error); !errors.Is(err, http.ErrAbortHandler) {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", err)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	}()
	select {
	case <-sse.Done():
	default:
		t.Fatal("the writer is still open after the handler panicked")
	}
}

// deadlineRecorder is a ResponseWriter that records the write deadlines set on it.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// What net/http writes after a stream (the chunk that ends it, or the whole answer of a stream
// held until its final frame) gets WriteTimeout, a deadline that has passed when the handler
// aborted the stream, and nothing when the bound is off or no stream started. A bound of a
// second or more may be early by as much as the sweep of held headers is late reading the clock
// (a few milliseconds; the test allows a second).
func TestSSELayerBoundsTheTail(t *testing.T) {
	final := func(s *SSEWriter) { _ = s.WriteFinal([]byte(`{}`)) }
	for _, tc := range []struct {
		name   string
		opts   SSEOptions
		stream bool
		held   bool // started deferred, no frame before the last step
		last   func(*SSEWriter)
		want   time.Duration // from the end of the handler; -1: no deadline left set
		early  time.Duration // how early the deadline may be
	}{
		{"default", SSEOptions{}, true, false, nil, DefaultSSEWriteTimeout, time.Second},
		{"held answer", SSEOptions{}, true, true, final, DefaultSSEWriteTimeout, time.Second},
		{"WriteTimeout", SSEOptions{WriteTimeout: time.Minute}, true, false, nil, time.Minute, time.Second},
		{"short WriteTimeout", SSEOptions{WriteTimeout: time.Second - 1}, true, true, final, time.Second - 1, 0},
		{"aborted", SSEOptions{}, true, false, (*SSEWriter).Abort, 0, 0},
		{"bound off", SSEOptions{WriteTimeout: -1}, true, false, nil, -1, 0},
		{"no stream", SSEOptions{}, false, false, nil, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
			var ended time.Time
			h := SSE(tc.opts)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() { ended = time.Now() }()
				if !tc.stream {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				sse := ExchangeFrom(r.Context()).SSE(w)
				if tc.held {
					_ = sse.StartDeferred(time.Hour)
				} else {
					_ = sse.WriteMessage([]byte(`{}`))
				}
				if tc.last != nil {
					tc.last(sse)
				}
			}))
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			var last time.Time
			if n := len(rec.deadlines); n > 0 {
				last = rec.deadlines[n-1]
			}
			switch {
			case tc.want < 0:
				if !last.IsZero() {
					t.Fatalf("deadline %v left on the response", last)
				}
			case last.IsZero():
				t.Fatal("no deadline bounds what follows the stream")
			case last.Before(ended.Add(tc.want-tc.early)) || last.After(time.Now().Add(tc.want)):
				t.Fatalf("deadline %v after the handler returned, want %v", last.Sub(ended), tc.want)
			}
		})
	}
}

// eventRecorder is a ResponseWriter that logs its writes, flushes and write deadlines in order
// ("write", "flush", "deadline" or "clear").
type eventRecorder struct {
	*httptest.ResponseRecorder
	events []string
}

func (e *eventRecorder) Write(p []byte) (int, error) {
	e.events = append(e.events, "write")
	return e.ResponseRecorder.Write(p)
}

func (e *eventRecorder) Flush() { e.events = append(e.events, "flush") }

func (e *eventRecorder) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		e.events = append(e.events, "clear")
	} else {
		e.events = append(e.events, "deadline")
	}
	return nil
}

// The final frame of a stream whose headers are held (one quick request's answer) that fits the
// response's buffer is written under no deadline of its own behind the SSE layer: nothing reaches
// the connection before the handler returned, and the layer's deadline then bounds it. A larger
// frame may reach the connection in the write, which its own deadline bounds; so does every
// frame of a writer no layer ends.
func TestSSEHeldFinalFrameDeadline(t *testing.T) {
	small, large := []byte(`{"n":1}`), []byte(`"`+strings.Repeat("x", heldFrameBuffered)+`"`)
	for _, tc := range []struct {
		name  string
		layer bool
		opts  SSEOptions
		frame []byte
		want  string
	}{
		{"small", true, SSEOptions{}, small, "write deadline"},
		{"large", true, SSEOptions{}, large, "deadline write deadline"},
		{"bound off", true, SSEOptions{WriteTimeout: -1}, small, "write"},
		{"no layer", false, SSEOptions{}, small, "deadline write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &eventRecorder{ResponseRecorder: httptest.NewRecorder()}
			handler := func(w http.ResponseWriter, r *http.Request) {
				var sse *SSEWriter
				if tc.layer {
					sse = ExchangeFrom(r.Context()).SSE(w)
				} else {
					sse = NewSSEWriter(w, SSEWriterOptions{WriteTimeout: tc.opts.WriteTimeout})
					defer sse.Close()
				}
				_ = sse.StartDeferred(time.Hour)
				if err := sse.WriteFinal(tc.frame); err != nil {
					t.Error(err)
				}
			}
			SSE(tc.opts)(http.HandlerFunc(handler)).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			if got := strings.Join(rec.events, " "); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
			if !strings.HasSuffix(rec.Body.String(), string(tc.frame)+"\n\n") {
				t.Fatalf("body %q", rec.Body.String())
			}
		})
	}
}

// Without an SSE layer in front the Exchange has no stream to give; the innermost of two nested
// layers gives it, with its own options.
func TestSSELayerPlacement(t *testing.T) {
	var ex Exchange
	if ex.CanStream() || ex.SSE(httptest.NewRecorder()) != nil {
		t.Fatal("an Exchange with no SSE layer in front gave a stream")
	}
	if (*Exchange)(nil).CanStream() {
		t.Fatal("a request without an Exchange can stream")
	}
	url := newServer(t, Decode(DecodeOptions{})(streaming(t, nil, nil))).URL
	status, h, body := post(t, url, "application/json", `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	wantError(t, status, h, body, http.StatusInternalServerError,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"`+msgNoSSE+`"}}`)

	var sse *SSEWriter
	outer := SSE(SSEOptions{KeepAlive: time.Hour, WriteTimeout: time.Hour})
	inner := SSE(SSEOptions{KeepAlive: -1, WriteTimeout: time.Minute})
	outer(inner(streaming(t, &sse, nil))).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if sse.cfg.keepAlive != 0 || sse.cfg.writeTimeout != time.Minute {
		t.Fatalf("keepalive %v, write timeout %v: not the inner layer's", sse.cfg.keepAlive, sse.cfg.writeTimeout)
	}
}

// A stream made through the layer is an ordinary event stream on the wire.
func TestSSELayerStreamOnTheWire(t *testing.T) {
	url := newServer(t, SSE(SSEOptions{})(streaming(t, nil, func(s *SSEWriter) {
		_ = s.WriteFinal([]byte(`{"n":2}`))
	}))).URL
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if got := strings.Join(lines, "|"); got != `data: {"n":1}||data: {"n":2}|` {
		t.Fatalf("frames %q", got)
	}
}

// BenchmarkSSELayerAnswer: one quick request's stream behind the SSE layer, as the legacy
// endpoint writes it (a deferred start, the answer as the final frame), and the layer's end.
func BenchmarkSSELayerAnswer(b *testing.B) {
	w := &memFlusher{h: http.Header{}}
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	h := SSE(SSEOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := ExchangeFrom(r.Context()).SSE(w)
		_ = s.StartDeferred(20 * time.Millisecond)
		if err := s.WriteFinal(data); err != nil {
			b.Fatal(err)
		}
	}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r, _ = ensureExchange(r)
	b.ReportAllocs()
	for b.Loop() {
		w.buf.Reset()
		h.ServeHTTP(w, r)
	}
}

// TestSSEOneFrameAnswerHasItsLength: a stream started deferred whose only frame is its final
// one is sent with its length, not chunked, also when a layer in front flushes it before the
// handler returned (as the session layer does before it releases a request's claim): then
// net/http sends it in one write instead of ending the chunked body in a second.
func TestSSEOneFrameAnswerHasItsLength(t *testing.T) {
	const frame = "data: {\"n\":1}\n\n"
	flushFirst := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Error(err)
			}
		})
	}
	url := newServer(t, flushFirst(SSE(SSEOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := ExchangeFrom(r.Context()).SSE(w)
		if err := s.StartDeferred(time.Hour); err != nil {
			t.Error(err)
		}
		if err := s.WriteFinal([]byte(`{"n":1}`)); err != nil {
			t.Error(err)
		}
	})))).URL
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != frame || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("body %q, headers %v", body, resp.Header)
	}
	if resp.ContentLength != int64(len(frame)) || len(resp.TransferEncoding) != 0 {
		t.Fatalf("Content-Length %d, Transfer-Encoding %v: want the frame's length, not chunked", resp.ContentLength, resp.TransferEncoding)
	}
}

// TestSSEPanicWhileHeadersHeld: a handler that panics after StartDeferred, before any frame, has
// sent nothing yet (the status waits with the headers), so the recovering layer answers 500
// with a JSON-RPC error instead of an empty stream.
func TestSSEPanicWhileHeadersHeld(t *testing.T) {
	quiet := zerolog.Nop()
	h := Recover(RecoverOptions{Logger: &quiet})(SSE(SSEOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = ExchangeFrom(r.Context()).SSE(w).StartDeferred(time.Hour)
		panic("boom")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Type") != "application/json" ||
		!strings.Contains(rec.Body.String(), "-32603") {
		t.Fatalf("status %d, Content-Type %q, body %q: want 500 with a JSON-RPC internal error", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}
