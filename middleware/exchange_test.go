package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

func TestExchangeAbsent(t *testing.T) {
	ctx := context.Background()
	if ExchangeFrom(ctx) != nil {
		t.Error("ExchangeFrom found a record in an empty context")
	}
	if m, ok := MessageFrom(ctx); ok || m != nil {
		t.Error("MessageFrom found a message in an empty context")
	}
	if BodyFrom(ctx) != nil {
		t.Error("BodyFrom found a body in an empty context")
	}
}

func TestEnsureExchangeOncePerRequest(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r1, ex1 := ensureExchange(r)
	if r1 == r || ex1 == nil || ex1.Start().IsZero() {
		t.Fatal("no new request and record")
	}
	r2, ex2 := ensureExchange(r1)
	if r2 != r1 || ex2 != ex1 {
		t.Error("a second layer created a second record")
	}
	if _, ok := MessageFrom(r1.Context()); ok {
		t.Error("a message before decoding")
	}
}

// TestExchangeClaim: the record of a request naming a session answers session.ClaimKey with the
// claim the session layer fills in; the smaller record of any other request answers with no
// claim (not the parent's), and makes one when the session layer asks for it all the same.
func TestExchangeClaim(t *testing.T) {
	outer := &session.Claim{Stream: true}
	base := session.WithClaim(context.Background(), outer)

	r := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(base)
	r.Header.Set(HeaderSessionID, "s1")
	r, ex := ensureExchange(r)
	c := ex.sessionClaim()
	if c == nil || session.ClaimFrom(r.Context()) != c || ex.sessionClaim() != c {
		t.Fatal("the record of a request naming a session does not answer with its own claim")
	}

	r = httptest.NewRequest(http.MethodPost, "/", nil).WithContext(base)
	r, ex = ensureExchange(r)
	if got := session.ClaimFrom(r.Context()); got != nil {
		t.Fatalf("a request naming no session claims %+v", got)
	}
	c = ex.sessionClaim()
	if c == nil || c == outer || session.ClaimFrom(r.Context()) != c {
		t.Fatal("the claim made on demand is not the one the record answers with")
	}
}

func TestOnMessageHooksInOrder(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r, ex := ensureExchange(r)
	var order []int
	for i := range 3 {
		ex.OnMessage(func(ctx context.Context, _ *jsonrpc.Message) context.Context {
			order = append(order, i)
			return ctx
		})
	}
	WithMessage(r, &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "ping"}, nil)
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Errorf("hooks ran in the order %v, want [0 1 2]", order)
	}
}

func TestExchangeContextDelegates(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(parent)
	r, _ = ensureExchange(r)
	ctx := r.Context()
	if ctx.Value(key{}) != "v" {
		t.Error("parent values lost")
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	cancel()
	<-child.Done() // cancellation flows through the record's context
	if ctx.Err() != context.Canceled {
		t.Errorf("Err = %v", ctx.Err())
	}
}

func TestWithMessageRunsHooksOnce(t *testing.T) {
	type key struct{}
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r, ex := ensureExchange(r)
	runs := 0
	ex.OnMessage(func(ctx context.Context, m *jsonrpc.Message) context.Context {
		runs++
		return context.WithValue(ctx, key{}, m.Method)
	})
	m := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "ping"}
	r2 := WithMessage(r, m, []byte(`{}`))
	if r2.Context().Value(key{}) != "ping" {
		t.Error("the hook's context was not returned")
	}
	if got, ok := MessageFrom(r2.Context()); !ok || got != m || string(BodyFrom(r2.Context())) != `{}` {
		t.Error("message or body not recorded")
	}
	WithMessage(r2, &jsonrpc.Message{Method: "other"}, nil)
	if runs != 1 {
		t.Errorf("hooks ran %d times", runs)
	}
}

func TestExchangeConcurrentSetters(t *testing.T) {
	_, ex := ensureExchange(httptest.NewRequest(http.MethodGet, "/", nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ex.SetSessionID("s")
			ex.SetError(int64(-32600-i), "m")
			_ = ex.SessionID()
			_, _, _ = ex.JSONRPCError()
		})
	}
	wg.Wait()
	if ex.SessionID() != "s" {
		t.Error("session id lost")
	}
	if _, _, ok := ex.JSONRPCError(); !ok {
		t.Error("error lost")
	}
}
