package auth

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// wellKnownPRM is the well-known path of RFC 9728 protected resource metadata.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// checkURL parses raw as an absolute http(s) URL with a host, no user information and no
// fragment. https is required unless the host is a loopback address or localhost (local
// development and tests). The error names the option.
func checkURL(option, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("auth: %s is required", option)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("auth: %s %q is not a URL: %w", option, raw, err)
	}
	switch {
	case !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return nil, fmt.Errorf("auth: %s %q must be an absolute URL with a host", option, raw)
	case u.User != nil:
		return nil, fmt.Errorf("auth: %s %q must not contain user information", option, raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("auth: %s %q must not contain a fragment", option, raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	default:
		return nil, fmt.Errorf("auth: %s %q must use https (http is accepted for loopback hosts only)", option, raw)
	}
	return u, nil
}

// isLoopbackHost reports whether host (without port or brackets) is localhost or a loopback
// address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// MetadataURL returns the RFC 9728 metadata URL of a resource: the well-known path inserted
// between the host and the resource's path, so https://mcp.example.com/mcp gives
// https://mcp.example.com/.well-known/oauth-protected-resource/mcp. A resource without a path
// gives the root well-known URL. The query of the resource is kept; it panics when resource is
// not an acceptable resource identifier (see Metadata.Resource).
func MetadataURL(resource string) string {
	u, err := checkURL("resource", resource)
	if err != nil {
		panic(err.Error())
	}
	return metadataURL(u)
}

func metadataURL(u *url.URL) string {
	p := u.EscapedPath()
	if p == "/" {
		p = ""
	}
	s := u.Scheme + "://" + u.Host + wellKnownPRM + p
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

// canonicalResource normalizes a resource identifier for comparison: scheme and host in lower
// case, the default port dropped. Everything else is compared exactly.
func canonicalResource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := u.Hostname(), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	host = strings.ToLower(host)
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	} else {
		u.Host = host
	}
	return u.String()
}
