package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// sameOriginOnly returns a copy of hc that refuses to follow a redirect to an origin other than
// the first request's, then applies hc's own redirect policy.
func sameOriginOnly(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from := via[0].URL; origin(req.URL) != origin(from) {
			return fmt.Errorf("mcpkit/client: refusing to follow the redirect of %s %s to another origin, %s (HTTPTransport.AllowCrossOriginRedirects)",
				via[0].Method, from.Redacted(), origin(req.URL))
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

// origin returns the origin of u (scheme://host:port, the port made explicit).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
