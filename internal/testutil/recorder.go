package testutil

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// Recorder is a reusable in-memory http.ResponseWriter for benchmarks that call a handler
// directly: it flushes, and it accepts read and write deadlines as net/http's own writer does,
// so the layers take the same path as on a real connection and what is measured is not the
// cost of the error an unsupported call returns. Reset readies it for the next request.
type Recorder struct {
	Head   http.Header
	Status int
	Body   bytes.Buffer
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{Head: http.Header{}} }

// Header returns the response header.
func (w *Recorder) Header() http.Header { return w.Head }

// WriteHeader records the first status written.
func (w *Recorder) WriteHeader(status int) {
	if w.Status == 0 {
		w.Status = status
	}
}

// Write appends p to Body (status 200 unless one was written).
func (w *Recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.Body.Write(p)
}

// Flush commits the status (200 unless one was written).
func (w *Recorder) Flush() { w.WriteHeader(http.StatusOK) }

// SetWriteDeadline accepts the deadline.
func (w *Recorder) SetWriteDeadline(time.Time) error { return nil }

// SetReadDeadline accepts the deadline.
func (w *Recorder) SetReadDeadline(time.Time) error { return nil }

// Reset clears the header, the status and the body.
func (w *Recorder) Reset() {
	clear(w.Head)
	w.Status = 0
	w.Body.Reset()
}

// PostRequest returns an in-process POST of body to /mcp on 127.0.0.1 accepting JSON and SSE;
// with a session id it carries Mcp-Session-Id and MCP-Protocol-Version 2025-11-25.
func PostRequest(body, sid string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", AcceptBoth)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return req
}
