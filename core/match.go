package core

// MatchResource tells how resources/read would resolve uri: the exact resource registered under
// it (uriTemplate empty, vars nil), else the first registered template that matches, with its
// variables. ok is false when nothing matches. Layers that decide about a read before it runs
// (an authorization layer mapping templates to scopes, say) use it so that they resolve a URI
// exactly as dispatch does.
func (s *Server) MatchResource(uri string) (uriTemplate string, vars map[string]string, ok bool) {
	_, uriTemplate, vars, ok = s.lookupResource(uri)
	return uriTemplate, vars, ok
}

// lookupResource resolves uri: the source of an extension serving its scheme, else an exact
// resource, then the templates in registration order. It returns the handler, the matching template ("" for an exact resource) and the
// template's variables.
func (s *Server) lookupResource(uri string) (ResourceHandler, string, map[string]string, bool) {
	if src := s.sourceFor(uri); src != nil {
		return src.Read, "", nil, true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lookupLocked(uri)
}

// lookupLocked resolves uri among the exact resources, then the templates; s.mu is held.
func (s *Server) lookupLocked(uri string) (ResourceHandler, string, map[string]string, bool) {
	if e, ok := s.resources.get(uri); ok {
		return e.handler, "", nil, true
	}
	for _, k := range s.templates.keys {
		t := s.templates.items[k]
		if vars, ok := t.match(uri); ok {
			return t.handler, k, vars, true
		}
	}
	return nil, "", nil, false
}

// readTarget resolves uri for a resources/read as lookupResource does, within the view of the
// caller of c: an exact resource or a template the caller may not see is passed over as if it
// were not registered, and a resource of an extension's source the caller may not see is not
// found. A server without filters or predicates resolves exactly as lookupResource.
func (s *Server) readTarget(c *Call, uri string) (ResourceHandler, map[string]string, bool) {
	vw := viewerOf(c)
	if src := s.sourceFor(uri); src != nil {
		if vw.filters() && !s.seesSourced(c, vw, src, uri) {
			return nil, nil, false
		}
		return src.Read, nil, true
	}
	s.mu.RLock()
	if !vw.filters() && !s.resources.guarded() && !s.templates.guarded() {
		h, _, vars, ok := s.lookupLocked(uri)
		s.mu.RUnlock()
		return h, vars, ok
	}
	e, exact := s.resources.get(uri)
	templates := s.templates.values()
	s.mu.RUnlock()
	if exact && seesSlow(c, vw, e, resourceVisible, resourceView) {
		return e.handler, nil, true
	}
	for _, t := range templates {
		if vars, ok := t.match(uri); ok && seesSlow(c, vw, t, templateVisible, templateView) {
			return t.handler, vars, true
		}
	}
	return nil, nil, false
}

// seesSourced reports whether the caller of c may see the resource uri of an extension's
// source: a URI the source does not list is the source's to answer.
func (s *Server) seesSourced(c *Call, vw viewer, src ResourceSource, uri string) bool {
	for _, r := range src.Resources() {
		if r.URI == uri {
			return seesSlow(c, vw, r, sourceVisible, sourceView)
		}
	}
	return true
}
