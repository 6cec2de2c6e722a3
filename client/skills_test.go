package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// TestSkillsCalls: ListSkills, GetSkill and ReadDirectory against a server with the skills
// extension, over HTTP and in memory. They did not exist before.
func TestSkillsCalls(t *testing.T) {
	sk := skills.New(skills.Options{})
	s := core.NewServer(core.Implementation{Name: "skills", Version: "1"}, core.Options{Extensions: []core.Extension{sk}})
	err := sk.Add("acme/refunds", fstest.MapFS{
		"SKILL.md":        {Data: []byte("---\nname: refunds\ndescription: Process refunds\n---\n# Refunds\n")},
		"templates/a.txt": {Data: []byte("a")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"memory", "http"} {
		t.Run(name, func(t *testing.T) {
			var tr client.Transport = &client.InMemoryTransport{Server: s}
			if name == "http" {
				h := mcphttp.New(s, mcphttp.Options{})
				srv := httptest.NewServer(h)
				defer srv.Close()
				defer func() { _ = h.Close() }()
				tr = &client.HTTPTransport{URL: srv.URL}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, tr, client.Options{Lifecycle: client.Modern})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var listed []*skills.Entry
			for e, err := range c.ListSkills(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, e)
			}
			if len(listed) != 1 || listed[0].URI != "skill://acme/refunds/SKILL.md" || len(listed[0].Resources) != 2 {
				t.Fatalf("ListSkills = %+v", listed)
			}
			got, err := c.GetSkill(ctx, listed[0].URI)
			if err != nil || got.URI != listed[0].URI || got.Resources[0].Digest == "" || len(got.Frontmatter) == 0 {
				t.Errorf("GetSkill = %+v, %v", got, err)
			}
			var e *jsonrpc.Error
			if _, err := c.GetSkill(ctx, "skill://nope/SKILL.md"); !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("GetSkill of an unknown skill = %v", err)
			}
			var kids []string
			for r, err := range c.ReadDirectory(ctx, "skill://acme/refunds/") {
				if err != nil {
					t.Fatal(err)
				}
				kids = append(kids, r.URI+" "+r.MimeType)
			}
			if len(kids) != 2 || kids[0] != "skill://acme/refunds/SKILL.md text/markdown" || kids[1] != "skill://acme/refunds/templates "+skills.DirectoryMimeType {
				t.Errorf("ReadDirectory = %v", kids)
			}
		})
	}
}
