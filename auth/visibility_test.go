package auth_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// hideVerifier knows a token without scopes and one with every scope of hideScopes.
var hideVerifier = auth.VerifierFunc(func(_ context.Context, token string) (*auth.TokenInfo, error) {
	switch token {
	case "bare":
		return &auth.TokenInfo{Subject: "carol"}, nil
	case "all":
		return &auth.TokenInfo{Subject: "dave", Scopes: []string{"tools:write", "prompts:x", "resources:x", "templates:x"}}, nil
	}
	return nil, auth.ErrInvalidToken
})

// hideScopes names a scope for one entry of each kind of scopeServer; hide sets Hide.
func hideScopes(hide bool) func(*core.Server, string) auth.ScopeOptions {
	return func(s *core.Server, meta string) auth.ScopeOptions {
		return auth.ScopeOptions{
			ResourceMetadataURL: meta,
			Server:              s,
			Tools:               map[string][]string{"test_simple_text": {"tools:write"}},
			Prompts:             map[string][]string{"test_simple_prompt": {"prompts:x"}},
			Resources:           map[string][]string{"test://static-text": {"resources:x"}},
			Templates:           map[string][]string{"test://template/{id}/data": {"templates:x"}},
			Hide:                hide,
		}
	}
}

// names returns the key of every item of a list result's member.
func names(t *testing.T, w testutil.Wire, member, key string) []string {
	t.Helper()
	if w.Error != nil {
		t.Fatalf("list failed: %+v", w.Error)
	}
	var res map[string]json.RawMessage
	var items []map[string]any
	if err := json.Unmarshal(w.Result, &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res[member], &items); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it[key].(string))
	}
	return out
}

// With Hide, what a token may not use is left out of its lists, on both lifecycles, while a
// direct call of it still gets the step-up challenge naming the missing scope; without Hide
// (the zero value) every token sees everything.
func TestScopesHide(t *testing.T) {
	lists := []struct {
		method, member, key string
		all, bare           []string
	}{
		{"tools/list", "tools", "name", []string{"test_simple_text", "transfer"}, []string{"transfer"}},
		{"prompts/list", "prompts", "name", []string{"test_simple_prompt"}, []string{}},
		{"resources/list", "resources", "uri", []string{"test://static-text"}, []string{}},
		{"resources/templates/list", "resourceTemplates", "uriTemplate", []string{"test://template/{id}/data"}, []string{}},
	}
	for _, hide := range []bool{true, false} {
		u, _ := newScopeStack(t, hideVerifier, true, hideScopes(hide))
		for _, legacy := range []bool{false, true} {
			list := func(token, method string) testutil.Wire {
				c := testutil.NewClient(u, nil)
				c.Header.Set("Authorization", "Bearer "+token)
				if !legacy {
					return c.CallModern(t, 1, method, nil)
				}
				c.Initialize(t)
				c.Post(t, testutil.Notification("notifications/initialized", nil))
				return c.Call(t, 1, method, nil)
			}
			for _, l := range lists {
				want := l.bare
				if !hide {
					want = l.all
				}
				if got := names(t, list("bare", l.method), l.member, l.key); !slices.Equal(got, want) {
					t.Errorf("hide %v, legacy %v: %s with the bare token: %v, want %v", hide, legacy, l.method, got, want)
				}
				if got := names(t, list("all", l.method), l.member, l.key); !slices.Equal(got, l.all) {
					t.Errorf("hide %v, legacy %v: %s with every scope: %v, want %v", hide, legacy, l.method, got, l.all)
				}
			}
		}
		// Hidden from the list, the tool still answers a direct call with the challenge.
		c := testutil.NewClient(u, nil)
		c.Header.Set("Authorization", "Bearer bare")
		r := c.PostModern(t, testutil.ModernRequest("up", "tools/call", map[string]any{"name": "test_simple_text"}))
		wantScopeChallenge(t, r, u, []string{"tools:write"}, `"up"`)
	}
}
