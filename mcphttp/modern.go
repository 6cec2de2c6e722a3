package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/middleware"
)

// DefaultMaxRequestNotifications bounds the notifications one 2026-07-28 request may send when
// ModernOptions.MaxNotifications is zero.
const DefaultMaxRequestNotifications = 1000

// ErrNotificationDropped is returned by a notify call (progress, log message) of a 2026-07-28
// request that already sent its maximum: the notification was not delivered.
var ErrNotificationDropped = errors.New("mcphttp: notification dropped: the request reached its notification limit")

// ModernOptions configure the handler of the 2026-07-28 lifecycle.
type ModernOptions struct {
	// MaxNotifications bounds the notifications (progress, log messages) one request may send.
	// Zero means DefaultMaxRequestNotifications; past it, notify calls return
	// ErrNotificationDropped.
	MaxNotifications int
	// WriteTimeout bounds each write of a request's SSE stream. Zero means 30 s; negative turns
	// the bound off.
	WriteTimeout time.Duration
	// ChangeNotifications says the endpoint delivers list-changed and resource-updated
	// notifications to modern clients (subscriptions/listen); server/discover advertises the
	// listChanged and subscribe flags only then.
	ChangeNotifications bool
}

// Modern serves the 2026-07-28 lifecycle: stateless POSTs, each carrying its own _meta envelope,
// no session ids, no GET stream, no DELETE. A request whose handler sends notifications answers
// as an SSE stream that carries them live, then the response; one that sends none answers one
// JSON object with the status the JSON-RPC outcome maps to. The client closing the stream
// cancels the handler's context. It expects Decode and MirrorHeaders in front of it.
type Modern struct {
	server *core.Server
	opts   ModernOptions
	decode http.Handler
	listen http.Handler
}

// NewModern returns the handler of the 2026-07-28 lifecycle for s.
func NewModern(s *core.Server, opts ModernOptions) *Modern {
	if opts.MaxNotifications <= 0 {
		opts.MaxNotifications = DefaultMaxRequestNotifications
	}
	m := &Modern{server: s, opts: opts}
	m.decode = middleware.Decode(middleware.DecodeOptions{})(http.HandlerFunc(m.serve))
	return m
}

// ServeHTTP implements http.Handler.
func (m *Modern) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if _, ok := middleware.MessageFrom(r.Context()); !ok {
			m.decode.ServeHTTP(w, r)
			return
		}
	}
	m.serve(w, r)
}

// ModernStatus is the HTTP status of a 2026-07-28 answer: 404 for an unknown method, 400 for the
// errors that say the request itself is wrong, 200 otherwise (errors of the operation included).
func ModernStatus(e *core.Error) int {
	if e == nil {
		return http.StatusOK
	}
	switch e.Code {
	case core.CodeMethodNotFound:
		return http.StatusNotFound
	case core.CodeHeaderMismatch, core.CodeMissingRequiredClientCapability, core.CodeUnsupportedProtocolVersion,
		core.CodeParseError, core.CodeInvalidRequest, core.CodeInvalidParams:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (m *Modern) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		refuse(w, r, http.StatusMethodNotAllowed, core.ID{}, core.CodeInvalidRequest, "Method not allowed")
		return
	}
	msg, _ := middleware.MessageFrom(r.Context())
	if !accepts(r, "application/json", "text/event-stream") {
		notAcceptable(w, r, "application/json", "text/event-stream")
		return
	}
	if r.Header.Get(HeaderSessionID) != "" {
		refuse(w, r, http.StatusBadRequest, msg.ID, core.CodeInvalidRequest, "Bad Request: Mcp-Session-Id is not accepted in the modern lifecycle")
		return
	}
	if msg.Method == "subscriptions/listen" && m.listen != nil {
		m.listen.ServeHTTP(w, r)
		return
	}
	cs := m.server.NewSession(core.SessionOptions{Ephemeral: true, Modern: true, ChangeNotifications: m.opts.ChangeNotifications})
	defer cs.Close()
	if !msg.IsRequest() {
		// Notifications and stray responses: there is no state for them to reach.
		cs.Handle(r.Context(), msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	stream := &modernStream{w: w, max: m.opts.MaxNotifications, sse: middleware.SSEOptions{WriteTimeout: m.opts.WriteTimeout}}
	tail := &streamTail{w: w, timeout: m.opts.WriteTimeout}
	defer func() {
		if stream.begun() {
			tail.bound()
		}
	}()
	defer stream.close()
	call, err := cs.Begin(r.Context(), msg, stream)
	if err != nil {
		writeModern(w, r, core.RefusedResponse(msg.ID, err))
		return
	}
	resp := call.Run()
	if resp == nil {
		if !stream.begun() {
			w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	if stream.begun() {
		recordError(r, resp)
		_ = stream.writeFinal(resp.Encode())
		return
	}
	writeModern(w, r, resp)
}

func writeModern(w http.ResponseWriter, r *http.Request, resp *core.Response) {
	recordError(r, resp)
	body := resp.Encode()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(ModernStatus(resp.Error))
	_, _ = w.Write(body)
}

// modernStream is the path of one 2026-07-28 request: it turns into an SSE stream with the first
// notification (so notifications reach the client as they happen) and stays a plain JSON
// response when there are none. The lock is this request's own.
type modernStream struct {
	w   http.ResponseWriter
	max int
	sse middleware.SSEOptions

	mu     sync.Mutex
	writer *middleware.SSEWriter
	sent   int
	done   bool
}

// Send delivers a notification of the request, live.
func (s *modernStream) Send(_ context.Context, msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return middleware.ErrSSEClosed
	}
	if s.sent >= s.max {
		return ErrNotificationDropped
	}
	if s.writer == nil {
		s.writer = middleware.NewSSEWriter(s.w, s.sse)
		if err := s.writer.Start(); err != nil {
			return err
		}
	}
	s.sent++
	return s.writer.WriteEvent("message", msg)
}

// RefuseRequests: the 2026-07-28 lifecycle has no server-to-client requests.
func (s *modernStream) RefuseRequests() error {
	return core.ErrRequestsRefused
}

func (s *modernStream) begun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writer != nil
}

// writeFinal writes the response as the last event; nothing is written after it.
func (s *modernStream) writeFinal(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	return s.writer.WriteEvent("message", msg)
}

func (s *modernStream) close() {
	s.mu.Lock()
	w := s.writer
	s.done = true
	s.mu.Unlock()
	if w != nil {
		w.Close()
	}
}
