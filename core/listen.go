package core

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// SubscriptionFilter is what a subscriptions/listen request asks for; each type is opt-in.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
	// Extensions are the members the server's extensions add to the filter (ListenMember), by
	// member name: the ids of what the stream receives of that extension's notifications
	// (taskIds of the tasks extension). Parsing keeps every other member that is an array of
	// strings here; honoring the filter keeps only the ids the extensions admitted.
	Extensions map[string][]string `json:"-"`

	// unknown are the members ParseListenFilter found that are neither core's nor arrays of
	// strings (refused by HonorListen when an extension claims one).
	unknown []string
	// admitted are the extension members HonorListen checked, in extension order.
	admitted []admittedMember
	// view is the caller of the listen request, as HonorListen saw it: list changes aimed at
	// another principal, or caused by an entry this caller may not see, are not for it.
	view *listenView
}

// listenView is the caller of a subscriptions/listen request.
type listenView struct {
	server    *Server
	ctx       context.Context
	principal string
	version   string
}

// admittedMember is an extension's filter member as HonorListen admitted it.
type admittedMember struct {
	member *ListenMember
	ids    []string
}

// honor returns the part of f the server can deliver: a type is kept only when the server's
// capability flag promises it (listChanged for the lists, subscribe for resource updates), and
// the members of extensions only as HonorListen admitted them.
func (s *Server) honor(f SubscriptionFilter) SubscriptionFilter {
	caps := s.Capabilities()
	var out SubscriptionFilter
	out.ToolsListChanged = f.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	out.PromptsListChanged = f.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	out.ResourcesListChanged = f.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if len(f.ResourceSubscriptions) > 0 && caps.Resources != nil && caps.Resources.Subscribe {
		out.ResourceSubscriptions = append([]string(nil), f.ResourceSubscriptions...)
	}
	for _, a := range f.admitted {
		out.admitted = append(out.admitted, admittedMember{member: a.member, ids: append([]string(nil), a.ids...)})
		if len(a.ids) > 0 {
			if out.Extensions == nil {
				out.Extensions = map[string][]string{}
			}
			out.Extensions[a.member.Name] = append([]string(nil), a.ids...)
		}
	}
	return out
}

// wants reports whether a stream with this (honored) filter receives the change. A list change
// aimed at one principal (Server.FilterChanged) reaches only that principal's streams, and one
// naming a new entry, or the update of a resource, only the streams whose caller may see it
// (see Visibility).
func (f SubscriptionFilter) wants(c Change) bool {
	if c.Principal != "" && (f.view == nil || f.view.principal != c.Principal) {
		return false
	}
	switch c.Method {
	case ToolsListChanged:
		return f.ToolsListChanged && f.view.seesChanged(c)
	case PromptsListChanged:
		return f.PromptsListChanged && f.view.seesChanged(c)
	case ResourcesListChanged:
		return f.ResourcesListChanged && f.view.seesChanged(c)
	case ResourceUpdated:
		for _, u := range f.ResourceSubscriptions {
			if u == c.URI {
				return f.view.seesUpdated(c.URI)
			}
		}
		return false
	}
	if c.Key == "" {
		return false
	}
	for _, a := range f.admitted {
		if a.member.Method != c.Method {
			continue
		}
		for _, id := range a.ids {
			if id == c.Key {
				return true
			}
		}
	}
	return false
}

// honorListen returns the part of a subscriptions/listen filter the server delivers to this
// request: honor's subset, plus the ids of each extension's member that the extension admits
// (ListenMember.Admit; the tasks extension admits the caller's own tasks). A member that is not
// an array of strings is -32602; an extension's refusal is its error. Transports serving
// subscriptions/listen call it with the request's context and envelope.
func (s *Server) honorListen(ctx context.Context, env *Envelope, f SubscriptionFilter) (SubscriptionFilter, error) {
	f.admitted = nil
	for _, x := range s.exts {
		m := x.spec.Listen
		if m == nil {
			continue
		}
		if slices.Contains(f.unknown, m.Name) {
			return s.honor(SubscriptionFilter{}), badListenFilter()
		}
		a := admittedMember{member: m}
		if ids := f.Extensions[m.Name]; len(ids) > 0 {
			admitted, err := m.Admit(ctx, env, ids)
			if err != nil {
				return s.honor(SubscriptionFilter{}), err
			}
			a.ids = admitted
		}
		f.admitted = append(f.admitted, a)
	}
	out := s.honor(f)
	out.view = &listenView{server: s, ctx: ctx}
	out.view.principal, _ = PrincipalFrom(ctx)
	if env != nil {
		out.view.version = env.ProtocolVersion
	}
	return out, nil
}

// viewer returns the view of the stream's caller.
func (v *listenView) viewer() viewer {
	vw := viewer{ctx: v.ctx, server: v.server.opts.Visibility, version: v.version, modern: true}
	vw.scoped, _ = v.ctx.Value(visibilityKey{}).(*visibilityNode)
	return vw
}

// seesUpdated reports whether the caller of the stream may see the resource uri, resolved as
// resources/read resolves it (the exact resource, else the first matching template, never a
// later one), so that an update does not tell of a resource hidden from it (a URI nothing
// serves is nobody's to hide).
func (v *listenView) seesUpdated(uri string) bool {
	if v == nil {
		return true
	}
	s := v.server
	vw := v.viewer()
	if src := s.sourceFor(uri); src != nil {
		if !vw.filters() {
			return true
		}
		for _, r := range src.Resources() {
			if r.URI == uri {
				var view View
				sourceView(&view, r)
				return vw.sees(nil, &view)
			}
		}
		return true
	}
	s.mu.RLock()
	if !vw.filters() && !s.resources.guarded() && !s.templates.guarded() {
		s.mu.RUnlock()
		return true
	}
	e, t, _ := s.resolveLocked(uri)
	s.mu.RUnlock()
	var view View
	switch {
	case e != nil:
		resourceView(&view, e)
		return vw.sees(e.resource.Visible, &view)
	case t != nil:
		templateView(&view, t)
		return vw.sees(t.template.Visible, &view)
	}
	return true
}

// seesChanged reports whether the caller of the stream may see the entry a list change names
// (any change naming none, or an entry gone since, is for every stream that wants its kind).
func (v *listenView) seesChanged(c Change) bool {
	if v == nil || c.Name == "" {
		return true
	}
	own, view, found := v.server.namedEntry(c)
	vw := v.viewer()
	return !found || vw.sees(own, &view)
}

// namedEntry returns the predicate and the view of the entry a list change names, and whether
// it is registered.
func (s *Server) namedEntry(c Change) (own Visibility, view View, found bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch c.Method {
	case ToolsListChanged:
		if e, ok := s.tools.get(c.Name); ok {
			toolView(&view, e)
			return e.tool.Visible, view, true
		}
	case PromptsListChanged:
		if e, ok := s.prompts.get(c.Name); ok {
			promptView(&view, e)
			return e.prompt.Visible, view, true
		}
	case ResourcesListChanged:
		if e, ok := s.resources.get(c.Name); ok {
			resourceView(&view, e)
			return e.resource.Visible, view, true
		} else if t, ok := s.templates.get(c.Name); ok {
			templateView(&view, t)
			return t.template.Visible, view, true
		}
	}
	return nil, View{}, false
}

// listenServer serves subscriptions/listen on a session whose one channel carries everything
// (sessionOptions.Listen): the kit's stdio and in-memory transports give the registry of their
// open subscriptions. It is an interface literal type so that internal/transport names the same
// type (transport.ListenServer).
type listenServer = interface {
	// ServeListen serves one subscriptions/listen request until its subscription ends, sending
	// the acknowledgement and the changes on the request's own path.
	ServeListen(c *Call) (any, error)
}

// handleListen serves subscriptions/listen through the session's listenServer; without one the
// method does not exist on the session (an HTTP endpoint serves it itself).
func handleListen(c *Call) (any, error) {
	ss := c.session
	ss.mu.Lock()
	var l listenServer
	if ss.lasting != nil {
		l = ss.lasting.listen
	}
	ss.mu.Unlock()
	if l == nil {
		return nil, typedError(jsonrpc.CodeMethodNotFound, c.msg.Method)
	}
	return l.ServeListen(c)
}
