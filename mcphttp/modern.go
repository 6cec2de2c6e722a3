package mcphttp

import (
	"context"
	"errors"
	"net/http"
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
	// Zero means DefaultMaxRequestNotifications (1000); past it, notify calls return
	// ErrNotificationDropped. NewModern panics on a negative value.
	MaxNotifications int
	// WriteTimeout bounds each write of a request's SSE stream. Zero means 30 s; negative turns
	// the bound off.
	WriteTimeout time.Duration
	// ChangeNotifications says the endpoint delivers list-changed and resource-updated
	// notifications to modern clients (subscriptions/listen); server/discover advertises the
	// listChanged and subscribe flags only then.
	ChangeNotifications bool
	// MaxRequestBytes bounds the body when the handler decodes it itself (mounted without a
	// Decode layer in front of it). Zero means 4 MiB. New passes Options.MaxRequestBytes.
	MaxRequestBytes int64
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
	// holder, when set (New sets the endpoint), holds each request's ephemeral session, so that
	// closing the endpoint ends it.
	holder *Endpoint
}

// NewModern returns the handler of the 2026-07-28 lifecycle for s.
func NewModern(s *core.Server, opts ModernOptions) *Modern {
	if opts.MaxNotifications < 0 {
		panic("mcphttp: ModernOptions.MaxNotifications must be >= 0")
	}
	if opts.MaxNotifications == 0 {
		opts.MaxNotifications = DefaultMaxRequestNotifications
	}
	m := &Modern{server: s, opts: opts}
	m.decode = decodingIfNeeded(opts.MaxRequestBytes, m.serve)
	return m
}

// ServeHTTP implements http.Handler.
func (m *Modern) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.decode.ServeHTTP(w, r) }

// modernAccept answers 406 to a 2026-07-28 request whose Accept header does not list both
// application/json and text/event-stream, before the mirror-header checks (the ladder puts the
// Accept check first). New mounts it in front of MirrorHeaders: preflight cannot always tell a
// modern POST from its headers alone in JSON-response mode (see modernByHeaders), and the Modern
// handler's own check would come after the mirror checks.
func modernAccept(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !accepts(r, "application/json", "text/event-stream") {
			notAcceptable(w, r, "application/json", "text/event-stream")
			return
		}
		next.ServeHTTP(w, r)
	})
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
	if r.Header.Get(middleware.HeaderSessionID) != "" {
		refuse(w, r, http.StatusBadRequest, msg.ID, core.CodeInvalidRequest, "Bad Request: Mcp-Session-Id is not accepted in the modern lifecycle")
		return
	}
	if msg.Method == "subscriptions/listen" && m.listen != nil {
		m.listen.ServeHTTP(w, r)
		return
	}
	cs := m.server.NewSession(core.SessionOptions{Ephemeral: true, Modern: true, ChangeNotifications: m.opts.ChangeNotifications, Transport: sessionTransport})
	if m.holder == nil {
		defer cs.Close()
	} else if m.holder.hold(cs) {
		defer m.holder.release(cs)
	} else {
		cs.Close()
		refuse(w, r, http.StatusServiceUnavailable, msg.ID, core.CodeInternalError, msgShuttingDown)
		return
	}
	if !msg.IsRequest() {
		// Notifications and stray responses: there is no state for them to reach.
		cs.Handle(r.Context(), msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	stream := &modernStream{w: w, max: m.opts.MaxNotifications, sse: middleware.SSEWriterOptions{KeepAlive: -1, WriteTimeout: m.opts.WriteTimeout}}
	// Whatever way this handler leaves, a notification arriving later (a goroutine the tool
	// handler left behind) is refused and never touches w.
	defer func() {
		if sse := stream.seal(); sse != nil {
			sse.Close()
		}
	}()
	call, err := cs.Begin(r.Context(), msg, stream)
	if err != nil {
		stream.seal()
		writeModern(w, r, core.RefusedResponse(msg.ID, err))
		return
	}
	resp := call.Run()
	// One step decides the shape of the answer and stops the notifications: from here on only
	// this goroutine writes to w.
	sse := stream.seal()
	if sse == nil {
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeModern(w, r, resp)
		return
	}
	tail := &streamTail{w: w, timeout: m.opts.WriteTimeout}
	defer tail.bound()
	if resp == nil {
		sse.Close()
		return
	}
	recordError(r, resp)
	_ = sse.WriteFinalSSE(middleware.SSEEvent{Event: "message", Data: resp.Encode()})
}

func writeModern(w http.ResponseWriter, r *http.Request, resp *core.Response) {
	recordError(r, resp)
	writeBody(w, ModernStatus(resp.Error), resp.Encode())
}

// modernStream is the path of one 2026-07-28 request: it turns into an SSE stream with the first
// notification (so notifications reach the client as they happen) and stays a plain JSON
// response when there are none. The lock is this request's own; it makes the choice between the
// two atomic: a notification either starts (or joins) the SSE stream before seal, or is refused
// after it, and the handler writes the answer only once seal returned.
type modernStream struct {
	w   http.ResponseWriter
	max int
	sse middleware.SSEWriterOptions

	mu     sync.Mutex
	writer *middleware.SSEWriter
	sent   int
	done   bool // sealed: the answer is being written, notifications are refused
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

// seal stops the stream from accepting notifications (Send refuses them from then on) and returns
// the SSE writer the notifications started, or nil when none did and the answer is one JSON
// object. It waits for a notification being written, so once it returns nothing but the caller
// writes to the response.
func (s *modernStream) seal() *middleware.SSEWriter {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	return s.writer
}
