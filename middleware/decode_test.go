package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// decodeStack serves Decode(opts) in front of a handler that records what it got. The returned
// counter wraps every request body so tests can see how much of it was read.
type decodeProbe struct {
	calls   atomic.Int32
	msg     *jsonrpc.Message
	body    []byte
	lastCnt *countingReader
}

func decodeServer(t *testing.T, opts DecodeOptions) (*decodeProbe, string) {
	t.Helper()
	p := &decodeProbe{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.calls.Add(1)
		m, ok := MessageFrom(r.Context())
		if ok {
			p.msg = m
			p.body = BodyFrom(r.Context())
		}
		_, _ = io.WriteString(w, "next")
	})
	h := Decode(opts)(next)
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Count on a copy: the server's own request must keep its body (net/http inspects it).
		c := &countingReader{r: r.Body}
		p.lastCnt = c
		cp := *r
		cp.Body = c
		h.ServeHTTP(w, &cp)
	})
	return p, newServer(t, outer).URL
}

const toolsCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

func TestDecodeSuccessReachesNext(t *testing.T) {
	p, url := decodeServer(t, DecodeOptions{})
	status, _, body := post(t, url, "application/json; charset=utf-8", toolsCall)
	if status != 200 || body != "next" {
		t.Fatalf("got %d %q, want 200 next", status, body)
	}
	if p.msg == nil {
		t.Fatal("MessageFrom reported no message in the next handler")
	}
	if p.msg.Method != "tools/call" || p.msg.ID != jsonrpc.IntID(1) {
		t.Errorf("message = %+v", p.msg)
	}
	if string(p.msg.Params) != `{"name":"echo","arguments":{"text":"hi"}}` {
		t.Errorf("params = %s", p.msg.Params)
	}
	if string(p.body) != toolsCall {
		t.Errorf("BodyFrom = %s", p.body)
	}
}

func TestDecodeMediaType(t *testing.T) {
	const want415 = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Unsupported Media Type: Content-Type must be application/json"}}`
	for _, tc := range []struct {
		ct string
		ok bool
	}{
		{"application/json", true},
		{"Application/JSON", true},
		{" application/json ; charset=utf-8", true},
		{"text/plain", false},
		{"application/json-seq", false},
		{"", false},
		{"text/event-stream", false},
	} {
		t.Run(tc.ct, func(t *testing.T) {
			p, url := decodeServer(t, DecodeOptions{})
			status, h, body := post(t, url, tc.ct, toolsCall)
			if tc.ok {
				if status != 200 || p.calls.Load() != 1 {
					t.Fatalf("got %d %q, want it accepted", status, body)
				}
				return
			}
			wantError(t, status, h, body, 415, want415)
			if p.calls.Load() != 0 {
				t.Error("next was called")
			}
			if p.lastCnt.n != 0 {
				t.Errorf("%d body bytes read", p.lastCnt.n)
			}
		})
	}
}

func TestDecodeDeclaredTooLargeIsNotRead(t *testing.T) {
	p, url := decodeServer(t, DecodeOptions{MaxRequestBytes: 1000})
	// The client announces the body and waits for 100 Continue, which the server only sends
	// once the handler reads: so the body is never even sent.
	src := &repeatReader{b: ' ', left: 5000}
	req, err := http.NewRequest(http.MethodPost, url, io.NopCloser(src))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 5000
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = time.Minute
	defer tr.CloseIdleConnections()
	status, h, body := do(t, &http.Client{Transport: tr}, req)
	wantError(t, status, h, body, 413,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Payload too large: request body exceeds 1000 bytes"}}`)
	if p.calls.Load() != 0 {
		t.Error("next was called")
	}
	if p.lastCnt.n != 0 {
		t.Errorf("the server read %d body bytes", p.lastCnt.n)
	}
	if src.read != 0 {
		t.Errorf("the client sent %d body bytes", src.read)
	}
}

func TestDecodeDefaultLimit(t *testing.T) {
	p, url := decodeServer(t, DecodeOptions{})
	req, err := http.NewRequest(http.MethodPost, url, io.NopCloser(&repeatReader{b: ' ', left: DefaultMaxRequestBytes + 1}))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = DefaultMaxRequestBytes + 1
	req.Header.Set("Content-Type", "application/json")
	status, h, body := do(t, http.DefaultClient, req)
	wantError(t, status, h, body, 413,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Payload too large: request body exceeds 4194304 bytes"}}`)
	if p.lastCnt.n != 0 {
		t.Errorf("the server read %d body bytes", p.lastCnt.n)
	}
}

func TestDecodeUndeclaredTooLarge(t *testing.T) {
	const limit = 1000
	p, url := decodeServer(t, DecodeOptions{MaxRequestBytes: limit})
	src := &repeatReader{b: ' ', left: 1 << 20}
	req, err := http.NewRequest(http.MethodPost, url, io.NopCloser(src)) // unknown length: chunked
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	status, h, body := do(t, http.DefaultClient, req)
	wantError(t, status, h, body, 413,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Payload too large: request body exceeds 1000 bytes"}}`)
	if p.calls.Load() != 0 {
		t.Error("next was called")
	}
	if p.lastCnt.n != limit+1 {
		t.Errorf("the server read %d body bytes, want exactly %d", p.lastCnt.n, limit+1)
	}
}

func TestDecodeLimitBoundary(t *testing.T) {
	const limit = 1000
	obj := `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		want    int
	}{
		{"declared at limit", limit, false, 200},
		{"declared over limit", limit + 1, false, 413},
		{"chunked at limit", limit, true, 200},
		{"chunked over limit", limit + 1, true, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, url := decodeServer(t, DecodeOptions{MaxRequestBytes: limit})
			body := padded(t, obj, tc.size)
			var r io.Reader = strings.NewReader(body)
			if tc.chunked {
				r = io.MultiReader(r) // hides the length
			}
			req, err := http.NewRequest(http.MethodPost, url, r)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			status, _, got := do(t, http.DefaultClient, req)
			if status != tc.want {
				t.Fatalf("status %d (%s), want %d", status, got, tc.want)
			}
			if tc.want == 200 && (p.msg == nil || p.msg.ID != jsonrpc.StringID("a-1") || len(p.body) != tc.size) {
				t.Errorf("message %+v, body %d bytes", p.msg, len(p.body))
			}
		})
	}
}

// nested returns a request whose total nesting depth (the envelope counts as 1) is depth.
func nested(depth int) string {
	inner := depth - 1
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` +
		strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}`
}

func TestDecodeBadBodies(t *testing.T) {
	// The parse error reads as stdio writes it: the generic message, the detail in data.
	const parse = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON"}}`
	const notObject = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: JSON-RPC body must be a single request object"}}`
	for _, tc := range []struct {
		name, body string
		want       string
	}{
		{"truncated", `{"jsonrpc":"2.0","id":1,`, parse},
		{"empty", ``, parse},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, parse},
		{"nesting 65", nested(65), parse},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON: duplicate member \"id\" at /id"}}`},
		{"duplicate member in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON: duplicate member \"name\" at /params/name"}}`},
		{"array", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, notObject},
		{"empty array", `[]`, notObject},
		{"scalar", `42`, notObject},
		{"string", `"ping"`, notObject},
		{"bad jsonrpc version", `{"jsonrpc":"1.0","id":7,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request","data":"JSON-RPC version must be 2.0"}}`},
		{"missing jsonrpc", `{"id":"x","method":"ping"}`,
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"Invalid Request","data":"JSON-RPC version must be 2.0"}}`},
		{"bad id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"Request ID must be a string, an integer or null"}}`},
		{"bad params", `{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":"Method parameters must be an array or an object or null"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, url := decodeServer(t, DecodeOptions{})
			status, h, body := post(t, url, "application/json", tc.body)
			wantError(t, status, h, body, 400, tc.want)
			if p.calls.Load() != 0 {
				t.Error("next was called")
			}
		})
	}
}

func TestDecodeNesting64Accepted(t *testing.T) {
	p, url := decodeServer(t, DecodeOptions{})
	status, _, body := post(t, url, "application/json", nested(64))
	if status != 200 || p.msg == nil {
		t.Fatalf("depth 64 refused: %d %s", status, body)
	}
}

func TestDecodeOtherMethodsPassThrough(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		t.Run(method, func(t *testing.T) {
			p, url := decodeServer(t, DecodeOptions{MaxRequestBytes: 10})
			req, _ := http.NewRequest(method, url, strings.NewReader("not json and longer than ten bytes"))
			req.Header.Set("Content-Type", "text/plain")
			status, _, body := do(t, http.DefaultClient, req)
			if status != 200 || body != "next" || p.calls.Load() != 1 {
				t.Fatalf("got %d %q", status, body)
			}
			if p.msg != nil || p.lastCnt.n != 0 {
				t.Errorf("decoded %+v, read %d bytes", p.msg, p.lastCnt.n)
			}
		})
	}
}

func TestDecodeRunsHooksAndPassesTheirContext(t *testing.T) {
	type key struct{}
	var order []string
	var seen any
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Context().Value(key{})
	})
	outer := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r, ex := ensureExchange(r)
			ex.OnMessage(func(ctx context.Context, m *jsonrpc.Message) context.Context {
				order = append(order, "first:"+m.Method)
				return context.WithValue(ctx, key{}, "from hook")
			})
			ex.OnMessage(func(ctx context.Context, m *jsonrpc.Message) context.Context {
				order = append(order, fmt.Sprint("second:", ctx.Value(key{})))
				return ctx
			})
			h.ServeHTTP(w, r)
		})
	}
	url := newServer(t, outer(Decode(DecodeOptions{})(next))).URL
	if status, _, body := post(t, url, "application/json", toolsCall); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if seen != "from hook" {
		t.Errorf("next saw %v, want the hook's context", seen)
	}
	if strings.Join(order, ",") != "first:tools/call,second:from hook" {
		t.Errorf("hooks ran as %v", order)
	}
}

func TestDecodeStackedTwiceDecodesOnce(t *testing.T) {
	var got *jsonrpc.Message
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = MessageFrom(r.Context()) })
	d := Decode(DecodeOptions{})
	url := newServer(t, d(d(next))).URL
	if status, _, body := post(t, url, "application/json", toolsCall); status != 200 || got == nil {
		t.Fatalf("%d %s, message %v", status, body, got)
	}
}

func TestDecodeNegativeLimitPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a negative MaxRequestBytes")
		}
	}()
	Decode(DecodeOptions{MaxRequestBytes: -1})
}

// lyingReader returns more bytes than a request declared, then an error or EOF.
type sliceReader struct {
	data  []byte
	err   error
	chunk int
}

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		return 0, io.EOF
	}
	n := min(len(p), len(s.data), max(s.chunk, 1))
	copy(p, s.data[:n])
	s.data = s.data[n:]
	return n, nil
}

func TestReadBody(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		data     string
		err      error
		declared int64
		limit    int64
		want     string
		wantErr  error
	}{
		{"declared exact", "abcd", nil, 4, 10, "abcd", nil},
		{"declared short", "ab", nil, 4, 10, "", io.ErrUnexpectedEOF},
		{"declared zero", "", nil, 0, 10, "", nil},
		{"longer than declared, fits", "abcdef", nil, 4, 10, "abcdef", nil},
		{"longer than declared, too large", strings.Repeat("x", 50), nil, 4, 10, "", errBodyTooLarge},
		{"undeclared fits", "abcdef", nil, -1, 10, "abcdef", nil},
		{"undeclared at limit", strings.Repeat("x", 10), nil, -1, 10, strings.Repeat("x", 10), nil},
		{"undeclared over", strings.Repeat("x", 11), nil, -1, 10, "", errBodyTooLarge},
		{"undeclared large", strings.Repeat("y", 100000), nil, -1, 200000, strings.Repeat("y", 100000), nil},
		{"read error", "abc", boom, -1, 10, "", boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &sliceReader{data: []byte(tc.data), err: tc.err, chunk: 3}
			got, err := readBody(r, tc.declared, tc.limit)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && string(got) != tc.want {
				t.Errorf("body = %q, want %q", got, tc.want)
			}
			// Exact-size reads: the declared length (plus the one-byte probe), or a copy of the
			// pooled buffer. Only a body longer than declared may grow further.
			spare := 0
			if tc.declared >= 0 {
				spare = 1
			}
			if err == nil && int64(len(tc.data)) <= max(tc.declared, 0) || tc.declared < 0 {
				if err == nil && cap(got)-len(got) > spare {
					t.Errorf("body has capacity %d for %d bytes", cap(got), len(got))
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that allocates nothing.
type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(code int)        { d.status = code }

type resettableBody struct{ bytes.Reader }

func (*resettableBody) Close() error { return nil }

func benchmarkDecode(b *testing.B, chunked bool) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris","units":"metric","days":3},"_meta":{"progressToken":"tok-42","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`)
	var got *jsonrpc.Message
	h := Decode(DecodeOptions{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = MessageFrom(r.Context())
	}))
	rb := &resettableBody{}
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	req.Header.Set("Content-Type", "application/json")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rb.Reset(body)
		req.Body = rb
		req.ContentLength = int64(len(body))
		if chunked {
			req.ContentLength = -1
		}
		h.ServeHTTP(w, req)
		if got == nil || w.status != 0 {
			b.Fatalf("not decoded (status %d)", w.status)
		}
	}
}

// BenchmarkDecode measures a typical tools/call body through the Decode layer, with a declared
// Content-Length (the usual case) and chunked.
func BenchmarkDecode(b *testing.B) {
	b.Run("content-length", func(b *testing.B) { benchmarkDecode(b, false) })
	b.Run("chunked", func(b *testing.B) { benchmarkDecode(b, true) })
}

// A declared length is not trusted with memory before the bytes arrive: a client that declares
// 4 MiB and sends one byte costs a small buffer, not 4 MiB.
func TestReadBodyDoesNotTrustDeclaredLength(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readBody(strings.NewReader("{"), 4<<20, 4<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body: err = %v, want io.ErrUnexpectedEOF", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("reading a 1-byte body that declared 4 MiB allocated %d bytes", grew)
	}
	// A body that does arrive in full is read exactly.
	body := `{"a":"` + strings.Repeat("x", 200<<10) + `"}`
	got, err := readBody(strings.NewReader(body), int64(len(body)), 4<<20)
	if err != nil || string(got) != body {
		t.Fatalf("full body: %d bytes, %v", len(got), err)
	}
}
