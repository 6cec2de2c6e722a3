package urlorigin

import (
	"net/url"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://as.example.com/x", "https://AS.Example.com:443/y", true},
		{"http://as.example.com/x", "http://as.example.com:80", true},
		{"http://[::1]:8080/a", "http://[::1]:8080/b?q", true},
		{"https://as.example.com/x", "https://as.example.com:8443/x", false},
		{"https://as.example.com/x", "http://as.example.com/x", false},
		{"http://as.example.com:443/x", "https://as.example.com/x", false},
		{"https://as.example.com/x", "https://as.example.com.attacker.test/x", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := Of(a) == Of(b); got != tc.same {
			t.Errorf("Of(%s) == Of(%s) is %v (%s, %s), want %v", tc.a, tc.b, got, Of(a), Of(b), tc.same)
		}
	}
	u, _ := url.Parse("HTTPS://Example.COM/p")
	if got := Of(u); got != "https://example.com:443" {
		t.Errorf("Of = %q, want https://example.com:443", got)
	}
}
