package core

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
	}
	return false
}
