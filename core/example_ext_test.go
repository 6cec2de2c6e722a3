package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing/fstest"
	"time"

	"github.com/mcpkit/mcpkit/core"
)

// A tool that may run as a task: for a 2026-07-28 client that declares the tasks extension,
// tools/call answers with a task handle and the handler runs in the background; its Elicit
// becomes an input request of the task, answered through tasks/update.
func ExampleToolExecution() {
	s := core.NewServer(core.Implementation{Name: "jobs", Version: "1"}, core.Options{
		Tasks: core.TaskOptions{TTL: 30 * time.Minute},
	})
	type In struct {
		Path string `json:"path"`
	}
	core.AddTool(s, &core.Tool{Name: "reindex", Execution: &core.ToolExecution{TaskSupport: core.TaskSupportOptional}},
		func(ctx context.Context, req *core.ToolRequest, in In) (*core.CallToolResult, any, error) {
			ok, err := req.Elicit(ctx, &core.ElicitParams{Message: "Reindex " + in.Path + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"yes":{"type":"boolean"}}}`)})
			if err != nil {
				return nil, nil, err
			}
			if ok.Action != "accept" {
				return core.TextResult("left alone"), nil, nil
			}
			select {
			case <-time.After(time.Minute):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return core.TextResult("reindexed " + in.Path), nil, nil
		})
	fmt.Println(s.Capabilities().Extensions)
	// Output: map[io.modelcontextprotocol/tasks:map[]]
}

// A skill from a file system (an embed.FS in a real server): every file becomes a resource
// under skill://, and skills/list describes it.
func ExampleServer_AddSkill() {
	s := core.NewServer(core.Implementation{Name: "docs", Version: "1"}, core.Options{})
	fsys := fstest.MapFS{
		"SKILL.md":           {Data: []byte("---\nname: release-notes\ndescription: Write release notes\n---\n# Steps\n")},
		"templates/minor.md": {Data: []byte("## What's new\n")},
	}
	if err := s.AddSkill("acme/release-notes", fsys); err != nil {
		fmt.Println(err)
		return
	}
	for _, sk := range s.Skills() {
		fmt.Println(sk.URI, sk.Name, len(sk.Files))
	}
	// Output: skill://acme/release-notes/SKILL.md release-notes 2
}
