package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSameOrigin: the metadata and token requests follow a redirect within the first request's
// origin however it is spelled (host case, the default port made explicit), and refuse one to
// another port, scheme or host, and a fourth redirect.
func TestSameOrigin(t *testing.T) {
	req := func(raw string) *http.Request {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Request{URL: u}
	}
	first := []*http.Request{req("https://as.example.com/.well-known/oauth-authorization-server")}
	for _, to := range []string{"https://as.example.com/meta", "https://AS.Example.com/meta", "https://as.example.com:443/meta"} {
		if err := sameOrigin(req(to), first); err != nil {
			t.Errorf("redirect to %s: %v, want it followed", to, err)
		}
	}
	for _, to := range []string{"https://as.example.com:8443/meta", "http://as.example.com/meta", "https://as.example.com.attacker.test/meta"} {
		if err := sameOrigin(req(to), first); err == nil || !strings.Contains(err.Error(), "another origin") {
			t.Errorf("redirect to %s: %v, want it refused as another origin", to, err)
		}
	}
	if err := sameOrigin(req("https://as.example.com/x"), append(first, first[0], first[0])); err == nil {
		t.Error("a fourth redirect was followed")
	}
}
