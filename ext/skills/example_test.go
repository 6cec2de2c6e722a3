package skills_test

import (
	"fmt"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/skills"
)

// A skill from a file system (an embed.FS in a real server): every file becomes a resource
// under skill://, and skills/list describes it.
func ExampleExtension_Add() {
	sk := skills.New(skills.Options{})
	core.NewServer(core.Implementation{Name: "docs", Version: "1"}, core.Options{Extensions: []core.Extension{sk}})
	fsys := fstest.MapFS{
		"SKILL.md":           {Data: []byte("---\nname: release-notes\ndescription: Write release notes\n---\n# Steps\n")},
		"templates/minor.md": {Data: []byte("## What's new\n")},
	}
	if err := sk.Add("acme/release-notes", fsys); err != nil {
		fmt.Println(err)
		return
	}
	for _, skill := range sk.Skills() {
		fmt.Println(skill.URI, skill.Name, len(skill.Files))
	}
	// Output: skill://acme/release-notes/SKILL.md release-notes 2
}
