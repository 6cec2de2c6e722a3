package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// Defaults of HTTPTransport.
const (
	// DefaultMaxMessageBytes bounds one message from the server (a JSON body or an SSE event).
	DefaultMaxMessageBytes = 16 << 20
	// DefaultMaxReconnects bounds the reconnections of one broken SSE stream.
	DefaultMaxReconnects = 5
	// DefaultRetry is the wait before reconnecting a stream whose server sent no retry field.
	DefaultRetry = time.Second
	// DefaultMinReconnectDelay is the least wait before reconnecting a stream, whatever retry
	// field the server sent.
	DefaultMinReconnectDelay = 100 * time.Millisecond
	// DefaultMaxReconnectDelay caps the backoff of a stream that keeps ending without a message.
	DefaultMaxReconnectDelay = 30 * time.Second
)

// ErrSessionExpired is returned when the server no longer knows the legacy session (404 on a
// request carrying Mcp-Session-Id). Unless Options.DisableReconnect is set, the client then
// starts a new session by itself (see Client.Reconnect) and repeats the call when that is safe,
// so callers see it only when that failed or the call may already have run.
var ErrSessionExpired = errors.New("mcpkit/client: the server ended the session")

// expiredError is an ErrSessionExpired of one session. ran is set when the request had already
// been accepted (its stream broke and resuming it found the session gone), so repeating it might
// run it twice; a refused POST never ran.
type expiredError struct {
	session string
	ran     bool
	err     error
}

func (e *expiredError) Error() string   { return ErrSessionExpired.Error() + ": " + e.err.Error() }
func (e *expiredError) Unwrap() []error { return []error{ErrSessionExpired, e.err} }

// HTTPError is an HTTP answer that is not a JSON-RPC message.
type HTTPError struct {
	StatusCode int
	// Body is the start of the answer's body (at most 4 KiB).
	Body string
}

func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("mcpkit/client: HTTP %d", e.StatusCode)
	}
	return fmt.Sprintf("mcpkit/client: HTTP %d: %s", e.StatusCode, e.Body)
}

// HTTPTransport connects to a Streamable HTTP endpoint. The zero value (with URL set) uses
// http.DefaultClient and the documented defaults.
type HTTPTransport struct {
	// URL is the endpoint, e.g. http://127.0.0.1:8080/mcp.
	URL string
	// HTTPClient sends every request; set it to plug in auth, tracing or proxies. Nil means
	// http.DefaultClient. Its Timeout must be zero or longer than the longest call: streams
	// stay open for as long as a call (or a listen) runs.
	HTTPClient *http.Client
	// Header is added to every request (for example Authorization).
	Header http.Header
	// DisableStandaloneStream skips the GET stream a legacy session opens after initialize for
	// server messages outside any request (list changes, resource updates).
	DisableStandaloneStream bool
	// MaxMessageBytes bounds one message from the server. Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxReconnects bounds how often one broken SSE stream is resumed with Last-Event-ID.
	// Zero means DefaultMaxReconnects; negative means never.
	MaxReconnects int
	// AllowCrossOriginRedirects lets the transport follow a redirect of an MCP request to
	// another origin (scheme, host and port), which would carry the request's body and its
	// headers (Header: API keys and the like) there. False, the default, refuses such a
	// redirect: the request fails with an error naming the other origin. Redirects within the
	// endpoint's origin are followed as HTTPClient's CheckRedirect allows.
	AllowCrossOriginRedirects bool
	// MinReconnectDelay is the least wait before a stream is reconnected, even when the server
	// asks for less (retry: 0). Each time in a row that a stream ends having delivered no
	// message, the wait doubles, up to MaxReconnectDelay, so a server that answers the GET and
	// closes it at once is not hammered. Zero means DefaultMinReconnectDelay (100 ms); it may
	// not be negative.
	MinReconnectDelay time.Duration
	// MaxReconnectDelay caps that backoff. Zero means DefaultMaxReconnectDelay (30 s); it may
	// not be negative nor less than MinReconnectDelay.
	MaxReconnectDelay time.Duration
}

type httpLink struct {
	t          *HTTPTransport
	info       peerInfo
	hc         *http.Client
	sink       sink
	max        int
	reconnects int
	// minDelay and maxDelay bound the wait before a reconnection; sleep waits (tests replace it).
	minDelay, maxDelay time.Duration
	sleep              func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	session string
	version string
	closed  bool
	// streamErr says why the standalone GET stream is not open (nil while it is, or while it is
	// being opened).
	streamErr error
	// gate is open (nil) but while a new session replaces an expired one: messages other than
	// those starting it wait for it to close.
	gate chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// errNoStream is the standalone stream's state before a legacy session opened it.
var errNoStream = errors.New("no GET stream is open")

func (t *HTTPTransport) open(_ context.Context, s sink) (link, error) {
	if t.URL == "" {
		panic("mcpkit/client: HTTPTransport.URL: must be set")
	}
	if t.MaxMessageBytes < 0 {
		panic("mcpkit/client: HTTPTransport.MaxMessageBytes: must not be negative")
	}
	l := &httpLink{t: t, hc: t.HTTPClient, sink: s, max: t.MaxMessageBytes, reconnects: t.MaxReconnects, sleep: sleepCtx}
	l.minDelay, l.maxDelay = reconnectDelays(t.MinReconnectDelay, t.MaxReconnectDelay)
	if l.hc == nil {
		l.hc = http.DefaultClient
	}
	if !t.AllowCrossOriginRedirects {
		l.hc = sameOriginOnly(l.hc)
	}
	if l.max == 0 {
		l.max = DefaultMaxMessageBytes
	}
	if l.reconnects == 0 {
		l.reconnects = DefaultMaxReconnects
	}
	l.info = peerInfo{network: "tcp", protocol: "http"}
	if u, err := url.Parse(t.URL); err == nil {
		l.info.address = u.Hostname()
		l.info.port, _ = strconv.Atoi(u.Port())
		if l.info.port == 0 {
			switch u.Scheme {
			case "http":
				l.info.port = 80
			case "https":
				l.info.port = 443
			}
		}
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.streamErr = errNoStream
	return l, nil
}

func (l *httpLink) peer() peerInfo { return l.info }

// notifications reports whether messages outside any request can reach the client: the
// standalone GET stream must be open.
func (l *httpLink) notifications() error {
	if l.t.DisableStandaloneStream {
		return errors.New("HTTPTransport.DisableStandaloneStream is set: the session has no stream for notifications")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.streamErr
}

// restart leaves a session the server no longer knows: the standalone stream stops; the next
// initialize (which never carries a session id) brings the new one, and until then concurrent
// requests still name the old id and meet its expiry. It reports false once the link is closed.
func (l *httpLink) restart() bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.cancel()
	l.mu.Unlock()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.streamErr = errNoStream // the old id stays until initialize brings the new one (headers)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if l.gate == nil {
		l.gate = make(chan struct{})
	}
	return true
}

func (l *httpLink) settled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gate != nil {
		close(l.gate)
		l.gate = nil
	}
}

// await holds m back while a new session is being started, unless m is part of starting it.
func (l *httpLink) await(ctx context.Context, m *outMsg) error {
	if m.replacing || m.method == "" {
		return nil
	}
	l.mu.Lock()
	g := l.gate
	l.mu.Unlock()
	if g == nil {
		return nil
	}
	select {
	case <-g:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcpkit/client: %s: waiting for the new session: %w", describe(m), context.Cause(ctx))
	}
}

func (l *httpLink) negotiated(v string) {
	l.mu.Lock()
	l.version = v
	l.mu.Unlock()
}

func (l *httpLink) sessionID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.session
}

func (l *httpLink) cancelsByStream() bool { return true }

// headers sets what every request of the session carries.
func (l *httpLink) headers(h http.Header, m *outMsg) {
	for k, v := range l.t.Header {
		h[k] = append([]string(nil), v...)
	}
	l.mu.Lock()
	sid, ver := l.session, l.version
	l.mu.Unlock()
	if m != nil && m.modern {
		ver = m.version
	}
	if m != nil && m.method == "initialize" {
		sid, ver = "", "" // a new session (after an expired one) starts without the old id
	}
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if ver != "" {
		h.Set("MCP-Protocol-Version", ver)
	}
}

func (l *httpLink) send(ctx context.Context, m *outMsg) error {
	if err := l.await(ctx, m); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.t.URL, bytes.NewReader(m.body))
	if err != nil {
		return err
	}
	h := req.Header
	l.headers(h, m)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if m.modern && m.method != "" {
		h.Set("Mcp-Method", m.method)
		if m.name != "" {
			h.Set("Mcp-Name", headerValue(m.name))
		}
		for _, p := range m.params {
			h.Set("Mcp-Param-"+p[0], p[1])
		}
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return fmt.Errorf("mcpkit/client: %s: %w", describe(m), err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && m.method == "initialize" {
		l.mu.Lock()
		l.session = sid
		l.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		if m.id.IsValid() {
			return fmt.Errorf("mcpkit/client: %s: the server accepted the request without answering it (HTTP %d)", describe(m), resp.StatusCode)
		}
		return nil
	case resp.StatusCode >= 300:
		return l.statusError(resp, m)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		return l.readStream(ctx, resp.Body, m)
	case "application/json":
		body, err := readBounded(resp.Body, l.max)
		if err != nil {
			return fmt.Errorf("mcpkit/client: %s: %w", describe(m), err)
		}
		if got := l.deliverBody(body, m.id); m.id.IsValid() && !got {
			return fmt.Errorf("mcpkit/client: %s: %w", describe(m), invalidAnswer(body, m.id))
		}
		return nil
	}
	if !m.id.IsValid() {
		return nil
	}
	return fmt.Errorf("mcpkit/client: %s: unexpected Content-Type %q", describe(m), resp.Header.Get("Content-Type"))
}

func describe(m *outMsg) string {
	if m.method != "" {
		return m.method
	}
	return "response"
}

// deliverBody hands a JSON body (one message or a batch) to the sink and reports whether it held
// a response to id.
func (l *httpLink) deliverBody(body []byte, id jsonrpc.ID) bool {
	answered := false
	if jsontext.Value(body).Kind() == '[' {
		var items []json.RawMessage
		if jsonv2.Unmarshal(body, &items) == nil {
			for _, it := range items {
				answered = l.sink.deliver(it, jsonrpc.ID{}).Equal(id) || answered
			}
		}
		return answered
	}
	return l.sink.deliver(body, jsonrpc.ID{}).Equal(id)
}

// statusError turns an error status into an error: the JSON-RPC error of the body when there is
// one, ErrSessionExpired for 404 on a session, an *HTTPError otherwise; a refusal to authorize
// wraps either in an *AuthError.
func (l *httpLink) statusError(resp *http.Response, m *outMsg) error {
	return l.statusErrorOf(resp, m != nil && m.modern, resp.Request.Header.Get("Mcp-Session-Id"), false)
}

// statusErrorOf is statusError for a request sent with session sid (modern: a 2026-07-28 one,
// which has none); ran marks a request the server had already accepted.
func (l *httpLink) statusErrorOf(resp *http.Response, modern bool, sid string, ran bool) error {
	body, _ := readBounded(resp.Body, 64<<10)
	var e struct {
		Error *jsonrpc.Error `json:"error"`
	}
	var err error
	if jsonv2.Unmarshal(body, &e) == nil && e.Error != nil {
		err = e.Error
	} else {
		err = &HTTPError{StatusCode: resp.StatusCode, Body: snippet(body)}
	}
	if authRefusal(resp) {
		err = NewAuthError(resp.StatusCode, resp.Header, err)
	}
	if resp.StatusCode == http.StatusNotFound && sid != "" && !modern {
		return &expiredError{session: sid, ran: ran, err: err}
	}
	return err
}

func snippet(b []byte) string {
	if len(b) > 4096 {
		b = b[:4096]
	}
	return strings.TrimSpace(string(b))
}

// readBounded reads a body of at most max bytes.
func readBounded(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("message larger than %d bytes", max)
	}
	return b, nil
}

// close stops the standalone stream and deletes the legacy session.
func (l *httpLink) close(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	l.cancel()
	if l.gate != nil {
		close(l.gate)
		l.gate = nil
	}
	l.mu.Unlock()
	l.wg.Wait()
	l.mu.Lock()
	sid, ver := l.session, l.version
	l.mu.Unlock()
	return l.deleteSession(ctx, sid, ver)
}

func (l *httpLink) endSession(ctx context.Context) error {
	l.mu.Lock()
	sid, ver := l.session, l.version
	l.mu.Unlock()
	return l.deleteSession(ctx, sid, ver)
}

// deleteSession sends the DELETE that ends session sid (none without one).
func (l *httpLink) deleteSession(ctx context.Context, sid, ver string) error {
	if sid == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, l.t.URL, nil)
	if err != nil {
		return err
	}
	for k, v := range l.t.Header {
		req.Header[k] = append([]string(nil), v...)
	}
	req.Header.Set("Mcp-Session-Id", sid)
	if ver != "" {
		req.Header.Set("MCP-Protocol-Version", ver)
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return fmt.Errorf("mcpkit/client: deleting the session: %w", err)
	}
	resp.Body.Close()
	return nil
}
