package client

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/skills"
)

// SkillEntry is a skill as skills/list and skills/get describe it (the skills extension).
type SkillEntry struct {
	// URI is the URI of the skill's SKILL.md, what GetSkill takes.
	URI string `json:"uri"`
	// Frontmatter is the YAML frontmatter of the SKILL.md as a JSON object (name, description
	// and whatever else it holds).
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources are the skill's files.
	Resources []SkillFile `json:"resources"`
}

// SkillFile is one file of a skill: its resource URI (read it with ReadResource), its digest
// ("sha256:<hex>") and its size in bytes.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// ListSkills iterates over the server's skills (skills/list), following cursors.
func (c *Client) ListSkills(ctx context.Context, opts ...CallOption) iter.Seq2[*SkillEntry, error] {
	return list[SkillEntry](c, ctx, skills.MethodList, "skills", collect(opts), nil)
}

// GetSkill returns one skill by the URI of its SKILL.md (skills/get); an unknown one is a
// -32602 *core.Error.
func (c *Client) GetSkill(ctx context.Context, uri string, opts ...CallOption) (*SkillEntry, error) {
	var res struct {
		Skill SkillEntry `json:"skill"`
	}
	if err := c.call(ctx, skills.MethodGet, map[string]any{"uri": uri}, &res, collect(opts)); err != nil {
		return nil, err
	}
	return &res.Skill, nil
}

// ReadDirectory iterates over the children of a directory resource
// (resources/directory/read), following cursors: files, and sub-directories with the MIME type
// skills.DirectoryMimeType.
func (c *Client) ReadDirectory(ctx context.Context, uri string, opts ...CallOption) iter.Seq2[*core.Resource, error] {
	return listWith[core.Resource](c, ctx, skills.MethodDirectoryRead, map[string]any{"uri": uri}, "resources", collect(opts), nil)
}
