package middleware

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFramingParser(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		want   bool
	}{
		{"content-length only", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", false},
		{"chunked only", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", false},
		{"both", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true},
		{"both, other order and case", "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length:5\r\n\r\n0\r\n\r\n", true},
		{"both, second request", "GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"after a chunked body with extensions and trailers", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n" +
			"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"header text inside a body is body", "POST / HTTP/1.1\r\nContent-Length: 52\r\n\r\n" +
			"X\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"header text inside chunk data is body", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n31\r\n" +
			"Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n\r\n0\r\n\r\n", false},
		{"bare LF line endings", "POST / HTTP/1.1\nContent-Length: 1\nTransfer-Encoding: chunked\n\n", true},
		{"leading blank lines", "\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"upgrade stops parsing", "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"long header lines", "POST /" + strings.Repeat("a", 500) + " HTTP/1.1\r\nX-Long: " + strings.Repeat("b", 500) +
			"\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, then split at every byte: a verdict must not depend on how reads cut it.
			for cut := 0; cut <= len(tc.stream); cut++ {
				var p framingParser
				got := p.feed([]byte(tc.stream[:cut]))
				got = p.feed([]byte(tc.stream[cut:])) || got
				if got != tc.want {
					t.Fatalf("cut at %d: ambiguous = %v, want %v", cut, got, tc.want)
				}
			}
		})
	}
}

// guardedServer serves h behind GuardFraming and FramingConnContext on a real loopback socket,
// as mcphttp.NewHTTPServer does.
func guardedServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = GuardFraming(srv.Listener)
	srv.Config.ConnContext = FramingConnContext
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// rawExchange writes req on a fresh TCP connection and returns everything the server sends
// until it closes the connection (bounded by a generous deadline, so a hang fails the test).
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the server did not close the connection: %v (read %q)", err, b)
	}
	return string(b)
}

// wantRawAnswer checks the first HTTP response in raw: its status and its body, byte for byte.
func wantRawAnswer(t *testing.T, raw string, status int, body string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("reading %q: %v", raw, err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Errorf("status = %d, want %d", resp.StatusCode, status)
	}
	if string(b) != body {
		t.Errorf("body = %s, want %s", b, body)
	}
}

func TestDecodeRefusesContentLengthWithTransferEncoding(t *testing.T) {
	var served atomic.Int32
	h := Decode(DecodeOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "next")
	}))
	addr := guardedServer(t, h)
	// A front end framing by Content-Length sees one request whose body hides a second one.
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	body := "0\r\n\r\n" + smuggled
	req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + itoa(len(body)) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + body
	got := rawExchange(t, addr, req)
	wantRawAnswer(t, got, http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: both Content-Length and Transfer-Encoding"}}`)
	if strings.Count(got, "HTTP/1.1 ") != 1 {
		t.Errorf("the connection served more than one response:\n%s", got)
	}
	if n := served.Load(); n != 0 {
		t.Errorf("next handler ran %d times, want 0", n)
	}
}

func TestDecodeServesChunkedAndKeepsConnectionsAlive(t *testing.T) {
	var served atomic.Int32
	h := Decode(DecodeOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "next")
	}))
	addr := guardedServer(t, h)
	chunked := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		itoaHex(len(toolsCall)) + "\r\n" + toolsCall + "\r\n0\r\n\r\n"
	plain := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
		itoa(len(toolsCall)) + "\r\n\r\n" + toolsCall
	got := rawExchange(t, addr, chunked+plain)
	if n := strings.Count(got, "HTTP/1.1 200 OK"); n != 2 || served.Load() != 2 {
		t.Fatalf("want two 200 answers on one connection, got %d (served %d):\n%s", n, served.Load(), got)
	}
}

// TestDecodeBodyReadTimeout: a body that never arrives whole is answered 408, on a plain
// connection and on one the framing guard watches.
func TestDecodeBodyReadTimeout(t *testing.T) {
	for _, guarded := range []bool{false, true} {
		var served atomic.Int32
		h := Decode(DecodeOptions{BodyReadTimeout: 100 * time.Millisecond})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
		}))
		addr := ""
		if guarded {
			addr = guardedServer(t, h)
		} else {
			addr = strings.TrimPrefix(newServer(t, h).URL, "http://")
		}
		// Headers promise 100 bytes; 10 arrive and the rest never does.
		req := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" + `{"jsonrpc"`
		got := rawExchange(t, addr, req)
		wantRawAnswer(t, got, http.StatusRequestTimeout,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request timeout: the request body did not arrive within 100ms"}}`)
		if served.Load() != 0 {
			t.Errorf("guarded %v: the next handler ran on an incomplete body", guarded)
		}
	}
}

// deadlineCounter counts the read deadlines set through http.ResponseController on the
// ResponseWriter it wraps.
type deadlineCounter struct {
	http.ResponseWriter
	n *atomic.Int32
}

func (w deadlineCounter) SetReadDeadline(t time.Time) error {
	w.n.Add(1)
	return http.NewResponseController(w.ResponseWriter).SetReadDeadline(t)
}

func (w deadlineCounter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestDecodeBoundsOnlyABodyStillToArrive: on a connection the framing guard watches, a body that
// arrived with its headers is read with no deadline (it is in memory: there is nothing to bound),
// while one still arriving when the handler runs gets the deadline, cleared once it is read.
func TestDecodeBoundsOnlyABodyStillToArrive(t *testing.T) {
	var deadlines atomic.Int32
	entered := make(chan struct{}, 1)
	dec := Decode(DecodeOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "next")
	}))
	addr := guardedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		dec.ServeHTTP(deadlineCounter{ResponseWriter: w, n: &deadlines}, r)
	}))
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
		itoa(len(toolsCall)) + "\r\n\r\n"
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	answer := func(what string) {
		t.Helper()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "next" {
			t.Fatalf("%s: %d %q", what, resp.StatusCode, b)
		}
	}

	// The whole request in one write: the body is read with the headers.
	if _, err := io.WriteString(c, head+toolsCall); err != nil {
		t.Fatal(err)
	}
	<-entered
	answer("whole request")
	if n := deadlines.Swap(0); n != 0 {
		t.Errorf("a body read with its headers got %d read deadlines, want none", n)
	}

	// The headers and part of the body, the rest once the handler runs.
	if _, err := io.WriteString(c, head+toolsCall[:10]); err != nil {
		t.Fatal(err)
	}
	<-entered
	if _, err := io.WriteString(c, toolsCall[10:]); err != nil {
		t.Fatal(err)
	}
	answer("split request")
	if n := deadlines.Load(); n != 2 {
		t.Errorf("a body still arriving got %d read deadlines, want 2 (set, then cleared)", n)
	}
}

func TestDecodeBodyReadTimeoutTrickle(t *testing.T) {
	h := Decode(DecodeOptions{BodyReadTimeout: 200 * time.Millisecond})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv := newServer(t, h)
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
	// One byte per tick keeps every single read short; the deadline bounds the whole body.
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 400 {
			<-tick.C
			if _, err := io.WriteString(c, "1\r\n \r\n"); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("status %d, close %v; want 408 and a closed connection", resp.StatusCode, resp.Close)
	}
	_ = c.Close()
	<-done
}

func TestDecodeClearsBodyDeadlineBeforeResponding(t *testing.T) {
	const timeout = 50 * time.Millisecond
	h := Decode(DecodeOptions{BodyReadTimeout: timeout})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// This wait proves an absence: a read deadline left on the connection would fire
		// meanwhile and cancel the request's context (net/http's background read fails).
		time.Sleep(4 * timeout)
		if err := r.Context().Err(); err != nil {
			http.Error(w, "context ended: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "next")
	}))
	srv := newServer(t, h)
	status, _, body := post(t, srv.URL, "application/json", toolsCall)
	if status != 200 || body != "next" {
		t.Fatalf("got %d %q, want 200 next", status, body)
	}
}

func itoaHex(n int) string { return strconv.FormatInt(int64(n), 16) }

// BenchmarkFramingParser: what the framing guard costs per request of a keep-alive connection
// (a tools/call POST as a client sends it: request line, a dozen headers, a small body).
func BenchmarkFramingParser(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	req := []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench/1.0\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n" +
		"Mcp-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: 6f1c0e4b-8a9d-4c7e-b2f3-1d5a9e8c7b60\r\n" +
		"Authorization: Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl\r\n" +
		"Accept-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	var p framingParser
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if p.feed(req) {
			b.Fatal("ambiguous")
		}
	}
	if p.state != fpStart {
		b.Fatalf("state %d after whole requests", p.state)
	}
}
