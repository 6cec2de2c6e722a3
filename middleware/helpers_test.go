package middleware

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// newServer serves h over real HTTP on 127.0.0.1 and closes it when the test ends.
func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to url as a POST with the given content type and returns status, headers and
// body of the answer.
func post(t *testing.T, url, contentType, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, http.DefaultClient, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// wantError checks a JSON-RPC error answer byte for byte.
func wantError(t *testing.T, status int, h http.Header, body string, wantStatus int, wantBody string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("status = %d, want %d (body %s)", status, wantStatus, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if body != wantBody {
		t.Errorf("body =\n  %s\nwant\n  %s", body, wantBody)
	}
}

// okHandler answers 200 "ok".
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "ok")
})

// countingReader counts the bytes read from a request body; it is read by the test only after the
// handler returned.
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// repeatReader yields n bytes of b repeated, without a known length (so requests are chunked).
type repeatReader struct {
	b    byte
	left int64
	read int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	for i := range p {
		p[i] = r.b
	}
	r.left -= int64(len(p))
	r.read += int64(len(p))
	return len(p), nil
}

// padded returns a JSON object body of exactly size bytes (padding with spaces inside).
func padded(t *testing.T, obj string, size int) string {
	t.Helper()
	if len(obj) > size {
		t.Fatalf("object longer (%d) than %d", len(obj), size)
	}
	return obj[:len(obj)-1] + strings.Repeat(" ", size-len(obj)) + "}"
}
