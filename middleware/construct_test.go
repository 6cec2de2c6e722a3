package middleware

import (
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Every layer refuses, at construction, options it cannot work with, and the panic names the
// option.
func TestLayersRefuseInvalidOptions(t *testing.T) {
	for name, build := range map[string]func(){
		"EraRouterOptions.Modern":          func() { EraRouter(EraRouterOptions{}) },
		"RequestLogOptions.Logger":         func() { RequestLog(RequestLogOptions{}) },
		"SessionValidatorOptions.Sessions": func() { SessionValidator(SessionValidatorOptions{}) },
		"PrincipalOptions.Resolve":         func() { Principal(PrincipalOptions{}) },
		"TracingOptions.Observer":          func() { Tracing(TracingOptions{}) },
	} {
		t.Run(name, func(t *testing.T) { testutil.WantPanic(t, name, build) })
	}
}

// Allow-list entries that can never match are refused when the guard is built, naming the entry.
func TestOriginGuardRefusesEntriesThatNeverMatch(t *testing.T) {
	for want, opts := range map[string]OriginGuardOptions{
		"AllowedHosts[0]":   {AllowedHosts: []string{"https://mcp.example.com"}},
		"AllowedHosts[1]":   {AllowedHosts: []string{"mcp.example.com", "mcp.example.com/mcp"}},
		"AllowedOrigins[0]": {AllowedOrigins: []string{"app.example"}},
		"AllowedOrigins[1]": {AllowedOrigins: []string{"https://app.example", "https://app.example/path"}},
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, "OriginGuardOptions."+want, func() { OriginGuard(opts) }) })
	}
	// What can match is accepted.
	OriginGuard(OriginGuardOptions{AllowedHosts: []string{"mcp.example.com", "mcp.example.com:8443", "[::1]:9"},
		AllowedOrigins: []string{"https://app.example", "http://localhost:3000/"}})
}
