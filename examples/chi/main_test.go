package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

const forbidden = "Forbidden: session request validation failed"

func TestSessionsBelongToTheirCreator(t *testing.T) {
	h, mcp := newHandler(newServer())
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = mcp.Close() })
	url := srv.URL + "/mcp"

	as := func(token string) *testutil.Client {
		c := testutil.NewClient(url, srv.Client())
		if token != "" {
			c.Header.Set("Authorization", "Bearer "+token)
		}
		return c
	}

	// Without a known token the team's auth answers before MCP sees anything.
	for _, token := range []string{"", "mallory-token"} {
		rep := as(token).Post(t, testutil.Initialize(0, "2025-11-25"))
		if rep.Status != http.StatusUnauthorized || rep.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("token %q: %d %q, want 401 with a Bearer challenge", token, rep.Status, rep.Header.Get("WWW-Authenticate"))
		}
	}

	alice := as("alice-token")
	alice.Initialize(t)
	res := alice.Call(t, 1, "tools/call", map[string]any{"name": "whoami"})
	if res.Error != nil || !strings.Contains(string(res.Result), alice.SessionID) {
		t.Fatalf("alice's whoami: %s %v", res.Result, res.Error)
	}

	// Bob presents alice's session id: refused on every kind of exchange.
	bob := as("bob-token")
	bob.SessionID, bob.ProtocolVersion = alice.SessionID, alice.ProtocolVersion
	bob.Post(t, testutil.Request(2, "tools/call", map[string]any{"name": "whoami"})).WantError(t, http.StatusForbidden, -32600, forbidden, "2")
	bob.Post(t, testutil.Notification("notifications/initialized", nil)).WantError(t, http.StatusForbidden, -32600, forbidden, "null")
	bob.Do(t, bob.NewRequest(context.Background(), http.MethodGet)).WantError(t, http.StatusForbidden, -32600, forbidden, "null")
	bob.Do(t, bob.NewRequest(context.Background(), http.MethodDelete)).WantError(t, http.StatusForbidden, -32600, forbidden, "null")
	// Unauthenticated with alice's session id: 401, the session is not even looked at.
	anon := as("")
	anon.SessionID = alice.SessionID
	if rep := anon.Post(t, testutil.Request(3, "ping", nil)); rep.Status != http.StatusUnauthorized {
		t.Fatalf("unauthenticated request on alice's session: %d %s", rep.Status, rep.Body)
	}

	// Bob gets a session of his own, which alice cannot use either.
	bob.SessionID, bob.ProtocolVersion = "", ""
	bob.Initialize(t)
	if bob.SessionID == alice.SessionID {
		t.Fatal("bob got alice's session")
	}
	alice2 := as("alice-token")
	alice2.SessionID = bob.SessionID
	alice2.Post(t, testutil.Request(4, "ping", nil)).WantError(t, http.StatusForbidden, -32600, forbidden, "4")

	// Alice still owns hers, and can end it.
	if res := alice.Call(t, 5, "ping", nil); res.Error != nil {
		t.Fatalf("alice's ping: %v", res.Error)
	}
	if rep := alice.Do(t, alice.NewRequest(context.Background(), http.MethodDelete)); rep.Status != http.StatusOK {
		t.Fatalf("alice's DELETE: %d %s", rep.Status, rep.Body)
	}
}
