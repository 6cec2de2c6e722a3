package client

import (
	"context"
	"iter"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/skills"
)

// ListSkills iterates over the server's skills (skills/list), following cursors; read a
// skill's files with ReadResource.
func (c *Client) ListSkills(ctx context.Context, opts ...CallOption) iter.Seq2[*skills.Entry, error] {
	return list[skills.Entry](c, ctx, skills.MethodList, "skills", collect(opts), nil)
}

// GetSkill returns one skill by the URI of its SKILL.md (skills/get); an unknown one is a
// -32602 *jsonrpc.Error.
func (c *Client) GetSkill(ctx context.Context, uri string, opts ...CallOption) (*skills.Entry, error) {
	var res struct {
		Skill skills.Entry `json:"skill"`
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
