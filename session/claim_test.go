package session_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

// releases counts what a store would let go of.
type releases struct{ got []string }

func (r *releases) ReleaseClaim(_ context.Context, id, field, token string) {
	r.got = append(r.got, id+"/"+field+"/"+token)
}

// TestClaim: a claim no store took releases nothing; one a store took is released once, by
// Release or (after Keep) by the function Keep returned, never by both.
func TestClaim(t *testing.T) {
	ctx := context.Background()
	var none *session.Claim
	if none.Wants() || none.Held() || session.ClaimFrom(ctx) != nil {
		t.Fatal("a nil claim wants or holds something")
	}
	none.Keep()(ctx) // nothing to release, no panic

	c := &session.Claim{Request: jsonrpc.IntID(1)}
	if !c.Wants() || c.Held() {
		t.Fatalf("wants %v held %v", c.Wants(), c.Held())
	}
	if session.ClaimFrom(session.WithClaim(ctx, c)) != c {
		t.Fatal("ClaimFrom(WithClaim(c)) is not c")
	}
	r := &releases{}
	c.Hold(r, "s", "f", "t")
	c.Release(ctx)
	c.Release(ctx)
	if len(r.got) != 1 || r.got[0] != "s/f/t" || c.Held() {
		t.Fatalf("released %v, held %v", r.got, c.Held())
	}

	k := &session.Claim{Stream: true}
	k.Hold(r, "s", "g", "u")
	release := k.Keep()
	k.Release(ctx) // handed on: nothing
	if len(r.got) != 1 {
		t.Fatalf("Release after Keep released: %v", r.got)
	}
	release(ctx)
	release(ctx)
	if len(r.got) != 2 || r.got[1] != "s/g/u" {
		t.Fatalf("the kept release: %v", r.got)
	}
	k.Reset()
	if k.Wants() || k.Held() {
		t.Fatal("Reset left something")
	}
}
