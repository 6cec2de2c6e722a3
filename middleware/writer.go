package middleware

import "net/http"

// statusWriter wraps a ResponseWriter to remember the final status and count the body bytes
// written through it. It stays transparent to http.ResponseController (Unwrap, FlushError) and to
// code that type-asserts http.Flusher.
type statusWriter struct {
	http.ResponseWriter
	status int   // the final status sent, 0 while nothing was sent
	bytes  int64 // body bytes written
}

// WriteHeader records the first final (non-1xx) status and forwards the call.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write forwards p, counting the bytes; the first write implies status 200.
func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// FlushError flushes the underlying writer through its ResponseController, reporting
// http.ErrNotSupported when it cannot flush. Flushing commits the headers, hence status 200 if
// none was set.
func (w *statusWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher for code that still type-asserts it.
func (w *statusWriter) Flush() { _ = w.FlushError() }

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// started reports whether the response (at least its headers) was sent.
func (w *statusWriter) started() bool { return w.status != 0 }

// statusOr returns the recorded status, or def when nothing was sent.
func (w *statusWriter) statusOr(def int) int {
	if w.status == 0 {
		return def
	}
	return w.status
}
