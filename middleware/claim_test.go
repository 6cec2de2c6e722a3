package middleware

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/session"
)

// failingLookup takes the request's claim, as a shared store's lookup script does, and then
// fails, as a lookup whose later step (applying the record, holding the session) fails does.
type failingLookup struct{ released chan string }

func (l failingLookup) Lookup(ctx context.Context, id string, _ bool, _ func(*session.Entry) bool) (session.Live, error) {
	if c := session.ClaimFrom(ctx); c.Wants() {
		c.Hold(l, id, "r", "token")
	}
	return nil, errors.New("the session record changed under its lookup")
}

func (l failingLookup) Known(context.Context, string) error { return nil }

func (l failingLookup) ReleaseClaim(_ context.Context, session, field, _ string) {
	l.released <- session + "/" + field
}

// TestClaimReleasedWhenLookupFails: a claim the store took during a lookup that then failed is
// released by the session layer (the request is answered 503 and runs nothing), so the request id
// is not left claimed on every replica until the session expires.
func TestClaimReleasedWhenLookupFails(t *testing.T) {
	l := failingLookup{released: make(chan string, 1)}
	h := Decode(DecodeOptions{})(SessionValidator(SessionValidatorOptions{Sessions: l})(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the handler ran") })))
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderSessionID, "s1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", rec.Code, rec.Body)
	}
	select {
	case got := <-l.released:
		if got != "s1/r" {
			t.Fatalf("released %s", got)
		}
	default:
		t.Fatal("the claim the failed lookup took was never released")
	}
}
