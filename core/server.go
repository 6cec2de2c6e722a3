package core

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
)

// Options configure a Server. The zero value is a working, secure configuration.
type Options struct {
	// Instructions tell the client how to use the server (sent from 2025-03-26 on).
	Instructions string

	// Capabilities, when set, replaces the capabilities derived from what is registered.
	Capabilities *ServerCapabilities

	// ProtocolVersion pins the version initialize counter-offers when the client asks for one
	// the server does not speak. Empty means the latest handshake version. It must be a handshake
	// version (2024-11-05 .. 2025-11-25); NewServer panics otherwise.
	ProtocolVersion string

	// PageSize is the number of items per page of the list methods. Zero means 1000.
	PageSize int

	// LogLevel is the threshold for log messages on a legacy session that never sent
	// logging/setLevel. Empty means info.
	LogLevel LoggingLevel

	// SkipArgumentValidation turns off validating tool arguments against the input schema.
	// Missing required arguments are still reported. The zero value validates.
	SkipArgumentValidation bool

	// SubscribeHandler, when set, enables resources/subscribe (the resources.subscribe
	// capability). It may refuse a subscription by returning an error. The session keeps track of
	// the subscribed URIs for NotifyResourceUpdated. Use AcceptSubscription to accept them all.
	SubscribeHandler func(ctx context.Context, req *SubscribeRequest) error

	// MaxSubscriptions caps the resources one session may subscribe to. Zero means
	// DefaultMaxSubscriptions (1000); a negative value removes the cap. Past it,
	// resources/subscribe answers -32602.
	MaxSubscriptions int

	// MaxSubscriptionURIBytes bounds the URI of one resource subscription, in bytes; a longer
	// one is refused with -32602 before SubscribeHandler sees it. MaxSubscriptionBytes bounds the
	// subscribed URIs of one session together. Zero means DefaultMaxSubscriptionURIBytes (8 KiB)
	// and DefaultMaxSubscriptionBytes (256 KiB); a negative value removes the bound.
	MaxSubscriptionURIBytes int
	MaxSubscriptionBytes    int
	// MaxClientInfoBytes bounds what a session keeps of the client's initialize: its clientInfo
	// and capabilities objects together, in bytes as sent. Zero means DefaultMaxClientInfoBytes
	// (32 KiB); a negative value removes the bound. Past it initialize answers -32602 naming
	// the limit.
	MaxClientInfoBytes int

	// UnsubscribeHandler is called on resources/unsubscribe, when set.
	UnsubscribeHandler func(ctx context.Context, req *SubscribeRequest) error

	// CompletionHandler, when set, serves completion/complete (the completions capability).
	CompletionHandler CompletionHandler

	// CacheTTLMs is the ttlMs hint (SEP-2549) on 2026-07-28 results of server/discover, the list
	// methods and resources/read: how long a client may reuse them. Zero means 0 (do not reuse
	// without revalidating). A handler can set its own on a result (SetCache).
	CacheTTLMs int64
	// CacheScope is the cacheScope hint that goes with it: "private" (the default when empty)
	// or "public" (shareable between users). NewServer panics on any other value.
	CacheScope string

	// ServerToClientRequestTimeout bounds every request a handler sends to the client
	// (sampling, elicitation, roots, ping) unless the call overrides it with WithTimeout. Zero
	// means DefaultServerToClientRequestTimeout (10 minutes); NewServer panics on a negative
	// value.
	ServerToClientRequestTimeout time.Duration

	// OnRootsListChanged is called when a client says its roots changed. It runs on the
	// connection's reading path: it must return quickly (note the session, fetch roots from
	// the next request that needs them).
	OnRootsListChanged func(ctx context.Context, s *Session)

	// RequestState protects the requestState of input_required results (SEP-2322): sealed with
	// AES-256-GCM and bound to the method, target, arguments, expiry and the request's principal. The
	// zero value seals with a random per-process key (replicas must share Key).
	RequestState RequestStateOptions

	// DisableInputShim turns off the legacy shim: a handler returning input_required to a
	// legacy request then fails with -32603, instead of the server fulfilling the input requests
	// as server-to-client requests and running the handler again.
	DisableInputShim bool

	// Broadcaster carries change notifications (list changes, resource updates) to the legacy
	// sessions and listen streams of every replica. Nil means an in-process broadcaster.
	Broadcaster Broadcaster

	// Observer sees every request and notification the server serves, every request it sends to
	// a client and the end of every session, on every transport (see Observer; package otelmcp
	// provides OpenTelemetry spans and metrics). Nil observes nothing and costs nothing. On
	// Streamable HTTP the tracing layer, which times the whole exchange, starts the operation
	// and core fills in its outcome.
	Observer Observer

	// Logger receives, at error level, what a client is never told in full: the error a tool
	// handler returned (the model gets its text as an isError result), the error of any other
	// handler (answered -32603), a panic with its value and stack (answered -32603; the server
	// keeps serving), a result that cannot be encoded or breaks its output schema. Nil means
	// zerolog's global logger (github.com/rs/zerolog/log.Logger, which writes to stderr unless the
	// program changed it); a pointer to zerolog.Nop() silences it. The same option, of the same
	// type, exists in mcphttp.Options and stdio.Options for what those packages log.
	Logger *zerolog.Logger

	// Visibility, when set, is the server-wide filter of what each caller sees: it decides, per
	// request, about every tool, prompt, resource (those of extensions' sources included) and
	// resource template, after the entry's own Visible predicate (see Visibility). Nil shows
	// every entry its own predicate and the request's filters (WithVisibility) let through.
	Visibility Visibility

	// Extensions are the protocol extensions the server serves (the packages under ext/:
	// tasks, skills), bound by NewServer in this order. NewServer panics, naming it, on an
	// extension without an id, an id given twice, and a method core or another extension
	// serves. Nil serves the core protocol only, at no cost.
	Extensions []Extension
}

// DefaultMaxSubscriptions is the per-session cap on resource subscriptions when
// Options.MaxSubscriptions is zero.
const DefaultMaxSubscriptions = 1000

// Defaults of the per-session byte bounds of Options.
const (
	DefaultMaxSubscriptionURIBytes = 8 << 10
	DefaultMaxSubscriptionBytes    = 256 << 10
	DefaultMaxClientInfoBytes      = 32 << 10
)

// AcceptSubscription is a SubscribeHandler that accepts every subscription.
func AcceptSubscription(context.Context, *SubscribeRequest) error { return nil }

// Server holds the configuration and the registry of tools, prompts, resources and custom
// methods. It is safe for concurrent use and shared by every session and transport.
type Server struct {
	impl Implementation
	info []byte // impl encoded once, for the _meta of modern results
	opts Options

	mu        sync.RWMutex
	tools     registry[*toolEntry]
	prompts   registry[*promptEntry]
	resources registry[*resourceEntry]
	templates registry[*templateEntry]
	methods   map[string]MethodHandler

	// The bound extensions and what they serve; set by NewServer, read only afterwards.
	exts            []*extension
	extMethods      map[string]*extMethod
	toolHooks       []func(t *Tool, removed bool) error
	callHooks       []func(tc *ToolCall) (any, bool, error)
	resourceSources map[string]ResourceSource

	sessMu   sync.Mutex
	sessions map[*Session]struct{}

	broadcaster Broadcaster
	sealer      *sealer
}

// NewServer returns a server that introduces itself as impl, configured by opts (the zero
// Options is the documented default). It panics when an option is invalid, naming it.
func NewServer(impl Implementation, opts Options) *Server {
	s := &Server{impl: impl, opts: opts, methods: map[string]MethodHandler{}, sessions: map[*Session]struct{}{}}
	if v := s.opts.ProtocolVersion; v != "" && !IsHandshakeVersion(v) {
		panic(fmt.Sprintf("mcpkit: Options.ProtocolVersion %q is not a handshake version (%v)", v, handshakeVersions))
	}
	if s.opts.PageSize < 0 {
		panic("mcpkit: Options.PageSize must not be negative")
	}
	if s.opts.MaxSubscriptions == 0 {
		s.opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	defaultInt(&s.opts.MaxSubscriptionURIBytes, DefaultMaxSubscriptionURIBytes)
	defaultInt(&s.opts.MaxSubscriptionBytes, DefaultMaxSubscriptionBytes)
	defaultInt(&s.opts.MaxClientInfoBytes, DefaultMaxClientInfoBytes)
	if s.opts.PageSize == 0 {
		s.opts.PageSize = 1000
	}
	switch s.opts.CacheScope {
	case "", "private", "public":
	default:
		panic(fmt.Sprintf("mcpkit: Options.CacheScope %q must be \"private\" or \"public\"", s.opts.CacheScope))
	}
	if s.opts.ServerToClientRequestTimeout < 0 {
		panic("mcpkit: Options.ServerToClientRequestTimeout must not be negative")
	}
	if s.opts.ServerToClientRequestTimeout == 0 {
		s.opts.ServerToClientRequestTimeout = DefaultServerToClientRequestTimeout
	}
	if s.opts.CacheTTLMs < 0 {
		panic("mcpkit: Options.CacheTTLMs must not be negative")
	}
	s.info, _ = marshal(s.impl)
	var err error
	if s.sealer, err = newSealer(s.opts.RequestState); err != nil {
		panic("mcpkit: Options." + err.Error())
	}
	s.broadcaster = s.opts.Broadcaster
	if s.broadcaster == nil {
		s.broadcaster = newLocalBroadcaster()
	}
	s.broadcaster.Subscribe(s.deliverToSessions)
	if s.opts.LogLevel == "" {
		s.opts.LogLevel = LevelInfo
	} else if !s.opts.LogLevel.Valid() {
		panic(fmt.Sprintf("mcpkit: Options.LogLevel %q is not a logging level", s.opts.LogLevel))
	}
	s.bindExtensions()
	return s
}

// Capabilities returns what the server offers: Options.Capabilities when set, otherwise derived
// from what is registered (tools, prompts and resources announce list changes; logging is always
// offered; completions and resource subscriptions when their handlers are set).
func (s *Server) Capabilities() ServerCapabilities {
	if s.opts.Capabilities != nil {
		return *s.opts.Capabilities
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	caps := ServerCapabilities{Logging: &struct{}{}}
	if s.tools.len() > 0 {
		caps.Tools = &ListChangedCapability{ListChanged: true}
	}
	if s.prompts.len() > 0 {
		caps.Prompts = &ListChangedCapability{ListChanged: true}
	}
	if s.resources.len() > 0 || s.templates.len() > 0 || s.opts.SubscribeHandler != nil || s.offersSources() {
		caps.Resources = &ResourcesCapability{ListChanged: true, Subscribe: s.opts.SubscribeHandler != nil}
	}
	if s.opts.CompletionHandler != nil {
		caps.Completions = &struct{}{}
	}
	s.addExtensionCapabilities(&caps)
	return caps
}

// HandleMethod registers a handler for a custom method, replacing any earlier one. Methods the
// protocol defines, and those of the server's extensions, cannot be replaced this way (it
// panics).
func (s *Server) HandleMethod(method string, h MethodHandler) {
	if _, ok := builtinMethods[method]; ok || method == "" {
		panic(fmt.Sprintf("mcpkit: HandleMethod: %q is a protocol method", method))
	}
	if m := s.extMethods[method]; m != nil {
		panic(fmt.Sprintf("mcpkit: HandleMethod: %q is a method of extension %q", method, m.ext.spec.ID))
	}
	s.mu.Lock()
	s.methods[method] = h
	s.mu.Unlock()
}

// MethodHandler serves a custom method. Its result is encoded as the response's result.
type MethodHandler func(ctx context.Context, call *Call) (any, error)

// addSession and removeSession keep the set of live sessions for broadcasts.
func (s *Server) addSession(ss *Session) {
	s.sessMu.Lock()
	s.sessions[ss] = struct{}{}
	s.sessMu.Unlock()
}

func (s *Server) removeSession(ss *Session) {
	s.sessMu.Lock()
	delete(s.sessions, ss)
	s.sessMu.Unlock()
}

// liveSessions returns a snapshot, so that nothing is written while the lock is held.
func (s *Server) liveSessions() []*Session {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// logger returns Options.Logger, or zerolog's global logger when it is nil (read at each use,
// so a program that sets the global logger after NewServer is still heard).
func (s *Server) logger() *zerolog.Logger {
	if s.opts.Logger != nil {
		return s.opts.Logger
	}
	return &log.Logger
}

// logError logs an internal error at error level.
func (s *Server) logError(err error) {
	if err != nil {
		s.logger().Error().Err(err).Msg("mcpkit: internal error")
	}
}

// registry is an insertion-ordered map, so listings are deterministic.
type registry[T any] struct {
	keys  []string
	items map[string]T
	// guards are the keys whose entries have a Visibility of their own.
	guards map[string]struct{}
}

// guard records whether the entry under k has a Visibility of its own.
func (r *registry[T]) guard(k string, on bool) {
	switch {
	case on:
		if r.guards == nil {
			r.guards = map[string]struct{}{}
		}
		r.guards[k] = struct{}{}
	case r.guards != nil:
		delete(r.guards, k)
	}
}

// guarded reports whether an entry has a Visibility of its own.
func (r *registry[T]) guarded() bool { return len(r.guards) > 0 }

func (r *registry[T]) len() int { return len(r.keys) }

func (r *registry[T]) get(k string) (T, bool) {
	v, ok := r.items[k]
	return v, ok
}

// set adds or replaces; a replaced entry keeps its place.
func (r *registry[T]) set(k string, v T) {
	if r.items == nil {
		r.items = map[string]T{}
	}
	if _, ok := r.items[k]; !ok {
		r.keys = append(r.keys, k)
	}
	r.items[k] = v
}

func (r *registry[T]) remove(k string) bool {
	if _, ok := r.items[k]; !ok {
		return false
	}
	delete(r.items, k)
	r.guard(k, false)
	for i, x := range r.keys {
		if x == k {
			r.keys = append(r.keys[:i:i], r.keys[i+1:]...)
			break
		}
	}
	return true
}

// values returns the entries in insertion order.
func (r *registry[T]) values() []T {
	out := make([]T, len(r.keys))
	for i, k := range r.keys {
		out[i] = r.items[k]
	}
	return out
}

func (s *Server) cacheScope() string {
	if s.opts.CacheScope == "" {
		return "private"
	}
	return s.opts.CacheScope
}

func (s *Server) serverInfoJSON() []byte { return s.info }

// defaultInt applies the option rule to a bound: zero takes def; negative (no bound) stays.
func defaultInt(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}
