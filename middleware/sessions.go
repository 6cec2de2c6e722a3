package middleware

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

// HeaderSessionID is the header that carries the legacy session id.
const HeaderSessionID = "Mcp-Session-Id"

// Wire messages of the session validator.
const (
	msgSessionNotFound    = "Session not found"
	msgAlreadyInitialized = "Invalid Request: Server already initialized"
	msgSessionForbidden   = "Forbidden: session request validation failed"
	msgStoreFailed        = "Service unavailable: session store error"
	msgRepeatedSessionID  = "Bad Request: Mcp-Session-Id header is sent more than once"
	msgInFlight           = "Conflict: Request id is already in flight for this session"
	msgSecondStream       = "Conflict: Only one SSE stream is allowed per session"
)

// SessionValidatorOptions configure the session validator.
type SessionValidatorOptions struct {
	// Sessions is where the validator looks sessions up: the owner of the live sessions of this
	// process (mcphttp.Endpoint, which rebuilds a session another replica created from the
	// record of a shared store). Required: SessionValidator panics without it.
	Sessions session.Lookup
	// SkipOriginCheck turns off the built-in check that a request carrying an Origin header
	// carries the Origin the session was initialized with. The zero value checks.
	SkipOriginCheck bool
}

type sessionKey struct{}

// WithSession returns a request carrying s for the handlers below, as the validator does. A team
// that resolves sessions in its own layer uses it to hand the endpoint the session; such a layer
// also takes over what the validator checks after its lookup (the MCP-Protocol-Version of a GET
// or DELETE, which the ProtocolVersion layer leaves to the session layer). When the
// request already has an Exchange (the decode layer made one), s is recorded there and r is
// returned as is, which spares a request copy and a context per call.
func WithSession(r *http.Request, s session.Live) *http.Request {
	if ex := ExchangeFrom(r.Context()); ex != nil {
		ex.session = s
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
}

// Session returns the session the session layer recorded in the exchange (the validator, or
// WithSession), or nil. A handler that has the Exchange asks it instead of SessionFrom, which
// finds the Exchange in the context again; SessionFrom also finds a session WithSession put in
// a context that had no Exchange yet.
func (e *Exchange) Session() session.Live { return e.session }

// SessionFrom returns the session the validator resolved for the request, or nil.
func SessionFrom(ctx context.Context) session.Live {
	if ex := ExchangeFrom(ctx); ex != nil && ex.session != nil {
		return ex.session
	}
	s, _ := ctx.Value(sessionKey{}).(session.Live)
	return s
}

// SessionValidator is the layer that ties legacy requests to their session. It reads the message
// the decode layer stored (it must sit below Decode) and answers, in this order:
//
//   - more than one Mcp-Session-Id header: 400 -32600 "Bad Request: Mcp-Session-Id header is
//     sent more than once" (a gateway could route by one and the server serve the other);
//   - initialize naming no session passes (the endpoint creates one); initialize naming a live
//     session is 400 -32600 "Invalid Request: Server already initialized", naming an unknown or
//     expired one 404 -32600 "Session not found";
//   - server/discover naming no session passes (it is stateless);
//   - any other POST, and every GET and DELETE, without the header: 400 -32600 "Missing session
//     ID";
//   - an unknown or expired session: 404 -32600 "Session not found";
//   - a request whose principal (core.PrincipalFrom) is not the one that opened the session
//     (session.Entry.Owner; an authenticated principal never matches a session opened by nobody,
//     nor nobody one opened by a principal), or an Origin header different from the one recorded
//     at initialize (when both are present): 403 -32600 "Forbidden: session request validation
//     failed";
//   - a request whose id a shared store reports in flight on the session, or a GET (without
//     Last-Event-ID) for a session whose standalone stream is open, on this process or another
//     (session.ErrClaimed): 409 -32600, the texts the endpoint answers within one process;
//   - a store that is closed or failing: 503 -32603;
//   - a GET or DELETE whose MCP-Protocol-Version the ProtocolVersion layer in front left to this
//     point (after the lookup, as the ladders put it) and that fails it: 400 -32600;
//   - otherwise the session's idle time is renewed (requests and GET only: notifications, client
//     responses and DELETE do not keep a session alive) and the next handler gets the session
//     through the context (SessionFrom).
//
// The request's session.Claim (its id, or the GET stream) rides the Exchange for a store that
// shares its sessions; the layer releases it once the next handler returned and the response was
// flushed to the client.
//
// Error bodies echo the JSON-RPC id of the message when it has one. Requests with other HTTP
// methods, and POSTs with no decoded message (no Decode layer in front), pass through untouched.
//
// Dropping this layer drops sessions: the endpoint then serves every POST statelessly. The
// principal is whatever an authentication layer in front put in the context (core.WithPrincipal,
// or the Principal layer); a team with its own session layer replaces this one with a layer that
// calls WithSession.
func SessionValidator(opts SessionValidatorOptions) func(http.Handler) http.Handler {
	if opts.Sessions == nil {
		panic("middleware: SessionValidatorOptions.Sessions is required")
	}
	v := &validator{sessions: opts.Sessions, checkOrigin: !opts.SkipOriginCheck}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { v.serve(next, w, r) })
	}
}

// validator is the configuration of one SessionValidator layer.
type validator struct {
	sessions    session.Lookup
	checkOrigin bool
}

// step is what the first checks of the validator decided about a request.
type step int

const (
	stepCheck    step = iota // look the session up
	stepPass                 // hand the request on untouched
	stepAnswered             // the request was answered
)

func (v *validator) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	ex := ExchangeFrom(r.Context())
	ids := r.Header[HeaderSessionID] // the key is canonical: read as Get would, without its work
	id := ""
	if len(ids) > 0 {
		id = ids[0]
	}
	reqID, touch, st := v.classify(w, r, ex, id)
	switch st {
	case stepPass:
		next.ServeHTTP(w, r)
		return
	case stepAnswered:
		return
	}
	if len(ids) > 1 {
		refuse(w, r, http.StatusBadRequest, reqID, jsonrpc.CodeInvalidRequest, msgRepeatedSessionID)
		return
	}
	if id == "" {
		RefuseMissingSession(w, r, reqID)
		return
	}
	claim := wantClaim(r, ex, reqID)
	s, err := v.lookup(r, id, touch)
	if err != nil && claim.Held() {
		// The store took the claim before a later step of its lookup failed: nothing runs the
		// request, so nothing else would let go of it.
		claim.Release(context.WithoutCancel(r.Context()))
	}
	if errors.Is(err, session.ErrRefused) {
		refuse(w, r, http.StatusForbidden, reqID, jsonrpc.CodeInvalidRequest, msgSessionForbidden)
		return
	}
	if err != nil {
		RefuseLookup(w, r, reqID, err)
		return
	}
	returned := false
	if claim.Held() {
		defer func() { releaseClaim(w, r, claim, returned) }() // also when a handler below panics
	}
	if ex != nil {
		ex.SetSessionID(id)
		if ex.versionAfterSession && !checkVersion(w, r, reqID) {
			return
		}
		ex.session = s // as WithSession records it
	} else {
		r = WithSession(r, s)
	}
	next.ServeHTTP(w, r)
	returned = true
}

// lookup is the one lookup of the request's session, with the owner and Origin checks of a
// pooled check.
func (v *validator) lookup(r *http.Request, id string, touch bool) (session.Live, error) {
	c := checks.Get().(*check)
	c.v = v
	c.principal, _ = core.PrincipalFrom(r.Context())
	if o := r.Header["Origin"]; len(o) > 0 {
		c.origin = o[0]
	}
	s, err := v.sessions.Lookup(r.Context(), id, touch, c.allow)
	*c = check{allow: c.allow}
	checks.Put(c)
	return s, err
}

// releaseClaim lets go of the request's claim after the response, which is flushed to the client
// first (unless the handler panicked: the recovering layer answers then).
func releaseClaim(w http.ResponseWriter, r *http.Request, claim *session.Claim, returned bool) {
	if returned {
		_ = http.NewResponseController(w).Flush()
	}
	claim.Release(context.WithoutCancel(r.Context()))
}

// wantClaim fills in the request's session.Claim, in its Exchange ex, for a store that shares
// its sessions with other processes: the id of a request POST, or the standalone stream of a GET
// without Last-Event-ID (one that resumes a request's stream claims nothing). It returns nil when
// the request has no Exchange or claims nothing.
func wantClaim(r *http.Request, ex *Exchange, reqID jsonrpc.ID) *session.Claim {
	if ex == nil {
		return nil
	}
	c := ex.sessionClaim()
	if c.Wants() || c.Held() { // a fresh record's claim is empty already
		c.Reset()
	}
	switch {
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "":
		c.Stream = true
	case r.Method == http.MethodPost && reqID.IsValid():
		c.Request = reqID
	default:
		return nil
	}
	return c
}

// classify runs the checks that depend on the HTTP method and the message (the one ex, the
// request's Exchange, holds): it returns the JSON-RPC id errors echo, whether a successful
// lookup renews the session, and what to do next. initialize and server/discover without a
// session pass; initialize naming a session is answered here.
func (v *validator) classify(w http.ResponseWriter, r *http.Request, ex *Exchange, id string) (jsonrpc.ID, bool, step) {
	switch r.Method {
	case http.MethodGet:
		return jsonrpc.ID{}, true, stepCheck
	case http.MethodDelete:
		return jsonrpc.ID{}, false, stepCheck
	case http.MethodPost:
	default:
		return jsonrpc.ID{}, false, stepPass
	}
	if ex == nil || ex.msg == nil {
		return jsonrpc.ID{}, false, stepPass
	}
	msg := ex.msg
	reqID, touch := msg.ID, msg.IsRequest()
	if len(r.Header[HeaderSessionID]) > 1 {
		refuse(w, r, http.StatusBadRequest, reqID, jsonrpc.CodeInvalidRequest, msgRepeatedSessionID)
		return reqID, touch, stepAnswered
	}
	switch {
	case msg.Method == "initialize" && id != "":
		// Known, not Lookup: answering "already initialized" must not rebuild, hold or renew
		// the session (on a shared store, one another replica created).
		if err := v.sessions.Known(r.Context(), id); err != nil {
			RefuseLookup(w, r, reqID, err)
		} else {
			refuse(w, r, http.StatusBadRequest, reqID, jsonrpc.CodeInvalidRequest, msgAlreadyInitialized)
		}
		return reqID, touch, stepAnswered
	case (msg.Method == "initialize" || msg.Method == "server/discover") && id == "":
		return reqID, touch, stepPass
	}
	return reqID, touch, stepCheck
}

// check is what one request's session check needs. Checks are pooled with their allow function
// bound once, so that a lookup costs no closure (the store runs allow before GetChecked returns).
type check struct {
	v         *validator
	principal string
	origin    string
	allow     func(*session.Entry) bool // c.allows, bound when the check was made
}

var checks = sync.Pool{New: func() any {
	c := &check{}
	c.allow = c.allows
	return c
}}

func (c *check) allows(s *session.Entry) bool { return c.v.allows(s, c.principal, c.origin) }

// allows reports whether a request by principal carrying origin (its Origin header, "" when
// absent) may use session s.
func (v *validator) allows(s *session.Entry, principal, origin string) bool {
	if s.Owner != principal {
		return false // another principal's session, or nobody's
	}
	if v.checkOrigin && s.Origin != "" && origin != "" && !strings.EqualFold(origin, s.Origin) {
		return false
	}
	return true
}

// RefuseLookup answers a failed session lookup (err from session.Lookup): 404 "Session not found"
// for a session that is not there, 503 with the shutting-down text for a closed store, 409 for a
// claim another request holds (the in-flight text for a request id, the one-stream text for a
// GET), and 503 "Service unavailable: session store error" otherwise. The store's own error may
// name hosts or keys: it is never shown to the client.
func RefuseLookup(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, err error) {
	switch {
	case errors.Is(err, session.ErrClaimed) && r.Method == http.MethodGet:
		RefuseSecondStream(w, r)
	case errors.Is(err, session.ErrClaimed):
		RefuseInFlight(w, r, id)
	case errors.Is(err, session.ErrNotFound):
		RefuseSessionNotFound(w, r, id)
	case errors.Is(err, session.ErrClosed):
		RefuseShuttingDown(w, r, id)
	default:
		refuse(w, r, http.StatusServiceUnavailable, id, jsonrpc.CodeInternalError, msgStoreFailed)
	}
}
