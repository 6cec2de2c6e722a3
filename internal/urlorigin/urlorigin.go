// Package urlorigin computes the origin of a URL (RFC 6454: scheme, host and port), the unit the
// kit's HTTP clients compare before following a redirect.
package urlorigin

import (
	"net"
	"net/url"
	"strings"
)

// Of returns the origin of u as "scheme://host:port": the scheme and host lower-cased and the
// port made explicit (80 for http, 443 for https), so that two spellings of one origin compare
// equal. A URL of another scheme without a port keeps an empty port.
func Of(u *url.URL) string {
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
