package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Lifecycle chooses how a client talks to a server.
type Lifecycle int

const (
	// Auto sends server/discover first and uses the 2026-07-28 lifecycle when the server speaks
	// it; a server that does not (an error answer, or a list of supported versions without a
	// 2026-07-28 one) gets the initialize handshake instead.
	Auto Lifecycle = iota
	// Legacy always uses the initialize handshake (Options.ProtocolVersion, 2025-11-25 by
	// default) and one session.
	Legacy
	// Modern always uses the stateless 2026-07-28 lifecycle: server/discover, then every request
	// carries the _meta envelope.
	Modern
)

func (l Lifecycle) String() string {
	switch l {
	case Auto:
		return "auto"
	case Legacy:
		return "legacy"
	case Modern:
		return "modern"
	}
	return fmt.Sprintf("Lifecycle(%d)", int(l))
}

// Defaults of Options.
const (
	// DefaultTimeout bounds every call that has no deadline of its own.
	DefaultTimeout = 5 * time.Minute
	// DefaultDiscoverTimeout bounds the server/discover probe of the Auto lifecycle.
	DefaultDiscoverTimeout = 10 * time.Second
	// DefaultMaxInputRounds bounds the input_required rounds one call may take.
	DefaultMaxInputRounds = 8
	// DefaultMaxServerRequests bounds the server-to-client requests handled at once.
	DefaultMaxServerRequests = 16
)

// Options configure a client. The zero value is a client named "mcpkit-client" in the Auto
// lifecycle that declares no capabilities and answers no server requests.
type Options struct {
	// Info names the client (clientInfo). Zero means {Name: "mcpkit-client", Version: "0"}.
	Info core.Implementation
	// Lifecycle is Auto (the default), Legacy or Modern.
	Lifecycle Lifecycle
	// ProtocolVersion is the version offered by initialize in the legacy lifecycle. Empty means
	// core.LatestHandshakeVersion; it must be a handshake version (Connect panics otherwise).
	ProtocolVersion string
	// Capabilities are extra capabilities to declare (experimental, extensions). The sampling,
	// elicitation and roots capabilities are derived from the handlers below and need not be set.
	Capabilities core.ClientCapabilities
	// Apps declares the MCP Apps extension (io.modelcontextprotocol/ui, package ext/apps): the
	// client renders text/html;profile=mcp-app, so servers link UIs to their tools. An entry for
	// the extension already in Capabilities is kept. The zero value declares nothing.
	Apps bool

	// DiscoverTimeout bounds the server/discover probe of Auto: a server that has not answered
	// by then is taken for a legacy one (some ignore requests before initialize). Zero means
	// DefaultDiscoverTimeout; negative means the probe waits as long as any call.
	DiscoverTimeout time.Duration
	// Timeout bounds every call without a deadline of its own. Zero means DefaultTimeout;
	// negative means none (the caller's context alone decides).
	Timeout time.Duration
	// MaxInputRounds bounds how many input_required results one 2026-07-28 call answers before it
	// fails with ErrTooManyInputRounds. Zero means DefaultMaxInputRounds; it may not be negative.
	MaxInputRounds int
	// MaxServerRequests bounds the requests from the server (legacy lifecycle: ping, sampling,
	// elicitation, roots) handled at once, each until its answer is sent: past it, a request is
	// refused at once with a JSON-RPC error (-32603, "Client busy") instead of starting its
	// handler, and when as many refusals are still being sent, it is dropped unanswered. It also
	// bounds the input requests one 2026-07-28 input_required result may ask for; a result
	// asking more fails the call. Zero means DefaultMaxServerRequests (16); it may not be
	// negative.
	MaxServerRequests int

	// Sampling answers sampling/createMessage. Nil means sampling is not declared.
	Sampling func(ctx context.Context, p *core.CreateMessageParams) (*core.CreateMessageResult, error)
	// Elicitation answers elicitation/create (form and, with URLElicitation, url mode). Nil means
	// elicitation is not declared. Defaults of the requested schema are filled into accepted
	// content the handler left out (SEP-1034).
	Elicitation func(ctx context.Context, p *core.ElicitParams) (*core.ElicitResult, error)
	// URLElicitation declares url-mode elicitation besides form mode (Elicitation must be set).
	URLElicitation bool
	// Roots answers roots/list. Nil means roots are not declared. Call Client.RootsChanged to
	// send notifications/roots/list_changed.
	Roots func(ctx context.Context) ([]core.Root, error)

	// OnLog receives notifications/message from the server.
	OnLog func(ctx context.Context, m LogMessage)
	// OnNotification receives every other notification from the server that no call or Listen
	// consumed (list changes, resource updates of Subscribe, elicitation completion, ...). It must not block for long: it runs on the transport's reading path.
	OnNotification func(ctx context.Context, n Notification)

	// DisableReconnect keeps the client from starting a new session by itself when the server
	// no longer knows the legacy HTTP session (HTTP 404, ErrSessionExpired). By default, as the
	// specification requires, the client sends a new initialize (once, for all the calls that
	// met the expiry), restores its resource subscriptions and logging level, and repeats the
	// call, unless the request may already have run (its stream broke first) and is not
	// read-only, or it continues a list from a cursor of the old session. With
	// DisableReconnect, calls fail with ErrSessionExpired until Client.Reconnect is called.
	DisableReconnect bool
	// OnReconnect, when set, is told that a new session replaced an expired (or, with
	// Client.Reconnect, a deleted) one, once subscriptions and logging level are restored: the
	// server has forgotten anything else the old session held.
	OnReconnect func(ctx context.Context, oldSession, newSession string)

	// DisableTasks keeps the client from declaring the tasks extension (SEP-2663), which it
	// otherwise declares to a 2026-07-28 server that offers it.
	DisableTasks bool

	// Telemetry configures OpenTelemetry spans and metrics; the zero value uses the global
	// providers.
	Telemetry Telemetry
}

// LogMessage is a notifications/message from the server.
type LogMessage struct {
	Level  core.LoggingLevel `json:"level"`
	Logger string            `json:"logger,omitzero"`
	Data   json.RawMessage   `json:"data"`
}

// Notification is a notification from the server: its method and raw params.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Progress is a notifications/progress of one call.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitzero"`
	Message  string  `json:"message,omitzero"`
}

var (
	// ErrClosed is returned by calls on a closed client, and by calls in flight when the
	// connection ends.
	ErrClosed = errors.New("mcpkit/client: connection closed")
	// ErrTooManyInputRounds is returned when a server keeps answering input_required past
	// Options.MaxInputRounds.
	ErrTooManyInputRounds = errors.New("mcpkit/client: too many input_required rounds")
	// ErrUnsupported is returned for a call the negotiated lifecycle or transport does not have
	// (Subscribe on 2026-07-28, Listen on a legacy HTTP session without its GET stream,
	// Reconnect anywhere but on a legacy HTTP session).
	ErrUnsupported = errors.New("mcpkit/client: not available in this lifecycle")
)

// Client is a connection to one MCP server. It is safe for concurrent use.
type Client struct {
	opts      Options
	info      core.Implementation
	maxRounds int
	timeout   time.Duration
	// probeTimeout bounds Auto's server/discover probe (negative: none).
	probeTimeout time.Duration
	tel          *telemetry

	link link

	modern       bool
	version      string
	serverInfo   core.Implementation
	serverCaps   core.ServerCapabilities
	instructions string
	// caps is what every 2026-07-28 request declares, fixed once server/discover answered.
	caps core.ClientCapabilities

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[jsonrpc.ID]*pendingCall
	progress map[string]func(Progress)
	listens  map[string]*Subscription
	tools    map[string]*toolInfo
	logLevel core.LoggingLevel
	serving  map[jsonrpc.ID]context.CancelFunc
	// slots holds one token per server request being handled (Options.MaxServerRequests);
	// refusals one per refusal being sent.
	slots    chan struct{}
	refusals chan struct{}
	// uris counts the open legacy listens holding a resources/subscribe of each URI; explicit
	// are the URIs of Subscribe calls. Both are restored on a new session.
	uris      map[string]int
	explicit  map[string]bool
	recoverMu sync.Mutex // one new session at a time
	closed    bool
	closeErr  error
	handlers  sync.WaitGroup
	baseCtx   context.Context
	cancelAll context.CancelFunc
	done      chan struct{}
}

type pendingCall struct {
	ch   chan *jsonrpc.Message
	stop context.CancelFunc // ends the read of the request's stream; set before sending
}

// Connect opens the transport and runs the lifecycle's opening exchange: initialize (legacy) or
// server/discover (2026-07-28, and first in Auto). It panics on invalid options.
func Connect(ctx context.Context, t Transport, opts Options) (*Client, error) {
	c := newClient(opts)
	l, err := t.open(ctx, c)
	if err != nil {
		c.cancelAll()
		return nil, err
	}
	c.link = l
	if err := c.start(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

func newClient(o Options) *Client {
	if o.Lifecycle < Auto || o.Lifecycle > Modern {
		panic(fmt.Sprintf("mcpkit/client: Options.Lifecycle: unknown value %d", int(o.Lifecycle)))
	}
	if o.ProtocolVersion != "" && !core.IsHandshakeVersion(o.ProtocolVersion) {
		panic(fmt.Sprintf("mcpkit/client: Options.ProtocolVersion: %q is not a handshake version (%v)", o.ProtocolVersion, transport.Core.HandshakeVersions()))
	}
	if o.MaxInputRounds < 0 {
		panic("mcpkit/client: Options.MaxInputRounds: must not be negative")
	}
	if o.MaxServerRequests < 0 {
		panic("mcpkit/client: Options.MaxServerRequests: must not be negative")
	}
	if o.URLElicitation && o.Elicitation == nil {
		panic("mcpkit/client: Options.URLElicitation: needs Options.Elicitation")
	}
	c := &Client{
		opts:      o,
		info:      o.Info,
		maxRounds: o.MaxInputRounds,
		timeout:   o.Timeout,
		pending:   map[jsonrpc.ID]*pendingCall{},
		progress:  map[string]func(Progress){},
		listens:   map[string]*Subscription{},
		tools:     map[string]*toolInfo{},
		serving:   map[jsonrpc.ID]context.CancelFunc{},
		uris:      map[string]int{},
		explicit:  map[string]bool{},
		done:      make(chan struct{}),
	}
	maxServing := o.MaxServerRequests
	if maxServing == 0 {
		maxServing = DefaultMaxServerRequests
	}
	c.slots = make(chan struct{}, maxServing)
	c.refusals = make(chan struct{}, maxServing)
	if c.info.Name == "" {
		c.info.Name = "mcpkit-client"
	}
	if c.info.Version == "" {
		c.info.Version = "0"
	}
	if c.maxRounds == 0 {
		c.maxRounds = DefaultMaxInputRounds
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	c.probeTimeout = o.DiscoverTimeout
	if c.probeTimeout == 0 {
		c.probeTimeout = DefaultDiscoverTimeout
	}
	c.tel = newTelemetry(o.Telemetry)
	c.baseCtx, c.cancelAll = context.WithCancel(context.Background())
	return c
}

// capabilities returns what the client declares: the configured ones plus those its handlers
// provide.
func (c *Client) capabilities() core.ClientCapabilities {
	caps := core.ClientCapabilities{}
	for k, v := range c.opts.Capabilities {
		caps[k] = v
	}
	if c.opts.Sampling != nil {
		if _, ok := caps["sampling"]; !ok {
			caps["sampling"] = map[string]any{}
		}
	}
	if c.opts.Elicitation != nil {
		if _, ok := caps["elicitation"]; !ok {
			e := map[string]any{"form": map[string]any{}}
			if c.opts.URLElicitation {
				e["url"] = map[string]any{}
			}
			caps["elicitation"] = e
		}
	}
	if c.opts.Roots != nil {
		if _, ok := caps["roots"]; !ok {
			caps["roots"] = map[string]any{"listChanged": true}
		}
	}
	if c.modern && !c.opts.DisableTasks && c.tasksDeclared() {
		ext, _ := caps["extensions"].(map[string]any)
		ext = maps.Clone(ext)
		if ext == nil {
			ext = map[string]any{}
		}
		if _, ok := ext[tasks.ExtensionID]; !ok {
			ext[tasks.ExtensionID] = map[string]any{}
		}
		caps["extensions"] = ext
	}
	if c.opts.Apps {
		caps = declareApps(caps)
	}
	return caps
}

// start runs the opening exchange of the chosen lifecycle.
func (c *Client) start(ctx context.Context) error {
	switch c.opts.Lifecycle {
	case Legacy:
		return c.initialize(ctx)
	case Modern:
		return c.discover(ctx, false)
	}
	return c.discover(ctx, true)
}

// discoverResult is the result of server/discover.
type discoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      core.ServerCapabilities    `json:"capabilities"`
	Instructions      string                     `json:"instructions,omitzero"`
	ServerInfo        *core.Implementation       `json:"serverInfo,omitzero"`
	Meta              map[string]json.RawMessage `json:"_meta,omitzero"`
}

// discover sends server/discover in the 2026-07-28 lifecycle. With fallback (Auto), a server
// that does not speak it gets initialize instead.
func (c *Client) discover(ctx context.Context, fallback bool) error {
	c.modern = true
	c.version = core.Version20260728
	var res discoverResult
	var probe *callOpts
	if fallback && c.probeTimeout > 0 {
		probe = &callOpts{timeout: c.probeTimeout}
	}
	err := c.call(ctx, "server/discover", map[string]any{}, &res, probe)
	if fallback && err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		// No answer in time: a legacy server that ignores requests before initialize.
		return c.initialize(ctx)
	}
	var werr *jsonrpc.Error
	if err != nil && errors.As(err, &werr) && werr.Code == jsonrpc.CodeUnsupportedProtocolVersion {
		// Retry once with a version the server lists (even the same one: the rejection may
		// have been about how the first request said it).
		if v := pickModern(werr.Data); v != "" {
			c.version = v
			err = c.call(ctx, "server/discover", map[string]any{}, &res, nil)
		}
	}
	if err == nil {
		if v := pickModern(res.SupportedVersions); v != "" {
			c.version = v
		} else if fallback {
			return c.initialize(ctx)
		} else {
			return fmt.Errorf("mcpkit/client: the server supports none of %v (it offers %v)", transport.Core.ModernVersions(), res.SupportedVersions)
		}
		c.serverCaps = res.Capabilities
		c.instructions = res.Instructions
		c.caps = c.capabilities()
		if res.ServerInfo != nil {
			c.serverInfo = *res.ServerInfo
		} else if raw, ok := res.Meta[metakey.ServerInfo]; ok {
			_ = jsonv2.Unmarshal(raw, &c.serverInfo)
		}
		return nil
	}
	if fallback && legacyAnswer(err) {
		return c.initialize(ctx)
	}
	return err
}

// legacyAnswer reports whether err is how a server without the 2026-07-28 lifecycle answers
// server/discover: any JSON-RPC error but the modern ones (a header mismatch, a missing
// capability, or an unsupported version when the server lists one the client speaks), or an
// HTTP client error status without such a body; never a refusal to authorize.
func legacyAnswer(err error) bool {
	var aerr *AuthError
	if errors.As(err, &aerr) {
		return false // a legacy server would refuse initialize the same way
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		switch werr.Code {
		case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability:
			return false
		case jsonrpc.CodeUnsupportedProtocolVersion:
			return pickModern(werr.Data) == ""
		}
		return true
	}
	var herr *HTTPError
	return errors.As(err, &herr) && herr.StatusCode >= 400 && herr.StatusCode < 500
}

// pickModern returns the first 2026-07-28-style version the kit speaks among the supported
// versions v names ([]string, or error data with a "supported" list).
func pickModern(v any) string {
	var list []string
	switch x := v.(type) {
	case []string:
		list = x
	case map[string]any:
		if s, ok := x["supported"].([]any); ok {
			for _, e := range s {
				if str, ok := e.(string); ok {
					list = append(list, str)
				}
			}
		}
	case json.RawMessage:
		var d struct {
			Supported []string `json:"supported"`
		}
		if jsonv2.Unmarshal(x, &d) == nil {
			list = d.Supported
		}
	}
	for _, s := range list {
		if core.IsModernVersion(s) {
			return s
		}
	}
	return ""
}

type initializeResult struct {
	ProtocolVersion string                  `json:"protocolVersion"`
	Capabilities    core.ServerCapabilities `json:"capabilities"`
	ServerInfo      core.Implementation     `json:"serverInfo"`
	Instructions    string                  `json:"instructions,omitzero"`
}

// initialize runs the legacy handshake: initialize, then notifications/initialized.
func (c *Client) initialize(ctx context.Context) error {
	c.modern = false
	c.version = ""
	res, err := c.handshake(ctx)
	if err != nil {
		return err
	}
	c.version = res.ProtocolVersion
	c.serverInfo = res.ServerInfo
	c.serverCaps = res.Capabilities
	c.instructions = res.Instructions
	return c.opened(ctx, res.ProtocolVersion)
}

// handshake sends initialize and checks the version the server chose.
func (c *Client) handshake(ctx context.Context) (*initializeResult, error) {
	want := c.opts.ProtocolVersion
	if want == "" {
		want = core.LatestHandshakeVersion
	}
	params := map[string]any{
		"protocolVersion": want,
		"capabilities":    c.capabilities(),
		"clientInfo":      c.info,
	}
	var res initializeResult
	if err := c.call(ctx, "initialize", params, &res, nil); err != nil {
		return nil, err
	}
	if !core.IsHandshakeVersion(res.ProtocolVersion) {
		return nil, fmt.Errorf("mcpkit/client: the server answered initialize with protocol version %q, which this client does not speak (%v)", res.ProtocolVersion, transport.Core.HandshakeVersions())
	}
	return &res, nil
}

// opened completes a handshake: the transport learns the version, the server gets
// notifications/initialized, and a legacy HTTP session opens its GET stream.
func (c *Client) opened(ctx context.Context, version string) error {
	c.link.negotiated(version)
	if err := c.notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	c.link.ready(ctx)
	return nil
}

// ProtocolVersion returns the negotiated protocol version.
func (c *Client) ProtocolVersion() string { return c.version }

// Modern reports whether the client speaks the 2026-07-28 lifecycle with this server.
func (c *Client) Modern() bool { return c.modern }

// ServerInfo returns what the server said about itself.
func (c *Client) ServerInfo() core.Implementation { return c.serverInfo }

// ServerCapabilities returns the capabilities the server declared.
func (c *Client) ServerCapabilities() core.ServerCapabilities { return c.serverCaps }

// Instructions returns the server's instructions, if any.
func (c *Client) Instructions() string { return c.instructions }

// SessionID returns the transport's session id (Mcp-Session-Id on HTTP legacy sessions), or "".
func (c *Client) SessionID() string { return c.link.sessionID() }

// Close ends the connection: calls in flight fail with ErrClosed, handlers of server requests
// are cancelled and awaited, a legacy HTTP session is deleted, a spawned server is stopped. It
// is safe to call more than once.
func (c *Client) Close() error {
	if !c.failAll(true, nil) {
		return nil
	}
	c.cancelAll()
	var err error
	if c.link != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = c.link.close(ctx)
		cancel()
	}
	c.handlers.Wait()
	c.tel.sessionEnd(c)
	close(c.done)
	return err
}

// Done is closed once Close has finished.
func (c *Client) Done() <-chan struct{} { return c.done }

// connLost is called by a link whose connection ended: every call in flight fails.
func (c *Client) connLost(err error) { c.failAll(false, err) }

// failAll fails every call and listen stream in flight. With closing it marks the client
// closed and reports false when it already was; otherwise it records why the connection ended.
func (c *Client) failAll(closing bool, cause error) bool {
	c.mu.Lock()
	if closing {
		if c.closed {
			c.mu.Unlock()
			return false
		}
		c.closed = true
	} else if c.closeErr == nil && !c.closed {
		c.closeErr = cause
	}
	pend := c.pending
	c.pending = map[jsonrpc.ID]*pendingCall{}
	subs := make([]*Subscription, 0, len(c.listens))
	for _, s := range c.listens {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for _, p := range pend {
		close(p.ch)
	}
	for _, s := range subs {
		s.finish(ErrClosed)
	}
	return true
}
