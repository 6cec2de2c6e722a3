package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
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
	// ChangeNotifications says the endpoint delivers list-changed and resource-updated
	// notifications to modern clients (subscriptions/listen); server/discover advertises the
	// listChanged and subscribe flags only then.
	ChangeNotifications bool
	// Listen serves subscriptions/listen. Nil answers it as an unknown method (404 -32601). New
	// passes its Listeners unless Options.DisableListen is set.
	Listen *Listeners
	// Lifetime is the endpoint whose lifetime the handler shares: its requests are refused with
	// 503 once that endpoint closes, Close ends the ephemeral session of each one (which cancels
	// its call) and the context of each listen stream, and Shutdown waits for them. Nil gives the
	// handler no lifetime of its own: each request's session ends with the request. New passes
	// its endpoint.
	Lifetime *Endpoint
}

// Modern serves the 2026-07-28 lifecycle: stateless POSTs, each carrying its own _meta envelope,
// no session ids, no GET stream, no DELETE. A request whose handler sends notifications answers
// as an SSE stream that carries them live, then the response; one that sends none answers one
// JSON object with the status the JSON-RPC outcome maps to. The client closing the stream
// cancels the handler's context. It repeats none of the layers' checks: it expects
// middleware.MethodAccept, Decode, EraRouter, MirrorHeaders and SSE in front of it, as New
// composes them; its streams are the SSE layer's, with that layer's write timeout (a request
// without a decoded message, or without an SSE layer in front, is answered 500).
type Modern struct {
	server *core.Server
	opts   ModernOptions
}

// NewModern returns the handler of the 2026-07-28 lifecycle for s.
func NewModern(s *core.Server, opts ModernOptions) *Modern {
	if opts.MaxNotifications < 0 {
		panic("mcphttp: ModernOptions.MaxNotifications must be >= 0")
	}
	if opts.MaxNotifications == 0 {
		opts.MaxNotifications = DefaultMaxRequestNotifications
	}
	return &Modern{server: s, opts: opts}
}

// ServeHTTP serves one 2026-07-28 POST: it reads the request's Exchange once (the decoded
// message, the SSE layer in front) and counts the request in the Lifetime endpoint.
func (m *Modern) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ex := middleware.ExchangeFrom(r.Context())
	if ex == nil || ex.Message() == nil {
		middleware.RefuseUndecoded(w, r)
		return
	}
	msg := ex.Message()
	if !ex.CanStream() {
		middleware.RefuseNoSSE(w, r, msg.ID)
		return
	}
	if lt := m.opts.Lifetime; lt != nil {
		if !lt.enter() {
			middleware.RefuseShuttingDown(w, r, msg.ID)
			return
		}
		defer lt.leave()
	}
	m.serve(w, r, ex)
}

// ModernStatus is the HTTP status of a 2026-07-28 answer: 404 for an unknown method, 400 for the
// errors that say the request itself is wrong, 503 for a backend that is unavailable
// (jsonrpc.Error.Unavailable), 200 otherwise (errors of the operation included).
func ModernStatus(e *jsonrpc.Error) int {
	if e == nil {
		return http.StatusOK
	}
	if transport.Core.Unavailable(e) {
		return http.StatusServiceUnavailable
	}
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability, jsonrpc.CodeUnsupportedProtocolVersion,
		jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidParams:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (m *Modern) serve(w http.ResponseWriter, r *http.Request, ex *middleware.Exchange) {
	msg := ex.Message()
	if v := r.Header[middleware.HeaderSessionID]; len(v) > 0 && v[0] != "" { // the name is canonical: no Get
		middleware.Refuse(w, r, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, "Bad Request: Mcp-Session-Id is not accepted in the modern lifecycle")
		return
	}
	if l := m.opts.Listen; l != nil && msg.Method == "subscriptions/listen" {
		if lt := m.opts.Lifetime; lt != nil {
			lt.bind(w, r, func(w http.ResponseWriter, r *http.Request) { l.serve(w, r, msg) })
			return
		}
		l.serve(w, r, msg)
		return
	}
	cs := transport.NewSession(m.server, transport.SessionOptions{Ephemeral: true, Modern: true, ChangeNotifications: m.opts.ChangeNotifications, Transport: sessionTransport})
	if lt := m.opts.Lifetime; lt == nil {
		defer cs.Close()
	} else if lt.hold(cs) {
		defer lt.release(cs)
	} else {
		cs.Close()
		middleware.RefuseShuttingDown(w, r, msg.ID)
		return
	}
	if !msg.IsRequest() {
		// Notifications and stray responses: there is no state for them to reach.
		transport.Core.Handle(cs, r.Context(), msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	stream := &modernStream{w: w, ex: ex, max: m.opts.MaxNotifications}
	// Whatever way this handler leaves, a notification arriving later (a goroutine the tool
	// handler left behind) is refused and never touches w (and the SSE layer closes the stream).
	defer stream.seal()
	call, err := transport.Core.Begin(cs, r.Context(), msg, stream)
	if err != nil {
		stream.seal()
		writeModern(w, r, transport.Core.RefusedResponse(msg.ID, err))
		return
	}
	resp := transport.Core.Run(call)
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
	if resp == nil {
		return // the SSE layer ends the stream
	}
	recordError(r, resp)
	_ = sse.WriteFinalSSE(middleware.SSEEvent{Event: "message", Data: transport.Core.EncodeResponseMessage(resp)})
}

func writeModern(w http.ResponseWriter, r *http.Request, resp *core.Response) {
	recordError(r, resp)
	writeBody(w, ModernStatus(resp.Error), transport.Core.EncodeResponseMessage(resp))
}

// modernStream is the path of one 2026-07-28 request: it turns into an SSE stream with the first
// notification (so notifications reach the client as they happen) and stays a plain JSON
// response when there are none. The lock is this request's own; it makes the choice between the
// two atomic: a notification either starts (or joins) the SSE stream before seal, or is refused
// after it, and the handler writes the answer only once seal returned.
type modernStream struct {
	w   http.ResponseWriter
	ex  *middleware.Exchange // its SSE layer makes the stream
	max int

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
		s.writer = s.ex.SSE(s.w)
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
