package core

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// CompletionHandler serves completion/complete. The reference has been checked: a prompt
// reference names a registered prompt, a resource reference a registered resource URI or template,
// one the caller may see (see Visibility).
// A nil result means no values. More than 100 values are cut to the first 100, with HasMore set
// and Total defaulting to the full count.
type CompletionHandler func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error)

// CompleteRequest is a completion/complete request.
type CompleteRequest struct {
	*Call
	// Ref is what is being completed: {"type":"ref/prompt","name":...} or
	// {"type":"ref/resource","uri":...}.
	Ref CompleteRef
	// Argument is the argument being completed and its current value.
	Argument CompleteArgument
	// Context holds already resolved arguments, when the client sent them.
	Context map[string]string
}

// CompleteRef is the reference of a completion request.
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitzero"`
	URI  string `json:"uri,omitzero"`
}

// CompleteArgument is the argument of a completion request.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// maxCompletionValues is the most values one completion result may carry.
const maxCompletionValues = 100

func handleComplete(c *Call) (any, error) {
	var p struct {
		Ref      jsontext.Value `json:"ref"`
		Argument jsontext.Value `json:"argument"`
		Context  *struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if !rawObject(c.msg.Params) || unmarshal(c.msg.Params, &p) != nil {
		return nil, jsonrpc.InvalidParams("Invalid params")
	}
	var ref CompleteRef
	if !rawObject(p.Ref) || unmarshal(p.Ref, &ref) != nil || ref.Type == "" {
		return nil, jsonrpc.InvalidParams("Missing or invalid ref")
	}
	var arg struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	}
	if !rawObject(p.Argument) || unmarshal(p.Argument, &arg) != nil || arg.Name == nil || arg.Value == nil {
		return nil, jsonrpc.InvalidParams("Missing argument name or value")
	}
	s := c.session.server
	switch ref.Type {
	case "ref/prompt":
		s.mu.RLock()
		e, ok := s.prompts.get(ref.Name)
		s.mu.RUnlock()
		if !ok || !seesEntry(c, e, promptVisible, promptView) {
			return nil, jsonrpc.InvalidParams("Prompt not found: " + ref.Name)
		}
	case "ref/resource":
		if !s.knownResourceRef(c, ref.URI) {
			return nil, ResourceNotFound(ref.URI)
		}
	default:
		return nil, jsonrpc.InvalidParams("Invalid ref type: " + ref.Type)
	}
	req := &CompleteRequest{Call: c, Ref: ref, Argument: CompleteArgument{Name: *arg.Name, Value: *arg.Value}}
	if p.Context != nil {
		req.Context = p.Context.Arguments
	}
	var res *CompleteResult
	if h := s.opts.CompletionHandler; h != nil {
		var err error
		if res, err = h(c.ctx, req); err != nil {
			return nil, err
		}
	}
	if res == nil {
		res = &CompleteResult{}
	} else {
		copied := *res // a handler may return one result to many calls: never change it
		res = &copied
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	if n := len(res.Completion.Values); n > maxCompletionValues {
		if res.Completion.Total == nil {
			res.Completion.Total = &n
		}
		res.Completion.Values = res.Completion.Values[:maxCompletionValues]
		res.Completion.HasMore = true
	}
	return res, nil
}

// knownResourceRef reports whether uri is a registered resource or a template's own text that
// the caller of c may see.
func (s *Server) knownResourceRef(c *Call, uri string) bool {
	s.mu.RLock()
	r, exact := s.resources.get(uri)
	t, tpl := s.templates.get(uri)
	s.mu.RUnlock()
	return exact && seesEntry(c, r, resourceVisible, resourceView) ||
		tpl && seesEntry(c, t, templateVisible, templateView)
}
