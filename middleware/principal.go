package middleware

import (
	"net/http"

	"github.com/mcpkit/mcpkit/core"
)

// PrincipalOptions configure the principal layer.
type PrincipalOptions struct {
	// Resolve names who is calling (for example the subject an existing authentication layer
	// put in the request's context); "" means nobody. It is called once per request. It is
	// required (Principal panics without it).
	Resolve func(r *http.Request) string
}

// Principal is the layer that resolves the request's principal once and stores it with
// core.WithPrincipal for everything below it: the session validator (a session answers only the
// principal that opened it), the endpoint (which records that principal at initialize),
// subscriptions/listen (listen ids are scoped per principal), requestState (sealed for the
// principal) and tasks (owned by their creator's principal). A request for which Resolve returns
// "" keeps whatever principal a layer in front already set, so an auth layer in front is never
// overridden by an anonymous answer.
//
// Teams whose authentication layer calls core.WithPrincipal itself do not need this layer.
func Principal(opts PrincipalOptions) func(http.Handler) http.Handler {
	if opts.Resolve == nil {
		panic("middleware: PrincipalOptions.Resolve is required")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := opts.Resolve(r); p != "" {
				r = r.WithContext(core.WithPrincipal(r.Context(), p))
			}
			next.ServeHTTP(w, r)
		})
	}
}
