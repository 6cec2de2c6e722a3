package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
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
