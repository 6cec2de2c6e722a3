package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// RecoverOptions configures the Recover layer. The zero value logs panics with zerolog's global
// logger and reports them nowhere else.
type RecoverOptions struct {
	// Logger receives one error line per recovered panic, with the panic value and stack. Nil
	// means zerolog's global logger (github.com/rs/zerolog/log.Logger, stderr by default).
	Logger *zerolog.Logger
	// OnPanic, when set, is called with the request and the panic value after logging, for error
	// reporting. A panic inside OnPanic is swallowed. Nil means no callback.
	OnPanic func(r *http.Request, v any)
}

// Recover returns the layer that turns a panic in the rest of the chain into a clean answer: if
// nothing was written yet, 500 with -32603 "Internal server error" and id null; if the response
// had already started, the connection is aborted (the client sees a truncated response rather
// than a seemingly complete one). The panic value is logged and passed to OnPanic but never sent
// to the client. A panic with http.ErrAbortHandler is passed on untouched, so deliberate aborts
// keep their meaning. The server keeps serving other requests either way. Panics in goroutines a
// handler started are out of its reach. Recover starts the request's Exchange (see ExchangeFrom)
// when no outer layer did, and keeps its writer in it: in an MCP stack, whose layers share the
// record, that costs no allocation of its own.
func Recover(opts RecoverOptions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The layer starts the request's Exchange, which the layers after it share, and keeps
			// its writer in the record's room for it (unless an outer Recover took it).
			r, ex := ensureExchange(r)
			sw := &ex.recoverW
			if sw.ResponseWriter != nil {
				sw = new(statusWriter)
			}
			sw.ResponseWriter = w
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					// net/http recognises the sentinel itself, so a wrapped abort is
					// passed on as the bare sentinel.
					panic(http.ErrAbortHandler)
				}
				logger := opts.Logger
				if logger == nil {
					logger = &log.Logger
				}
				logger.Error().
					Str("http_method", r.Method).
					Str("path", r.URL.Path).
					Bool("response_started", sw.started()).
					Str("panic", fmt.Sprint(v)).
					Str("stack", string(debug.Stack())).
					Msg("panic while serving request")
				if opts.OnPanic != nil {
					reportPanic(opts.OnPanic, r, v)
				}
				if sw.started() {
					panic(http.ErrAbortHandler)
				}
				h := w.Header()
				for _, k := range []string{"Content-Length", "Content-Encoding", "Content-Range", "Transfer-Encoding", "Content-Disposition"} {
					h.Del(k)
				}
				refuse(w, r, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.CodeInternalError, msgInternalServerError)
			}()
			next.ServeHTTP(sw, r)
		})
	}
}

func reportPanic(fn func(*http.Request, any), r *http.Request, v any) {
	defer func() { _ = recover() }()
	fn(r, v)
}
