package mcphttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
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
