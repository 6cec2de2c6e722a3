package core

import "context"

// ParseEnvelope validates the 2026-07-28 envelope of a message outside of dispatch (a transport
// serving subscriptions/listen itself): -32602 naming the missing or invalid keys, -32022 for a
// version the server does not serve. A non-nil error is always a *Error.
func ParseEnvelope(m *Message) (*Envelope, error) {
	c := &Call{msg: m, params: m.Params, method: m.Method}
	env, e := c.parseEnvelope()
	if e != nil {
		return nil, e
	}
	return env, nil
}

// SubscriptionFilter is what a subscriptions/listen request asks for; each type is opt-in.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
	// TaskIDs are the tasks whose notifications/tasks the stream receives (SEP-2663). Honor
	// keeps them only from a filter HonorListen checked (the caller's own tasks).
	TaskIDs []string `json:"taskIds,omitzero"`

	tasksChecked bool // set by HonorListen
}

// Honor returns the part of f the server can deliver: a type is kept only when the server's
// capability flag promises it (listChanged for the lists, subscribe for resource updates).
func (s *Server) Honor(f SubscriptionFilter) SubscriptionFilter {
	caps := s.Capabilities()
	var out SubscriptionFilter
	out.ToolsListChanged = f.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	out.PromptsListChanged = f.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	out.ResourcesListChanged = f.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if len(f.ResourceSubscriptions) > 0 && caps.Resources != nil && caps.Resources.Subscribe {
		out.ResourceSubscriptions = append([]string(nil), f.ResourceSubscriptions...)
	}
	if f.tasksChecked {
		out.TaskIDs, out.tasksChecked = append([]string(nil), f.TaskIDs...), true
	}
	return out
}

// Wants reports whether a stream with this (honored) filter receives the change.
func (f SubscriptionFilter) Wants(c Change) bool {
	switch c.Method {
	case ToolsListChanged:
		return f.ToolsListChanged
	case PromptsListChanged:
		return f.PromptsListChanged
	case ResourcesListChanged:
		return f.ResourcesListChanged
	case ResourceUpdated:
		for _, u := range f.ResourceSubscriptions {
			if u == c.URI {
				return true
			}
		}
	case TaskStatusChanged:
		for _, id := range f.TaskIDs {
			if id == c.TaskID {
				return true
			}
		}
	}
	return false
}

// HonorListen returns the part of a subscriptions/listen filter the server delivers to this
// request: Honor's subset, plus the requested taskIds that name tasks of the request's principal
// (unknown, expired and other principals' ids are left out, as if they did not exist). Asking
// for taskIds without declaring the tasks extension in env is -32021. Transports serving
// subscriptions/listen call it with the request's context and envelope.
func (s *Server) HonorListen(ctx context.Context, env *Envelope, f SubscriptionFilter) (SubscriptionFilter, error) {
	f.tasksChecked = false
	out := s.Honor(f)
	out.tasksChecked = true
	if len(f.TaskIDs) == 0 {
		return out, nil
	}
	if env == nil || !env.ClientCapabilities.Has("extensions", TasksExtension) {
		return out, MissingCapabilities(map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}})
	}
	if !s.offersTasks() {
		return out, nil
	}
	owner, _ := PrincipalFrom(ctx)
	seen := map[string]bool{}
	for _, id := range f.TaskIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		t, err := s.tasks.opts.Store.Get(ctx, id)
		if err == nil && t.Owner == owner {
			out.TaskIDs = append(out.TaskIDs, id)
		}
	}
	return out, nil
}
