package core

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// SessionState is the protocol state of a legacy session that outlives one process: what
// initialize negotiated, the log level and the resource subscriptions. A shared session store
// keeps it so that another replica can rebuild the session (sessionOptions.State) when a request
// for it lands there. Requests in flight and pending server-to-client requests are not part of
// it: they belong to the process running them.
type SessionState struct {
	// Initialized is true once initialize succeeded.
	Initialized bool `json:"init,omitzero"`
	// ProtocolVersion is the negotiated version ("" before initialize).
	ProtocolVersion string `json:"v,omitzero"`
	// ClientInfo is what the client said about itself in initialize.
	ClientInfo *Implementation `json:"ci,omitzero"`
	// ClientCapabilities are the capabilities the client declared.
	ClientCapabilities ClientCapabilities `json:"cc,omitzero"`
	// LogLevel is the level set by logging/setLevel ("" when never set).
	LogLevel LoggingLevel `json:"ll,omitzero"`
	// Subscriptions are the resource URIs the session subscribed to, sorted.
	Subscriptions []string `json:"sub,omitzero"`
}

// sessionHooks connect a session to state shared with other processes (a shared session store
// and its message router). Every hook is optional; the zero value keeps the session
// process-local, as it is by default. It is a struct literal type so that internal/transport
// names the same type (transport.SessionHooks).
type sessionHooks = struct {
	// Persist is called, with the request's context, after initialize, logging/setLevel,
	// resources/subscribe or resources/unsubscribe changed the state, before the response is
	// sent. An error turns the response into -32603 "Service unavailable: the session could not
	// be saved" (the change stays in this process).
	Persist func(ctx context.Context, st SessionState) error
	// Forward receives a client response that no server-to-client request of this process waits
	// for, and a notifications/cancelled naming a request this process is not running: the
	// waiting request or the running call may be on another replica. The message must not be
	// modified.
	Forward func(ctx context.Context, msg *jsonrpc.Message)
	// Remote is the session-level path used while this process has none (no Out): messages
	// for a standalone stream held by another replica. Broadcast changes never take it (every
	// replica delivers those to its own streams).
	Remote sender
}

// setHooks installs the hooks (replacing earlier ones). Call it before the session serves
// requests.
func (ss *Session) setHooks(h sessionHooks) {
	ss.mu.Lock()
	ss.lastingLocked().hooks = h
	ss.mu.Unlock()
}

// sharedState returns a copy of the session's shared state.
func (ss *Session) sharedState() SessionState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.stateLocked()
}

func (ss *Session) stateLocked() SessionState {
	st := SessionState{
		Initialized:        ss.initialized,
		ProtocolVersion:    ss.version,
		ClientInfo:         ss.clientInfo,
		ClientCapabilities: ss.clientCaps,
		LogLevel:           ss.logLevel,
	}
	if l := ss.lasting; l != nil && len(l.subscriptions) > 0 {
		st.Subscriptions = make([]string, 0, len(l.subscriptions))
		for uri := range l.subscriptions {
			st.Subscriptions = append(st.Subscriptions, uri)
		}
		slices.Sort(st.Subscriptions)
	}
	return st
}

// restore replaces the session's shared state with st (a change another replica made). An
// initialized state locks the session to the legacy lifecycle.
func (ss *Session) restore(st SessionState) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.restoreLocked(st)
}

func (ss *Session) restoreLocked(st SessionState) {
	ss.initialized = st.Initialized
	if st.Initialized {
		ss.era = eraLegacy
	}
	ss.version = st.ProtocolVersion
	ss.clientInfo = st.ClientInfo
	ss.clientCaps = st.ClientCapabilities
	if st.Initialized && ss.clientCaps == nil {
		ss.clientCaps = ClientCapabilities{}
	}
	ss.logLevel = st.LogLevel
	if ss.lasting == nil && len(st.Subscriptions) == 0 {
		return
	}
	l := ss.lastingLocked()
	l.subscriptions, l.subscriptionBytes = nil, 0
	if len(st.Subscriptions) > 0 {
		l.subscriptions = make(map[string]struct{}, len(st.Subscriptions))
		for _, uri := range st.Subscriptions {
			if _, dup := l.subscriptions[uri]; !dup {
				l.subscriptions[uri] = struct{}{}
				l.subscriptionBytes += len(uri)
			}
		}
	}
}

// deliverForwarded hands a message forwarded by another replica to this process's waiters: a client
// response to the server-to-client request waiting for it, or a notifications/cancelled to the
// call it names. It reports whether anything here took it, and never forwards again.
func (ss *Session) deliverForwarded(msg *jsonrpc.Message) bool {
	switch {
	case msg.IsResponse():
		return ss.answer(msg)
	case msg.Method == "notifications/cancelled":
		return ss.cancelCall(msg)
	}
	return false
}

var errNotSaved = jsonrpc.InternalError("Service unavailable: the session could not be saved")

// persist writes the state through the Persist hook, if any.
func (ss *Session) persist(ctx context.Context) *jsonrpc.Error {
	ss.mu.Lock()
	f := ss.hooksLocked().Persist
	var st SessionState
	if f != nil {
		st = ss.stateLocked()
	}
	ss.mu.Unlock()
	if f == nil {
		return nil
	}
	if err := f(ctx, st); err != nil {
		ss.server.logError(err)
		return errNotSaved
	}
	return nil
}

// forward passes a message nobody here takes to the Forward hook, if any.
func (ss *Session) forward(ctx context.Context, msg *jsonrpc.Message) {
	ss.mu.Lock()
	f := ss.hooksLocked().Forward
	ss.mu.Unlock()
	if f != nil {
		f(ctx, msg)
	}
}

// outLocked is the session-level path: the local one, or the remote one while there is none.
func (ss *Session) outLocked() sender {
	if ss.out != nil {
		return ss.out
	}
	return ss.hooksLocked().Remote
}

// hooksLocked returns the session's hooks (none on an ephemeral session without a lasting
// part); ss.mu is held.
func (ss *Session) hooksLocked() sessionHooks {
	if ss.lasting == nil {
		return sessionHooks{}
	}
	return ss.lasting.hooks
}

// sendLocal sends msg on this process's own session-level path, never the remote one: how a
// message another replica routed here for the standalone stream reaches it. It returns ErrNoPath
// when this process has no such path.
func (ss *Session) sendLocal(ctx context.Context, msg []byte) error {
	ss.mu.Lock()
	out := ss.out
	ss.mu.Unlock()
	if out == nil {
		return ErrNoPath
	}
	return out.Send(ctx, msg)
}
