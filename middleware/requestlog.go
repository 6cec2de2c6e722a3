package middleware

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// RequestLogOptions configure the request log.
type RequestLogOptions struct {
	// Logger gets the lines. It is required (RequestLog panics without it); a disabled logger
	// (zerolog.Nop) writes nothing.
	Logger *zerolog.Logger
}

// RequestLog returns the layer that writes one structured line per HTTP exchange to opts.Logger, once
// the rest of the chain returned (also when it panicked): the HTTP method ("http_method"), the URL
// path without the query ("path"), the MCP method ("mcp_method") and JSON-RPC id ("jsonrpc_id")
// when a message was decoded, a fingerprint of the MCP session id ("session": the first 12 hex
// digits of the SHA-256 of the Mcp-Session-Id request header, else the response header, else the
// one recorded in the Exchange; never the id itself, which can act as a credential), the status
// ("status"), the time since the exchange started ("duration"), the request body bytes read
// ("bytes_in") and the response body bytes written ("bytes_out"), plus the trace id ("trace_id")
// when the tracing layer started a span for the message. Bodies, query strings and headers other
// are never logged. Statuses below 500 log at info level, 500 and above at
// error level.
func RequestLog(opts RequestLogOptions) func(http.Handler) http.Handler {
	if opts.Logger == nil {
		panic("middleware: RequestLogOptions.Logger is required")
	}
	logger := *opts.Logger
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			orig := r
			r, ex := ensureExchange(r)
			st := &logState{sw: statusWriter{ResponseWriter: w}}
			if r.Body != nil && r.Body != http.NoBody {
				if r == orig {
					// Do not change the caller's request: work on a shallow copy.
					cp := new(http.Request)
					*cp = *r
					r = cp
				}
				st.body.rc = r.Body
				r.Body = &st.body
			}
			completed := false
			defer func() { st.log(&logger, r, ex, completed) }()
			next.ServeHTTP(&st.sw, r)
			completed = true
		})
	}
}

// logState is the per-exchange state of RequestLog, allocated once.
type logState struct {
	sw   statusWriter
	body countingBody
}

func (st *logState) log(logger *zerolog.Logger, r *http.Request, ex *Exchange, completed bool) {
	status := st.sw.statusOr(http.StatusOK)
	if !completed && !st.sw.started() {
		status = http.StatusInternalServerError // the recover layer answers a panic with 500
	}
	ev := logger.Info()
	if status >= 500 {
		ev = logger.Error()
	}
	if ev == nil {
		return // level disabled
	}
	ev.Str("http_method", r.Method).Str("path", r.URL.Path)
	if m := ex.Message(); m != nil {
		if m.Method != "" {
			ev.Str("mcp_method", m.Method)
		}
		switch id := m.ID.Raw().(type) {
		case int64:
			ev.Int64("jsonrpc_id", id)
		case string:
			ev.Str("jsonrpc_id", id)
		}
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		sid = st.sw.Header().Get("Mcp-Session-Id")
	}
	if sid == "" {
		sid = ex.SessionID()
	}
	if sid != "" {
		// The id is a bearer credential when no ownership check is configured: the log gets
		// a fingerprint that correlates lines of one session without letting a reader use it.
		sum := sha256.Sum256([]byte(sid))
		ev.Str("session", hex.EncodeToString(sum[:6]))
	}
	ev.Int("status", status).
		Dur("duration", time.Since(ex.Start())).
		Int64("bytes_in", st.body.n).
		Int64("bytes_out", st.sw.bytes)
	if !completed {
		ev.Bool("panicked", true)
	}
	var sc trace.SpanContext
	if ex.spanContext != nil {
		sc = *ex.spanContext
	}
	if !sc.IsValid() {
		sc = trace.SpanContextFromContext(r.Context())
	}
	if sc.IsValid() {
		ev.Str("trace_id", sc.TraceID().String())
	}
	ev.Msg("mcp http exchange")
}

// countingBody counts the request body bytes read through it.
type countingBody struct {
	rc io.ReadCloser
	n  int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countingBody) Close() error { return b.rc.Close() }
