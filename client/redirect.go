package client

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpkit/mcpkit/internal/urlorigin"
)

// sameOriginOnly returns a copy of hc that refuses to follow a redirect to an origin other than
// the first request's, then applies hc's own redirect policy.
func sameOriginOnly(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from := via[0].URL; urlorigin.Of(req.URL) != urlorigin.Of(from) {
			return fmt.Errorf("mcpkit/client: refusing to follow the redirect of %s %s to another origin, %s (HTTPTransport.AllowCrossOriginRedirects)",
				via[0].Method, from.Redacted(), urlorigin.Of(req.URL))
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
