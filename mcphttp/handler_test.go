package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// A Handler not made by New cannot be used by accident: every method panics saying how to build
// one, instead of a nil dereference deep in the stack.
func TestZeroHandlerPanicsNamingNew(t *testing.T) {
	var nilHandler *mcphttp.Handler
	for name, h := range map[string]*mcphttp.Handler{"zero": {}, "nil": nilHandler} {
		t.Run(name, func(t *testing.T) {
			calls := map[string]func(){
				"ServeHTTP": func() {
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}")))
				},
				"Close":     func() { _ = h.Close() },
				"Shutdown":  func() { _ = h.Shutdown(context.Background()) },
				"Endpoint":  func() { _ = h.Endpoint() },
				"Store":     func() { _ = h.Store() },
				"Listeners": func() { _ = h.Listeners() },
			}
			for method, call := range calls {
				t.Run(method, func(t *testing.T) { testutil.WantPanic(t, "mcphttp.New", call) })
			}
		})
	}
}

func TestNewWithoutServerPanics(t *testing.T) {
	testutil.WantPanic(t, "*core.Server", func() { mcphttp.New(nil, mcphttp.Options{}) })
}

// The handle New returns serves, and Close ends it: later requests get 503.
func TestHandlerServesUntilClosed(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "h", Version: "1"}, core.Options{})
	h := mcphttp.New(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := testutil.NewClient(srv.URL, srv.Client())
	post := func() int {
		t.Helper()
		return c.Post(t, testutil.Initialize(1, "2025-11-25")).Status
	}
	if got := post(); got != http.StatusOK {
		t.Fatalf("initialize: status %d, want 200", got)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := post(); got != http.StatusServiceUnavailable {
		t.Fatalf("after Close: status %d, want 503", got)
	}
}

// New refuses, at construction, option values it cannot work with; the panic names the option.
func TestNewRefusesInvalidOptions(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "h", Version: "1"}, core.Options{})
	for want, opts := range map[string]mcphttp.Options{
		"Options.MaxRequestBytes":         {MaxRequestBytes: -1},
		"Options.MaxRequestNotifications": {MaxRequestNotifications: -1},
		"Options.Listen.MaxStreams":       {Listen: mcphttp.ListenersOptions{MaxStreams: -1}},
		"Options.Resumability":            {Stateless: true, Resumability: mcphttp.ResumabilityOptions{Enabled: true}},
		"AllowedHosts[0]":                 {Origin: middleware.OriginGuardOptions{AllowedHosts: []string{"https://mcp.example.com"}}},
		"AllowedOrigins[1]":               {Origin: middleware.OriginGuardOptions{AllowedOrigins: []string{"https://app.example", "app.example"}}},
		"MemoryOptions.ReapInterval":      {Sessions: session.MemoryOptions{ReapInterval: -time.Second}},
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, want, func() { mcphttp.New(s, opts) }) })
	}
	for want, build := range map[string]func(){
		"ListenersOptions.MaxStreams":    func() { mcphttp.NewListeners(s, mcphttp.ListenersOptions{MaxStreams: -1}) },
		"ModernOptions.MaxNotifications": func() { mcphttp.NewModern(s, mcphttp.ModernOptions{MaxNotifications: -1}) },
		"EndpointOptions.Resumability": func() {
			mcphttp.NewEndpoint(s, mcphttp.EndpointOptions{Stateless: true, Resumability: mcphttp.ResumabilityOptions{Enabled: true}})
		},
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, want, build) })
	}
}

// Mounted behind Decode but without an SSE layer, the handlers refuse what they would answer with
// a stream with 500, naming the missing layer, before they write or run anything: the 2026-07-28
// handler every request, the legacy endpoint a request of a session (unless it answers with
// JSON) and a GET. What never streams is served: initialize, a stateless endpoint's requests.
func TestHandlersWithoutSSERefuse(t *testing.T) {
	s := newServer(newTools())
	store := session.NewMemory(session.MemoryOptions{})
	stateful := mcphttp.NewEndpoint(s, mcphttp.EndpointOptions{Store: store})
	t.Cleanup(func() { _ = stateful.Close() })
	stateless := mcphttp.NewEndpoint(s, mcphttp.EndpointOptions{Stateless: true})
	t.Cleanup(func() { _ = stateless.Close() })
	decoded := func(h http.Handler) *testutil.Client {
		srv := httptest.NewServer(middleware.Decode(middleware.DecodeOptions{})(h))
		t.Cleanup(srv.Close)
		return testutil.NewClient(srv.URL, srv.Client())
	}
	const noSSE = "Internal error: the request reached the handler without an SSE layer in front of it"
	c := decoded(mcphttp.NewModern(s, mcphttp.ModernOptions{}))
	c.Do(t, c.NewModernPost(context.Background(), call(2, "echo", map[string]any{"text": "x"}))).WantError(t, http.StatusInternalServerError, -32603, noSSE, "2")

	c = decoded(middleware.SessionValidator(middleware.SessionValidatorOptions{Sessions: stateful})(stateful))
	c.Initialize(t)
	c.Do(t, c.NewPost(context.Background(), ping)).WantError(t, http.StatusInternalServerError, -32603, noSSE, `"p-1"`)
	c.Do(t, c.NewRequest(context.Background(), http.MethodGet)).WantError(t, http.StatusInternalServerError, -32603, noSSE, "null")

	c = decoded(stateless)
	if rep := c.Do(t, c.NewPost(context.Background(), ping)); rep.Status != http.StatusOK {
		t.Fatalf("the stateless endpoint without an SSE layer: %d %s", rep.Status, rep.Body)
	}
}
