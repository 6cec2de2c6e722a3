package middleware

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/internal/headerval"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// sseClient has a bound so that a broken flush fails the test instead of hanging it.
var sseClient = &http.Client{Timeout: 10 * time.Second}

// onlyUnwrap hides every optional interface of the writer it wraps except Unwrap.
type onlyUnwrap struct{ w http.ResponseWriter }

func (o onlyUnwrap) Header() http.Header           { return o.w.Header() }
func (o onlyUnwrap) Write(p []byte) (int, error)   { return o.w.Write(p) }
func (o onlyUnwrap) WriteHeader(code int)          { o.w.WriteHeader(code) }
func (o onlyUnwrap) Unwrap() http.ResponseWriter   { return o.w }
func (o opaqueWriter) Header() http.Header         { return o.w.Header() }
func (o opaqueWriter) Write(p []byte) (int, error) { return o.w.Write(p) }
func (o opaqueWriter) WriteHeader(code int)        { o.w.WriteHeader(code) }

// opaqueWriter hides everything, Unwrap included: it cannot flush.
type opaqueWriter struct{ w http.ResponseWriter }

// TestSSEHeadersArriveBeforeAnyEvent reads the response headers while the handler is still
// blocked after Start, through several wrappers.
func TestSSEHeadersArriveBeforeAnyEvent(t *testing.T) {
	logger := zerolog.New(io.Discard)
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
	}{
		{"plain", func(h http.Handler) http.Handler { return h }},
		{"wrapper with only Unwrap", func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(onlyUnwrap{w}, r) })
		}},
		{"the package's layers", func(h http.Handler) http.Handler {
			return Recover(RecoverOptions{Logger: &logger})(Tracing(TracingOptions{Observer: otelmcp.New(otelmcp.Options{})})(RequestLog(RequestLogOptions{Logger: &logger})(h)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			result := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := NewSSEWriter(w, SSEWriterOptions{})
				defer s.Close()
				if err := s.Start(); err != nil {
					result <- err
					return
				}
				<-release
				result <- s.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/message"}`))
			})
			url := newServer(t, tc.wrap(h)).URL
			resp, err := sseClient.Get(url)
			if err != nil {
				close(release)
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// The handler is still blocked on release here.
			for k, v := range map[string]string{
				"Content-Type":      "text/event-stream",
				"Cache-Control":     "no-cache",
				"Connection":        "keep-alive",
				"X-Accel-Buffering": "no",
			} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
			close(release)
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-result; err != nil {
				t.Fatal(err)
			}
			if want := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"; string(body) != want {
				t.Errorf("body %q, want %q", body, want)
			}
		})
	}
}

func TestSSEFrames(t *testing.T) {
	errs := make(chan error, 10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := NewSSEWriter(w, SSEWriterOptions{})
		errs <- s.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"x"}`)) // starts implicitly
		errs <- s.WriteEvent("message", []byte(`{"id":1}`))
		errs <- s.WriteComment("hello")
		errs <- s.WriteMessage([]byte("{\n  \"a\": 1\r\n}\n"))
		errs <- s.WriteComment("two\nlines")
		if err := s.WriteEvent("bad\nname", []byte(`{}`)); err == nil {
			errs <- errors.New("an event name with a line break was accepted")
		}
		errs <- s.WriteMessage([]byte(`{"after":"rejected event"}`))
		s.Close()
		if err := s.WriteMessage([]byte(`{}`)); !errors.Is(err, ErrSSEClosed) {
			errs <- fmt.Errorf("write after Close = %w, want ErrSSEClosed", err)
		}
		select {
		case <-s.Done():
		default:
			errs <- errors.New("Done not closed after Close")
		}
		if s.Err() != nil {
			errs <- fmt.Errorf("Err after a plain Close = %w", s.Err())
		}
		close(errs)
	})
	url := newServer(t, h).URL
	resp, err := sseClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	want := "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n" +
		"event: message\ndata: {\"id\":1}\n\n" +
		": hello\n\n" +
		"data: {\ndata:   \"a\": 1\ndata: }\n\n" +
		": two\n: lines\n\n" +
		"data: {\"after\":\"rejected event\"}\n\n"
	if string(body) != want {
		t.Errorf("body\n%q\nwant\n%q", body, want)
	}
}

var pingLine = regexp.MustCompile(`^: ping \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$`)

func TestSSEKeepAlive(t *testing.T) {
	handlerDone := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: 5 * time.Millisecond})
		defer s.Close()
		if err := s.Start(); err != nil {
			return
		}
		<-r.Context().Done()
	})
	url := newServer(t, h).URL
	resp, err := sseClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		if !pingLine.MatchString(strings.TrimSuffix(line, "\n")) {
			t.Fatalf("ping %d: line %q", i, line)
		}
		if blank, _ := br.ReadString('\n'); blank != "\n" {
			t.Fatalf("ping %d not ended by a blank line: %q", i, blank)
		}
	}
	resp.Body.Close()
	<-handlerDone
}

// smallBufferListener shrinks the send buffer of accepted connections so a client that stops
// reading stalls the server quickly.
type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

func TestSSEWriteTimeoutBreaksStalledStream(t *testing.T) {
	quiet := zerolog.New(io.Discard)
	t.Run("plain", func(t *testing.T) {
		testStalledStream(t, func(h http.Handler) http.Handler { return h })
	})
	t.Run("through the package's layers", func(t *testing.T) {
		// The deadline reaches the connection through every wrapper's Unwrap.
		testStalledStream(t, func(h http.Handler) http.Handler {
			return Recover(RecoverOptions{Logger: &quiet})(Tracing(TracingOptions{Observer: otelmcp.New(otelmcp.Options{})})(RequestLog(RequestLogOptions{Logger: &quiet})(h)))
		})
	})
}

func testStalledStream(t *testing.T, wrap func(http.Handler) http.Handler) {
	type outcome struct {
		err, later error
		frames     int
		done       bool
		broken     []error
	}
	results := make(chan outcome, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var mu sync.Mutex
		var broken []error
		s := NewSSEWriter(w, SSEWriterOptions{
			WriteTimeout: 50 * time.Millisecond,
			KeepAlive:    time.Hour,
			OnBroken: func(err error) {
				mu.Lock()
				broken = append(broken, err)
				mu.Unlock()
			},
		})
		defer s.Close()
		payload := bytes.Repeat([]byte("x"), 256<<10)
		var o outcome
		for o.frames = 0; o.frames < 4000; o.frames++ {
			if o.err = s.WriteMessage(payload); o.err != nil {
				break
			}
		}
		o.later = s.WriteComment("after")
		select {
		case <-s.Done():
			o.done = true
		default:
		}
		mu.Lock()
		o.broken = broken
		mu.Unlock()
		results <- o
	})
	srv := httptest.NewUnstartedServer(wrap(h))
	srv.Listener = smallBufferListener{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// Never read from conn.
	var o outcome
	select {
	case o = <-results:
	case <-time.After(4 * time.Second):
		conn.Close() // unblock the handler so the server can shut down
		t.Fatal("a write to a client that never reads did not fail within 4s")
	}
	if o.err == nil {
		t.Fatalf("%d frames written to a client that never reads, no error", o.frames)
	}
	if !errors.Is(o.later, o.err) {
		t.Errorf("a later write returned %v, want the first error %v", o.later, o.err)
	}
	if !o.done {
		t.Error("Done not closed after the write error")
	}
	if len(o.broken) != 1 || !errors.Is(o.broken[0], o.err) {
		t.Errorf("OnBroken called with %v, want once with %v", o.broken, o.err)
	}
}

// TestSSEOutlivesServerWriteTimeout checks that the stream clears the server's WriteTimeout: a
// keepalive sent long after it passed still arrives.
func TestSSEOutlivesServerWriteTimeout(t *testing.T) {
	for _, wt := range []time.Duration{0, -1} { // per-write deadlines on, and off
		t.Run(fmt.Sprint("WriteTimeout=", wt), func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: 150 * time.Millisecond, WriteTimeout: wt})
				defer s.Close()
				if s.Start() != nil {
					return
				}
				select {
				case <-r.Context().Done():
				case <-s.Done():
				}
			})
			srv := httptest.NewUnstartedServer(h)
			srv.Config.WriteTimeout = 30 * time.Millisecond
			srv.Start()
			t.Cleanup(srv.Close)
			resp, err := sseClient.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || !pingLine.MatchString(strings.TrimSuffix(line, "\n")) {
				t.Fatalf("first keepalive: %q, %v", line, err)
			}
		})
	}
}

func TestSSEStartNeedsFlusher(t *testing.T) {
	result := make(chan error, 3)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var broken error
		s := NewSSEWriter(opaqueWriter{w}, SSEWriterOptions{OnBroken: func(err error) { broken = err }})
		err := s.Start()
		result <- err
		result <- s.WriteMessage([]byte(`{}`))
		result <- broken
	})
	url := newServer(t, h).URL
	resp, err := sseClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	startErr, writeErr, broken := <-result, <-result, <-result
	if !errors.Is(startErr, http.ErrNotSupported) {
		t.Errorf("Start = %v, want http.ErrNotSupported", startErr)
	}
	if !errors.Is(writeErr, startErr) || !errors.Is(broken, startErr) {
		t.Errorf("later write %v, OnBroken %v; want both %v", writeErr, broken, startErr)
	}
}

// TestSSEConcurrentWriters checks that frames from many goroutines and the keepalive timer never
// interleave.
func TestSSEConcurrentWriters(t *testing.T) {
	const writers, each = 8, 50
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: time.Millisecond})
		defer s.Close()
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				for i := range each {
					_ = s.WriteMessage(fmt.Appendf(nil, `{"g":%d,"i":%d,"pad":"%s"}`, g, i, strings.Repeat("p", 3000)))
				}
			})
		}
		wg.Wait()
	})
	url := newServer(t, h).URL
	resp, err := sseClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	frame := regexp.MustCompile(`^(: ping \S+|data: \{"g":\d,"i":\d+,"pad":"p+"\})$`)
	data := 0
	for _, f := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		if !frame.MatchString(f) {
			t.Fatalf("garbled frame %.80q", f)
		}
		if strings.HasPrefix(f, "data: ") {
			data++
			if !strings.Contains(f, `"pad":"`+strings.Repeat("p", 3000)+`"}`) {
				t.Fatalf("frame with a garbled payload %.80q", f)
			}
		}
	}
	if data != writers*each {
		t.Errorf("%d data frames, want %d", data, writers*each)
	}
}

// TestSSEFullEventsAndRetry covers WriteSSE (id, event, retry and data fields; the priming form
// with empty data) and WriteRetry, with the exact bytes on the wire.
func TestSSEFullEventsAndRetry(t *testing.T) {
	errs := make(chan error, 16)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := NewSSEWriter(w, SSEWriterOptions{})
		defer s.Close()
		errs <- s.WriteSSE(SSEEvent{ID: "3-0", Retry: 1500 * time.Millisecond}) // priming: starts the stream
		errs <- s.WriteSSE(SSEEvent{ID: "3-1", Data: []byte(`{"a":1}`)})
		errs <- s.WriteSSE(SSEEvent{Event: "note", Data: []byte("x\ny")})
		errs <- s.WriteRetry(2 * time.Second)
		errs <- s.WriteRetry(time.Microsecond) // under a millisecond: nothing
		errs <- s.WriteSSE(SSEEvent{Retry: time.Microsecond, Data: []byte("z")})
		for _, bad := range []SSEEvent{{ID: "a\nb"}, {ID: "a\rb"}, {ID: "a\x00b"}, {Event: "e\nf"}} {
			if err := s.WriteSSE(bad); err == nil {
				errs <- fmt.Errorf("WriteSSE(%q) was accepted", bad)
			}
		}
		errs <- s.WriteSSE(SSEEvent{ID: "3-2", Data: []byte("after")})
		close(errs)
	})
	resp, err := sseClient.Get(newServer(t, h).URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	want := "retry: 1500\nid: 3-0\ndata: \n\n" +
		"id: 3-1\ndata: {\"a\":1}\n\n" +
		"event: note\ndata: x\ndata: y\n\n" +
		"retry: 2000\n\n" +
		"data: z\n\n" +
		"id: 3-2\ndata: after\n\n"
	if string(body) != want {
		t.Errorf("body\n%q\nwant\n%q", body, want)
	}
}

// TestSSEWriteFinal checks that the final frame is the last thing on the wire even while other
// goroutines and the keepalive timer keep writing: WriteFinal closes the writer in the same step,
// later writes are refused with ErrSSEClosed, Done is closed and the writer is not broken.
func TestSSEWriteFinal(t *testing.T) {
	const writers = 4
	type outcome struct {
		final, after, errAfter error
		done                   bool
	}
	got := make(chan outcome, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: time.Millisecond})
		defer s.Close()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				for i := 0; ; i++ {
					err := s.WriteMessage(fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i))
					if err != nil {
						select {
						case <-stop:
							return
						default:
						}
					}
				}
			})
		}
		time.Sleep(5 * time.Millisecond)
		var o outcome
		o.final = s.WriteFinal([]byte(`{"final":true}`))
		close(stop)
		wg.Wait()
		time.Sleep(5 * time.Millisecond) // keepalive ticks, had the timer survived
		o.after = s.WriteComment("late")
		o.errAfter = s.Err()
		select {
		case <-s.Done():
			o.done = true
		default:
		}
		got <- o
	})
	resp, err := sseClient.Get(newServer(t, h).URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	o := <-got
	if o.final != nil || !errors.Is(o.after, ErrSSEClosed) || o.errAfter != nil || !o.done {
		t.Fatalf("WriteFinal %v, write after it %v, Err %v, Done closed %v", o.final, o.after, o.errAfter, o.done)
	}
	if !strings.HasSuffix(string(body), "\n\ndata: {\"final\":true}\n\n") {
		t.Fatalf("the stream does not end with the final frame: %q", body[max(0, len(body)-200):])
	}
	if n := strings.Count(string(body), "final"); n != 1 {
		t.Fatalf("final frame %d times", n)
	}
}

// TestSSEWriteFinalSSE checks the full-event form: the exact frame, and a refused id that closes
// the writer all the same (nothing may follow a final frame, not even a corrected one).
func TestSSEWriteFinalSSE(t *testing.T) {
	errs := make(chan error, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			s := NewSSEWriter(w, SSEWriterOptions{})
			defer s.Close()
			errs <- s.WriteMessage([]byte("first"))
			errs <- s.WriteFinalSSE(SSEEvent{ID: "1\n2", Data: []byte("x")})
			errs <- s.WriteMessage([]byte("second"))
			return
		}
		s := NewSSEWriter(w, SSEWriterOptions{})
		defer s.Close()
		errs <- s.WriteFinalSSE(SSEEvent{ID: "7-3", Event: "message", Data: []byte(`{"a":1}`)})
	})
	srv := newServer(t, h)
	resp, err := sseClient.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if want := "id: 7-3\nevent: message\ndata: {\"a\":1}\n\n"; string(body) != want {
		t.Fatalf("body %q, want %q", body, want)
	}

	resp, err = sseClient.Get(srv.URL + "/bad")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	first, bad, second := <-errs, <-errs, <-errs
	if first != nil || !errors.Is(bad, errIDLineBreak) || !errors.Is(second, ErrSSEClosed) {
		t.Fatalf("errors %v, %v, %v", first, bad, second)
	}
	if string(body) != "data: first\n\n" {
		t.Fatalf("body %q", body)
	}
}

// A deferred start holds the headers back: a stream that ends with WriteFinal before the delay
// goes out as one plain response (net/http then knows its length: nothing was flushed), and one
// that stays open gets its headers once the delay is up, before any event, then its events.
func TestSSEStartDeferred(t *testing.T) {
	const frame = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	t.Run("quick", func(t *testing.T) {
		url := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := NewSSEWriter(w, SSEWriterOptions{})
			defer s.Close()
			if err := s.StartDeferred(time.Hour); err != nil {
				t.Error(err)
			}
			if err := s.WriteFinal([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); err != nil {
				t.Error(err)
			}
		})).URL
		resp, err := sseClient.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
			t.Errorf("headers %v", resp.Header)
		}
		if resp.ContentLength != int64(len(frame)) || len(resp.TransferEncoding) != 0 {
			t.Errorf("Content-Length %d, Transfer-Encoding %v: the response was flushed before it ended", resp.ContentLength, resp.TransferEncoding)
		}
		if string(body) != frame {
			t.Errorf("body %q, want %q", body, frame)
		}
	})
	for _, ka := range []time.Duration{-1, time.Hour} {
		t.Run(fmt.Sprintf("long, keepalive %v", ka), func(t *testing.T) {
			release := make(chan struct{})
			url := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: ka})
				defer s.Close()
				if err := s.StartDeferred(heldTick); err != nil {
					t.Error(err)
				}
				<-release
				if err := s.WriteMessage([]byte("one")); err != nil {
					t.Error(err)
				}
				if err := s.WriteFinal([]byte("two")); err != nil {
					t.Error(err)
				}
			})).URL
			resp, err := sseClient.Get(url)
			if err != nil {
				close(release)
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// The handler is still blocked: the sweep sent the headers.
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.ContentLength != -1 {
				t.Errorf("status %d, headers %v, length %d", resp.StatusCode, resp.Header, resp.ContentLength)
			}
			close(release)
			body, _ := io.ReadAll(resp.Body)
			if want := "data: one\n\ndata: two\n\n"; string(body) != want {
				t.Errorf("body %q, want %q (no keepalive comment comes before the first event)", body, want)
			}
		})
	}
	t.Run("Start after a deferred start sends the headers", func(t *testing.T) {
		release := make(chan struct{})
		url := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := NewSSEWriter(w, SSEWriterOptions{})
			defer s.Close()
			_ = s.StartDeferred(time.Hour)
			if err := s.Start(); err != nil {
				t.Error(err)
			}
			<-release
		})).URL
		resp, err := sseClient.Get(url)
		close(release)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
}

// A writer's frame buffer comes from a pool and goes back when it closes: a stream that writes
// one final frame allocates no buffer for it.
func TestSSEFrameBufferPooled(t *testing.T) {
	w := &memFlusher{h: http.Header{}}
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	write := func() {
		w.buf.Reset()
		s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: -1, WriteTimeout: -1})
		_ = s.WriteFinal(data)
		s.Close()
	}
	write()
	// The writer itself, which holds the header values too: nothing for the frame. (The race
	// detector makes sync.Pool drop a quarter of what it is given, hence the margin.)
	if n := testing.AllocsPerRun(200, write); n > 1.5 {
		t.Errorf("a one-frame stream allocates %v times, want 1", n)
	}
	if want := "data: " + string(data) + "\n\n"; w.buf.String() != want {
		t.Errorf("frame %q", w.buf.String())
	}
}

// Every stream's header values are the ones every response shares (internal/headerval), however
// it started: setting them allocates nothing, and a response that outlives its writer (a listen
// stream's, whose writer is closed once the headers are out) does not keep the writer alive
// through its header map. A one-frame answer's Content-Length is the shared text too.
func TestSSEHeaderValuesShared(t *testing.T) {
	same := func(a, b []string) bool { return len(a) == 1 && unsafe.SliceData(a) == unsafe.SliceData(b) }
	for _, tc := range []struct {
		name   string
		start  func(*SSEWriter)
		length bool // the response carries the final frame's length
	}{
		{"deferred", func(s *SSEWriter) { _ = s.StartDeferred(time.Hour); _ = s.WriteFinal([]byte("x")) }, true},
		{"final frame", func(s *SSEWriter) { _ = s.WriteFinal([]byte("x")) }, false},
		{"Start", func(s *SSEWriter) { _ = s.Start() }, false},
		{"first frame", func(s *SSEWriter) { _ = s.WriteMessage([]byte("x")) }, false},
	} {
		w := &memFlusher{h: http.Header{}}
		s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: -1})
		tc.start(s)
		s.Close()
		for k, v := range map[string][]string{"Content-Type": headerval.EventStream, "Cache-Control": headerval.NoCache,
			"Connection": headerval.KeepAlive, "X-Accel-Buffering": headerval.No} {
			if !same(w.h[k], v) {
				t.Errorf("%s: %s is %q, not the shared %q", tc.name, k, w.h[k], v)
			}
		}
		if cl := w.h["Content-Length"]; tc.length != (cl != nil) || tc.length && !same(cl, headerval.Length(w.buf.Len())) {
			t.Errorf("%s: Content-Length %q for a body of %d bytes (want it: %v, shared)", tc.name, cl, w.buf.Len(), tc.length)
		}
	}
}

// memFlusher is an in-memory ResponseWriter that can flush (and does nothing for it).
type memFlusher struct {
	h   http.Header
	buf bytes.Buffer
}

func (w *memFlusher) Header() http.Header         { return w.h }
func (w *memFlusher) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *memFlusher) WriteHeader(int)             {}
func (w *memFlusher) Flush()                      {}

// SetWriteDeadline accepts deadlines, as net/http's ResponseWriter does.
func (w *memFlusher) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkSSEDeferredAnswer: the stream of one quick request as the legacy endpoint writes it
// (a deferred start, then the answer as the final frame, before the delay is up).
func BenchmarkSSEDeferredAnswer(b *testing.B) {
	w := &memFlusher{h: http.Header{}}
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		w.buf.Reset()
		s := NewSSEWriter(w, SSEWriterOptions{})
		_ = s.StartDeferred(20 * time.Millisecond)
		if err := s.WriteFinal(data); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// countingFlusher is a memFlusher that counts its flushes.
type countingFlusher struct {
	memFlusher
	flushes int
}

func (w *countingFlusher) Flush() { w.flushes++ }

// Deferred starts share one sweep instead of a timer each: a stream that ended or got its
// headers out before its delay leaves the sweep's list and is never flushed by it, one that
// outlives its delay gets its headers from the sweep, once, and the list is empty again
// afterwards (nothing kept alive by it).
func TestSSEDeferredSweep(t *testing.T) {
	w := &countingFlusher{memFlusher: memFlusher{h: http.Header{}}}
	for i := range 200 {
		s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: -1})
		if err := s.StartDeferred(time.Hour); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_ = s.WriteFinal([]byte("x"))
		}
		s.Close()
	}
	if w.flushes != 0 {
		t.Fatalf("%d flushes: the sweep sent the held headers of a stream that had ended", w.flushes)
	}
	// A stream that outlives its delay gets its headers from the sweep, once, even on a list
	// where streams held for an hour joined before it; those stay held.
	var long []*SSEWriter
	for !everySweepListHolds() {
		l := NewSSEWriter(&countingFlusher{memFlusher: memFlusher{h: http.Header{}}}, SSEWriterOptions{KeepAlive: -1})
		if err := l.StartDeferred(time.Hour); err != nil {
			t.Fatal(err)
		}
		long = append(long, l)
	}
	fired := &countingFlusher{memFlusher: memFlusher{h: http.Header{}}}
	s := NewSSEWriter(fired, SSEWriterOptions{KeepAlive: -1})
	if err := s.StartDeferred(heldTick); err != nil {
		t.Fatal(err)
	}
	for stop := time.Now().Add(5 * time.Second); held(s); runtime.Gosched() {
		if time.Now().After(stop) {
			t.Fatal("the sweep never sent the headers of a stream that outlived its delay")
		}
	}
	if err := s.WriteFinal([]byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fired.flushes != 2 { // the headers, then the final frame
		t.Fatalf("%d flushes, want 2", fired.flushes)
	}
	for _, l := range long {
		if !held(l) {
			t.Fatal("a stream held for an hour lost its held headers to the sweep of another's")
		}
		l.Close()
	}
	wantSweepListsEmpty(t)
}

// Streams on many goroutines join and leave the sweep's lists at once: each gets its held headers
// sent at most once (once exactly when it waits for them), and the lists are empty afterwards.
func TestSSEDeferredSweepConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				w := &countingFlusher{memFlusher: memFlusher{h: http.Header{}}}
				s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: -1})
				if err := s.StartDeferred(heldTick); err != nil {
					errs <- err
					return
				}
				wait := (g+i)%4 == 0
				for stop := time.Now().Add(5 * time.Second); wait && held(s); runtime.Gosched() {
					if time.Now().After(stop) {
						errs <- errors.New("the sweep never sent the headers of a stream that outlived its delay")
						return
					}
				}
				_ = s.WriteFinal([]byte("x"))
				s.Close()
				if n := w.flushes; n != 0 && n != 2 || wait && n != 2 {
					errs <- fmt.Errorf("%d flushes (waited for the sweep: %v)", n, wait)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantSweepListsEmpty(t)
}

// While a stream holds its headers the sweep runs, and the time it read is a few milliseconds old
// at most (the test allows a second), never ahead of the clock.
func TestSSESweptNow(t *testing.T) {
	s := NewSSEWriter(&memFlusher{h: http.Header{}}, SSEWriterOptions{KeepAlive: -1})
	defer s.Close()
	if err := s.StartDeferred(time.Hour); err != nil {
		t.Fatal(err)
	}
	if !heldSweep.running.Load() {
		t.Fatal("no sweep runs while a stream holds its headers")
	}
	if d := time.Since(sweptNow()); d < 0 || d > time.Second {
		t.Fatalf("the sweep's time is %v old", d)
	}
}

// held reports whether s still holds its headers.
func held(s *SSEWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// A delay under the sweep's period is Start: the headers go out at once.
func TestSSEDeferredShortDelayStarts(t *testing.T) {
	w := &countingFlusher{memFlusher: memFlusher{h: http.Header{}}}
	s := NewSSEWriter(w, SSEWriterOptions{KeepAlive: -1})
	defer s.Close()
	if err := s.StartDeferred(heldTick - 1); err != nil {
		t.Fatal(err)
	}
	if held(s) || w.flushes != 1 {
		t.Fatalf("held %v after %d flushes: want the headers sent at once", held(s), w.flushes)
	}
}

// Text is split into lines at CR, LF and CRLF, after its trailing line breaks are dropped, as
// the event stream format reads them back.
func TestSSEAppendLines(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "data: \n\n"},
		{"a", "data: a\n\n"},
		{`{"id":1}`, "data: {\"id\":1}\n\n"},
		{"a\n", "data: a\n\n"},
		{"a\r\n\r\n\n\r", "data: a\n\n"},
		{"\n\r", "data: \n\n"},
		{"a\nb", "data: a\ndata: b\n\n"},
		{"a\rb", "data: a\ndata: b\n\n"},
		{"a\r\nb", "data: a\ndata: b\n\n"},
		{"a\n\rb", "data: a\ndata: \ndata: b\n\n"},
		{"a\r\rb", "data: a\ndata: \ndata: b\n\n"},
		{"\na", "data: \ndata: a\n\n"},
		{"a\rb\nc\r\nd", "data: a\ndata: b\ndata: c\ndata: d\n\n"},
	} {
		if got := string(appendLines(nil, "data: ", []byte(tc.text))); got != tc.want {
			t.Errorf("appendLines(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	// Many CR-separated lines before one LF: each line once, the LF's scan not repeated per line
	// (a quadratic walk would take minutes here).
	text := strings.Repeat("x\r", 1<<19) + "\ny"
	want := strings.Repeat("data: x\n", 1<<19) + "data: y\n\n"
	if got := string(appendLines(nil, "data: ", []byte(text))); got != want {
		t.Errorf("appendLines of %d CR-separated lines: %d bytes, want %d", 1<<19, len(got), len(want))
	}
}

// everySweepListHolds reports whether every list of the held-headers sweep holds a writer.
func everySweepListHolds() bool {
	for i := range heldSweep.lists {
		l := &heldSweep.lists[i]
		l.mu.Lock()
		head := l.head
		l.mu.Unlock()
		if head == nil {
			return false
		}
	}
	return true
}

// wantSweepListsEmpty fails the test unless every list of the held-headers sweep is empty.
func wantSweepListsEmpty(t *testing.T) {
	t.Helper()
	for i := range heldSweep.lists {
		l := &heldSweep.lists[i]
		l.mu.Lock()
		head := l.head
		l.mu.Unlock()
		if head != nil {
			t.Fatalf("list %d still holds a writer after every stream ended", i)
		}
	}
}
