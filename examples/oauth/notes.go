package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
)

// The scopes of the example.
const (
	scopeRead  = "notes:read"
	scopeWrite = "notes:write"
)

// notes is the example's store: notes per principal.
type notes struct {
	mu    sync.Mutex
	byWho map[string][]string
}

// AddNoteInput is the input of add_note.
type AddNoteInput struct {
	Text string `json:"text" jsonschema:"the note"`
}

// newServer returns the example's MCP server: whoami (any valid token), add_note (notes:write),
// the notes://{owner} template and the summarize prompt (notes:read).
func newServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "oauth-example", Version: "1.0.0"}, core.Options{})
	n := &notes{byWho: map[string][]string{}}
	s.AddTool(&core.Tool{Name: "whoami", Description: "Says who the token belongs to and what it may do."},
		func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
			p, _ := core.PrincipalFrom(ctx)
			info, _ := auth.TokenInfoFrom(ctx)
			return core.TextResult("you are " + p + " with scopes [" + strings.Join(info.Scopes, " ") + "]"), nil
		})
	core.AddTool(s, &core.Tool{Name: "add_note", Description: "Keeps a note for the caller."},
		func(ctx context.Context, _ *core.ToolRequest, in AddNoteInput) (*core.CallToolResult, any, error) {
			p, _ := core.PrincipalFrom(ctx)
			n.mu.Lock()
			n.byWho[p] = append(n.byWho[p], in.Text)
			count := len(n.byWho[p])
			n.mu.Unlock()
			return core.TextResult("noted (" + strconv.Itoa(count) + " notes)"), nil, nil
		})
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "notes://{owner}", Name: "notes", Description: "The notes of one owner (only your own).", MimeType: "text/plain"},
		func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			p, _ := core.PrincipalFrom(ctx)
			if req.Vars["owner"] != p {
				return nil, core.ResourceNotFound(req.URI)
			}
			n.mu.Lock()
			text := strings.Join(slices.Clone(n.byWho[p]), "\n")
			n.mu.Unlock()
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: text}}}, nil
		})
	s.AddPrompt(&core.Prompt{Name: "summarize", Description: "Asks the model to summarize your notes."},
		func(ctx context.Context, _ *core.PromptRequest) (*core.GetPromptResult, error) {
			p, _ := core.PrincipalFrom(ctx)
			n.mu.Lock()
			text := strings.Join(n.byWho[p], "\n")
			n.mu.Unlock()
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("Summarize these notes:\n" + text)}}}, nil
		})
	return s
}

// notesScopes is the example's scope policy: reading needs notes:read, writing notes:write.
func notesScopes(s *core.Server, meta string) auth.ScopeOptions {
	return auth.ScopeOptions{
		ResourceMetadataURL: meta,
		Server:              s,
		Tools:               map[string][]string{"add_note": {scopeWrite}},
		Prompts:             map[string][]string{"summarize": {scopeRead}},
		Templates:           map[string][]string{"notes://{owner}": {scopeRead}},
	}
}
