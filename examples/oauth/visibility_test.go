package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// toolNames lists the tools a client sees, on the 2026-07-28 lifecycle.
func toolNames(t *testing.T, c *testutil.Client) []string {
	t.Helper()
	w := c.CallModern(t, 1, "tools/list", nil)
	if w.Error != nil {
		t.Fatalf("tools/list: %+v", w.Error)
	}
	testutil.ValidateDef(t, testutil.ModernVersion, "ListToolsResult", w.Result)
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(w.Result, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// A notes:read token does not see add_note, a notes:read notes:write token does, and calling
// add_note with the read token still gets the challenge naming notes:write; -show-all lists it
// to both.
func TestExampleHidesWhatScopesDoNotAllow(t *testing.T) {
	for _, tc := range []struct {
		cfg        config
		readerSees []string
	}{
		{config{}, []string{"whoami"}},
		{config{showAll: true}, []string{"whoami", "add_note"}},
	} {
		base := start(t, tc.cfg)
		mcpURL := base + "/mcp"
		reader := client(base, token(t, base, "alice", mcpURL, "notes:read"))
		writer := client(base, token(t, base, "alice", mcpURL, "notes:read notes:write"))
		if got := toolNames(t, reader); !slices.Equal(got, tc.readerSees) {
			t.Errorf("show-all %v: the read token sees %v, want %v", tc.cfg.showAll, got, tc.readerSees)
		}
		if got, want := toolNames(t, writer), []string{"whoami", "add_note"}; !slices.Equal(got, want) {
			t.Errorf("show-all %v: the read-write token sees %v, want %v", tc.cfg.showAll, got, want)
		}
		add := map[string]any{"name": "add_note", "arguments": map[string]any{"text": "buy milk"}}
		r := reader.PostModern(t, testutil.ModernRequest(2, "tools/call", add))
		if r.Status != http.StatusForbidden || !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="insufficient_scope", scope="notes:write"`) {
			t.Errorf("show-all %v: add_note with the read token: %d %q", tc.cfg.showAll, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
}
