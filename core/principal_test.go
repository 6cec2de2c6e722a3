package core_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core"
)

func TestPrincipal(t *testing.T) {
	ctx := context.Background()
	if p, ok := core.PrincipalFrom(ctx); ok || p != "" {
		t.Fatalf("a bare context has principal %q, %v", p, ok)
	}
	if _, ok := core.PrincipalFrom(core.WithPrincipal(ctx, "")); ok {
		t.Fatal("an empty principal is reported as present")
	}
	alice := core.WithPrincipal(ctx, "alice")
	if p, ok := core.PrincipalFrom(alice); !ok || p != "alice" {
		t.Fatalf("got %q, %v; want alice, true", p, ok)
	}
	if p, ok := core.PrincipalFrom(core.WithPrincipal(alice, "")); !ok || p != "alice" {
		t.Fatalf("an empty principal replaced alice: %q, %v", p, ok)
	}
}
