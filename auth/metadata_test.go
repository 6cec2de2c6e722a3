package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
)

func TestMetadataURL(t *testing.T) {
	cases := map[string]string{
		"https://mcp.example.com/mcp":        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com":            "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com/":           "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com:8443/a/mcp": "https://mcp.example.com:8443/.well-known/oauth-protected-resource/a/mcp",
		"http://127.0.0.1:8080/mcp?t=1":      "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp?t=1",
		"http://[::1]:8080/mcp":              "http://[::1]:8080/.well-known/oauth-protected-resource/mcp",
	}
	for in, want := range cases {
		if got := auth.MetadataURL(in); got != want {
			t.Errorf("MetadataURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMetadataHandlerServesBothPaths(t *testing.T) {
	m := auth.NewMetadataHandler(auth.Metadata{
		Resource:             "http://127.0.0.1:9/mcp",
		AuthorizationServers: []string{"https://as.example.com"},
		ScopesSupported:      []string{"notes:read", "notes:write"},
		ResourceName:         "Notes",
	})
	if m.URL() != "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("URL %q", m.URL())
	}
	mux := http.NewServeMux()
	m.Mount(mux)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL+p, nil)
		r := send(t, req)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %q", p, r.status, r.header.Get("Content-Type"))
		}
		if r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: no CORS header", p)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
			t.Fatal(err)
		}
		if doc["resource"] != "http://127.0.0.1:9/mcp" || len(doc["authorization_servers"].([]any)) != 1 ||
			doc["bearer_methods_supported"].([]any)[0] != "header" || len(doc["scopes_supported"].([]any)) != 2 ||
			doc["resource_name"] != "Notes" {
			t.Errorf("GET %s: document %s", p, r.body)
		}
	}
	// Preflight.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodOptions, ts.URL+"/.well-known/oauth-protected-resource/mcp", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "mcp-protocol-version")
	r := send(t, req)
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "GET") ||
		r.header.Get("Access-Control-Allow-Headers") != "mcp-protocol-version" {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	// Other methods and paths.
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodHead} {
		req, _ := http.NewRequestWithContext(context.Background(), m, ts.URL+"/.well-known/oauth-protected-resource", nil)
		if r := send(t, req); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, OPTIONS" {
			t.Errorf("%s: %d Allow %q, want 405", m, r.status, r.header.Get("Allow"))
		}
	}
	req, _ = http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL+"/.well-known/oauth-protected-resource/other", nil)
	if r := send(t, req); r.status != http.StatusNotFound {
		t.Errorf("another resource's path: %d, want 404", r.status)
	}
}

func TestMetadataValidation(t *testing.T) {
	as := []string{"https://as.example.com"}
	bad := map[string]auth.Metadata{
		"no resource":            {AuthorizationServers: as},
		"relative resource":      {Resource: "/mcp", AuthorizationServers: as},
		"resource fragment":      {Resource: "https://mcp.example.com/mcp#x", AuthorizationServers: as},
		"resource userinfo":      {Resource: "https://me@mcp.example.com/mcp", AuthorizationServers: as},
		"remote http resource":   {Resource: "http://mcp.example.com/mcp", AuthorizationServers: as},
		"no server":              {Resource: "https://mcp.example.com/mcp"},
		"relative server":        {Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"as.example.com"}},
		"offline_access":         {Resource: "https://mcp.example.com/mcp", AuthorizationServers: as, ScopesSupported: []string{"read", "offline_access"}},
		"bad scope":              {Resource: "https://mcp.example.com/mcp", AuthorizationServers: as, ScopesSupported: []string{"a\"b"}},
		"query bearer method":    {Resource: "https://mcp.example.com/mcp", AuthorizationServers: as, BearerMethodsSupported: []string{"query"}},
		"relative documentation": {Resource: "https://mcp.example.com/mcp", AuthorizationServers: as, ResourceDocumentation: "/docs"},
	}
	for name, m := range bad {
		t.Run(name, func(t *testing.T) { wantPanic(t, "Metadata.", func() { auth.NewMetadataHandler(m) }) })
	}
}
