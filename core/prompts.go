package core

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// PromptHandler serves prompts/get for one prompt. Required arguments are checked before it runs.
type PromptHandler func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error)

// PromptRequest is a prompts/get request as a prompt handler sees it.
type PromptRequest struct {
	*Call
	// Name is the prompt's name.
	Name string
	// Arguments are the prompt arguments (never nil).
	Arguments map[string]string
}

type promptEntry struct {
	prompt  Prompt
	handler PromptHandler
}

// AddPrompt registers a prompt, replacing any prompt of the same name, and announces the change.
func (s *Server) AddPrompt(p *Prompt, h PromptHandler) {
	if p == nil || h == nil || p.Name == "" {
		panic("mcpkit: AddPrompt needs a named prompt and a handler")
	}
	s.mu.Lock()
	_, had := s.prompts.get(p.Name)
	s.prompts.set(p.Name, &promptEntry{prompt: *p, handler: h})
	s.prompts.guard(p.Name, p.Visible != nil)
	s.mu.Unlock()
	s.notifyEntryChanged(PromptsListChanged, p.Name, !had)
}

// RemovePrompts removes prompts by name and announces the change.
func (s *Server) RemovePrompts(names ...string) {
	changed := false
	s.mu.Lock()
	for _, n := range names {
		changed = s.prompts.remove(n) || changed
	}
	s.mu.Unlock()
	if changed {
		_ = s.notifyListChanged(context.Background(), "notifications/prompts/list_changed")
	}
}

type listPromptsResult struct {
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitzero"`
	Meta       Meta     `json:"_meta,omitzero"`
	cacheable
	modern
}

func handleListPrompts(c *Call) (any, error) {
	items, next, filtered, err := listPage(c, &c.session.server.prompts, func(e *promptEntry) Prompt { return e.prompt }, promptVisible, promptView)
	if err != nil {
		return nil, err
	}
	res := &listPromptsResult{Prompts: items, NextCursor: next}
	res.markPrivate(c, filtered)
	return res, nil
}

func handleGetPrompt(c *Call) (any, error) {
	var p struct {
		Name      jsontext.Value            `json:"name"`
		Arguments map[string]jsontext.Value `json:"arguments"`
	}
	if !rawObject(c.msg.Params) || unmarshal(c.msg.Params, &p) != nil {
		return nil, jsonrpc.InvalidParams("Invalid params")
	}
	var name string
	if p.Name.Kind() != '"' || unmarshal(p.Name, &name) != nil {
		return nil, jsonrpc.InvalidParams("Missing or invalid prompt name")
	}
	s := c.session.server
	s.mu.RLock()
	e, ok := s.prompts.get(name)
	s.mu.RUnlock()
	if !ok || !seesEntry(c, e, promptVisible, promptView) {
		return nil, jsonrpc.InvalidParams("Prompt not found: " + name)
	}
	args, perr := promptArguments(p.Arguments)
	if perr != nil {
		return nil, perr
	}
	var missing []string
	for _, a := range e.prompt.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, jsonrpc.InvalidParams("Missing required arguments: " + strings.Join(missing, ", "))
	}
	return runPrompt(c, e, name, args)
}

// promptArguments decodes the arguments of prompts/get, which are strings: a value of another
// type is -32602 naming the argument.
func promptArguments(raw map[string]jsontext.Value) (map[string]string, *jsonrpc.Error) {
	args := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if v.Kind() != '"' || unmarshal(v, &s) != nil {
			return nil, jsonrpc.InvalidParams("Prompt argument " + strconv.Quote(k) + " must be a string")
		}
		args[k] = s
	}
	return args, nil
}

func runPrompt(c *Call, e *promptEntry, name string, args map[string]string) (res *GetPromptResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.session.server.logError(fmt.Errorf("mcpkit: panic in prompt %q: %v\n%s", name, v, debug.Stack()))
			res, err = nil, jsonrpc.InternalError("Internal error handling prompts/get request")
		}
	}()
	res, err = e.handler(c.ctx, &PromptRequest{Call: c, Name: name, Arguments: args})
	if err == nil && res == nil {
		res = &GetPromptResult{}
	}
	return res, err
}
