package middleware

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/session"
)

// HeaderSessionID is the header that carries the legacy session id.
const HeaderSessionID = "Mcp-Session-Id"

// Wire messages of the session validator.
const (
	msgMissingSessionID   = "Missing session ID"
	msgSessionNotFound    = "Session not found"
	msgAlreadyInitialized = "Invalid Request: Server already initialized"
	msgSessionForbidden   = "Forbidden: session request validation failed"
)

// SessionOptions configure the session validator.
type SessionOptions struct {
	// Store holds the sessions. It is required (the constructor panics without one).
	Store session.Store
	// Authorize decides whether a request may use the session with the given id: the ownership
	// check, for example "the authenticated principal is the one that initialized it". It runs
	// on every request, notification, client response, GET and DELETE that names a session.
	// False answers 403. Nil allows every request that knows the id.
	Authorize func(r *http.Request, sessionID string) bool
	// SkipOriginCheck turns off the built-in check that a request carrying an Origin header
	// carries the Origin the session was initialized with. The zero value checks.
	SkipOriginCheck bool
}

type sessionKey struct{}

// WithSession returns a request carrying s for the handlers below, as the validator does. A team
// that resolves sessions in its own layer uses it to hand the endpoint the session.
func WithSession(r *http.Request, s *session.Session) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
}

// SessionFrom returns the session the validator resolved for the request, or nil.
func SessionFrom(ctx context.Context) *session.Session {
	s, _ := ctx.Value(sessionKey{}).(*session.Session)
	return s
}

// SessionValidator is the layer that ties legacy requests to their session. It reads the message
// the decode layer stored (it must sit below Decode) and:
//
//   - lets initialize through when it names no session; initialize naming a live session is
//     400 "Server already initialized", naming an unknown one 404;
//   - lets server/discover through without a session (it is stateless);
//   - answers 400 "Missing session ID" for any other POST, GET or DELETE without the header;
//   - runs Authorize (403 on false), looks the session up (404 when unknown or expired; only
//     requests and GET renew its idle time) and checks the Origin recorded at initialize (403);
//   - hands the session to the next handler through the context (SessionFrom).
//
// Dropping this layer drops sessions: the endpoint then serves every POST statelessly. A team
// with its own notion of ownership keeps the layer and sets Authorize.
func SessionValidator(opts SessionOptions) func(http.Handler) http.Handler {
	if opts.Store == nil {
		panic("middleware: SessionValidator needs a Store")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get(HeaderSessionID)
			var reqID core.ID
			touch := r.Method == http.MethodGet
			if r.Method == http.MethodPost {
				msg, ok := MessageFrom(r.Context())
				if !ok {
					next.ServeHTTP(w, r)
					return
				}
				reqID = msg.ID
				touch = msg.IsRequest()
				switch msg.Method {
				case "initialize":
					if id == "" {
						next.ServeHTTP(w, r)
						return
					}
					if _, err := opts.Store.Get(r.Context(), id, false); err == nil {
						refuse(w, r, http.StatusBadRequest, reqID, core.CodeInvalidRequest, msgAlreadyInitialized)
					} else {
						refuse(w, r, http.StatusNotFound, reqID, core.CodeInvalidRequest, msgSessionNotFound)
					}
					return
				case "server/discover":
					if id == "" {
						next.ServeHTTP(w, r)
						return
					}
				}
			}
			if id == "" {
				refuse(w, r, http.StatusBadRequest, reqID, core.CodeInvalidRequest, msgMissingSessionID)
				return
			}
			if opts.Authorize != nil && !opts.Authorize(r, id) {
				refuse(w, r, http.StatusForbidden, reqID, core.CodeInvalidRequest, msgSessionForbidden)
				return
			}
			s, err := opts.Store.Get(r.Context(), id, touch)
			if err != nil {
				if errors.Is(err, session.ErrNotFound) {
					refuse(w, r, http.StatusNotFound, reqID, core.CodeInvalidRequest, msgSessionNotFound)
				} else {
					// The store's own error may name hosts or keys: it is not for the client.
					refuse(w, r, http.StatusServiceUnavailable, reqID, core.CodeInternalError, "Service unavailable: session store error")
				}
				return
			}
			if !opts.SkipOriginCheck && s.Origin != "" {
				if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, s.Origin) {
					refuse(w, r, http.StatusForbidden, reqID, core.CodeInvalidRequest, msgSessionForbidden)
					return
				}
			}
			if ex := ExchangeFrom(r.Context()); ex != nil {
				ex.SetSessionID(id)
			}
			next.ServeHTTP(w, WithSession(r, s))
		})
	}
}
