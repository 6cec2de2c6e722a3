package skills_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/coretest"
)

// The server's view per caller covers the skills: a skill whose SKILL.md the caller may not see
// is missing from skills/list and resources/list and answered as unknown by skills/get,
// resources/read and resources/directory/read; a hidden file of a visible skill is left out of
// its entry and its directory.
func TestSkillsKeepToTheCallersView(t *testing.T) {
	hidden := func(ctx context.Context, v *core.View) bool {
		if p, _ := core.PrincipalFrom(ctx); p == "alice" {
			return true
		}
		return !strings.HasPrefix(v.Name(), "skill://acme/secret/") && !strings.HasSuffix(v.Name(), "/POLICY.md")
	}
	sk, c := skillServer(t, core.Options{Visibility: hidden})
	if err := sk.Add("acme/secret", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: secret\ndescription: d\n---\n")}}); err != nil {
		t.Fatal(err)
	}
	skillsOf := func(who string) []string {
		r := coretest.OK(t, c.srv, who, nil, "skills/list", nil)
		var uris []string
		for _, s := range r["skills"].([]any) {
			uris = append(uris, s.(map[string]any)["uri"].(string))
		}
		return uris
	}
	if got := skillsOf("alice"); len(got) != 2 {
		t.Errorf("alice's skills: %v", got)
	}
	if got := skillsOf("bob"); len(got) != 1 || got[0] != "skill://acme/billing/refunds/SKILL.md" {
		t.Errorf("bob's skills: %v", got)
	}
	for _, x := range coretest.OK(t, c.srv, "bob", nil, "resources/list", nil)["resources"].([]any) {
		if u := x.(map[string]any)["uri"].(string); strings.Contains(u, "secret") || strings.HasSuffix(u, "POLICY.md") {
			t.Errorf("bob lists %s", u)
		}
	}
	// bob's list was filtered from the extension's list: alice's, after it, still has every file
	// (the two skills' six).
	if got := coretest.OK(t, c.srv, "alice", nil, "resources/list", nil)["resources"].([]any); len(got) != 6 {
		t.Errorf("alice lists %d resources after bob's filtered list, want 6: %v", len(got), got)
	}
	entry := coretest.OK(t, c.srv, "bob", nil, "skills/get", map[string]any{"uri": "skill://acme/billing/refunds/SKILL.md"})["skill"].(map[string]any)
	for _, f := range entry["resources"].([]any) {
		if strings.HasSuffix(f.(map[string]any)["uri"].(string), "POLICY.md") {
			t.Errorf("bob's entry names the hidden file: %v", entry)
		}
	}
	for _, tc := range []struct{ method, hidden, unknown, message string }{
		{"skills/get", "skill://acme/secret/SKILL.md", "skill://acme/nope/SKILL.md", "Skill not found: "},
		{"resources/read", "skill://acme/secret/SKILL.md", "skill://acme/nope/SKILL.md", "Resource not found: "},
		{"resources/directory/read", "skill://acme/secret", "skill://acme/nope", "Not a directory: "},
		{"resources/directory/read", "skill://acme/billing/refunds/references", "skill://acme/billing/refunds/nope", "Not a directory: "},
	} {
		for _, uri := range []string{tc.hidden, tc.unknown} {
			w := coretest.Send(t, c.srv, "bob", nil, tc.method, map[string]any{"uri": uri})
			coretest.WantError(t, w, jsonrpc.CodeInvalidParams, tc.message+uri, map[string]any{"uri": uri})
		}
		if w := coretest.Send(t, c.srv, "alice", nil, tc.method, map[string]any{"uri": tc.hidden}); w.Error != nil {
			t.Errorf("%s %s as alice: %s", tc.method, tc.hidden, w)
		}
	}
}
