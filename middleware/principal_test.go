package middleware

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/core"
)

// The principal layer resolves the caller once per request and stores it for the layers below;
// an empty answer keeps the principal an auth layer in front already set.
func TestPrincipalLayer(t *testing.T) {
	calls := 0
	var got string
	var present bool
	h := Principal(PrincipalOptions{Resolve: func(r *http.Request) string {
		calls++
		return r.Header.Get("X-User")
	}})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, present = core.PrincipalFrom(r.Context())
	}))
	for _, tc := range []struct {
		header, upstream, want string
	}{
		{"alice", "", "alice"},
		{"", "", ""},
		{"", "bob", "bob"},
		{"alice", "bob", "alice"},
	} {
		calls = 0
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("X-User", tc.header)
		r = r.WithContext(core.WithPrincipal(r.Context(), tc.upstream))
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != tc.want || present != (tc.want != "") || calls != 1 {
			t.Errorf("header %q upstream %q: principal %q (present %v, %d calls), want %q once", tc.header, tc.upstream, got, present, calls, tc.want)
		}
	}
}
