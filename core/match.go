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
