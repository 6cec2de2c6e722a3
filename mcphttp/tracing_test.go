package mcphttp_test

import (
	"net/http"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// The tracer provider given to otelmcp.New is enough for every span of the endpoint: the MCP
// spans and the spans of exchanges without a message (GET, DELETE), with mcphttp.Options'
// TracerProvider left nil and no global provider set.
func TestOneTracerProviderForEverySpan(t *testing.T) {
	for _, where := range []string{"mcphttp.Options.Observer", "core.Options.Observer"} {
		t.Run(where, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
			t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
			obs := otelmcp.New(otelmcp.Options{TracerProvider: tp})
			var f *fixture
			if where == "core.Options.Observer" {
				f = newFixtureWith(t, mcphttp.Options{}, &core.Options{Observer: obs}, nil)
			} else {
				f = newFixture(t, mcphttp.Options{Observer: obs})
			}
			c := f.initialized(t)
			wantResult(t, c.Call(t, 2, "ping", nil), "2")
			// A GET without a session is refused before any stream opens: a span all the same.
			f.raw(t, http.MethodGet, "", "Accept", "text/event-stream").
				WantError(t, http.StatusBadRequest, -32600, msgMissingSession, "null")
			if rep := f.raw(t, http.MethodDelete, "", "Mcp-Session-Id", c.SessionID); rep.Status != http.StatusOK && rep.Status != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", rep.Status, rep.Body)
			}
			f.srv.Close() // waits for the handlers, and so for their spans to end
			var names []string
			for _, s := range rec.Ended() {
				names = append(names, s.Name())
			}
			for _, want := range []string{"initialize", "ping", http.MethodGet, http.MethodDelete} {
				if !slices.Contains(names, want) {
					t.Errorf("no %q span; spans: %q", want, names)
				}
			}
		})
	}
}
