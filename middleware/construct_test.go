package middleware

import (
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Every layer refuses, at construction, options it cannot work with, and the panic names the
// option.
func TestLayersRefuseInvalidOptions(t *testing.T) {
	for name, build := range map[string]func(){
		"EraRouterOptions.Modern":       func() { EraRouter(EraRouterOptions{}) },
		"RequestLogOptions.Logger":      func() { RequestLog(RequestLogOptions{}) },
		"SessionValidatorOptions.Store": func() { SessionValidator(SessionValidatorOptions{}) },
		"PrincipalOptions.Resolve":      func() { Principal(PrincipalOptions{}) },
	} {
		t.Run(name, func(t *testing.T) { testutil.WantPanic(t, name, build) })
	}
}
