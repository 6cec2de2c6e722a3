package oauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client/oauth"
)

// signalWriter hands every write to a channel.
type signalWriter chan string

func (w signalWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestLoopbackAuthorizer(t *testing.T) {
	printed := make(signalWriter, 4)
	a := &oauth.LoopbackAuthorizer{Path: "/cb", Out: printed}
	ctx := context.Background()
	redirect, err := a.RedirectURL(ctx)
	if err != nil || !strings.HasPrefix(redirect, "http://127.0.0.1:") || !strings.HasSuffix(redirect, "/cb") {
		t.Fatalf("RedirectURL: %q %v, want http://127.0.0.1:PORT/cb", redirect, err)
	}
	if again, _ := a.RedirectURL(ctx); again != redirect {
		t.Fatalf("a second RedirectURL %q differs from %q", again, redirect)
	}
	// A request that is not an authorization response is refused and not taken.
	if resp, err := http.Get(redirect + "?foo=1"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a stray request: %v %v, want 400", resp.StatusCode, err)
	}
	done := make(chan error, 1)
	go func() {
		q, err := a.Authorize(ctx, "https://as.example.com/authorize?x=1")
		if err == nil && (q.Get("code") != "c1" || q.Get("state") != "s1") {
			err = errors.New("wrong answer " + q.Encode())
		}
		done <- err
	}()
	// The URL is printed, then the browser comes back.
	if p := <-printed; !strings.Contains(p, "https://as.example.com/authorize?x=1") {
		t.Fatalf("printed %q, want the authorization URL", p)
	}
	resp, err := http.Get(redirect + "?code=c1&state=s1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := <-done; err != nil || !strings.Contains(string(body), "You can close this window") {
		t.Fatalf("Authorize: %v; page %q", err, body)
	}

	// The person never comes back: the context ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := a.Authorize(cctx, "https://as.example.com/authorize"); <-printed == "" || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RedirectURL(ctx); err == nil {
		t.Fatal("RedirectURL after Close succeeded")
	}
}
