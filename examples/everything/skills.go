package main

import (
	"embed"
	"io/fs"

	"github.com/mcpkit/mcpkit/ext/skills"
)

// The fixture serves one skill (SEP-2640), with a nested reference file, so the sep-2640-*
// conformance scenarios have a SKILL.md, a sub-directory and a supporting file to check.

//go:embed skills
var skillFiles embed.FS

func addSkills(sk *skills.Extension) {
	dir, err := fs.Sub(skillFiles, "skills/greeting-style")
	if err != nil {
		panic(err)
	}
	if err := sk.Add("greeting-style", dir); err != nil {
		panic(err)
	}
}
