package core

// matchResource tells how resources/read would resolve uri: the exact resource registered under
// it (uriTemplate empty, vars nil), else the first registered template that matches, with its
// variables. ok is false when nothing matches. Layers that decide about a read before it runs
// (an authorization layer mapping templates to scopes, say) use it so that they resolve a URI
// exactly as dispatch does.
func (s *Server) matchResource(uri string) (uriTemplate string, vars map[string]string, ok bool) {
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
	e, t, vars := s.resolveLocked(uri)
	switch {
	case e != nil:
		return e.handler, "", nil, true
	case t != nil:
		return t.handler, t.template.URITemplate, vars, true
	}
	return nil, "", nil, false
}

// resolveLocked returns the entry serving uri: the exact resource registered under it, else the
// first template that matches, with its variables (both nil when nothing does); s.mu is held.
func (s *Server) resolveLocked(uri string) (*resourceEntry, *templateEntry, map[string]string) {
	if e, ok := s.resources.get(uri); ok {
		return e, nil, nil
	}
	for _, k := range s.templates.keys {
		t := s.templates.items[k]
		if vars, ok := t.match(uri); ok {
			return nil, t, vars
		}
	}
	return nil, nil, nil
}

// readTarget resolves uri for a resources/read exactly as lookupResource (and so MatchResource)
// does, then asks whether the caller of c may see what serves it: ok is false when nothing
// serves uri, or when the caller may not see the entry that does (hidden is then set), and the
// read is answered as for an unknown URI. A hidden entry never gives way to a later match: that
// would serve the URI past the checks a layer in front applied to the entry MatchResource
// names. A resource of an extension's source the caller may not see is hidden likewise.
func (s *Server) readTarget(c *Call, uri string) (h ResourceHandler, vars map[string]string, ok, hidden bool) {
	if src := s.sourceFor(uri); src != nil {
		if vw := viewerOf(c); vw.filters() && !s.seesSourced(c, vw, src, uri) {
			return nil, nil, false, true
		}
		return src.Read, nil, true, false
	}
	s.mu.RLock()
	e, t, vars := s.resolveLocked(uri)
	s.mu.RUnlock()
	switch {
	case e != nil:
		if !seesEntry(c, e, resourceVisible, resourceView) {
			return nil, nil, false, true
		}
		return e.handler, nil, true, false
	case t != nil:
		if !seesEntry(c, t, templateVisible, templateView) {
			return nil, nil, false, true
		}
		return t.handler, vars, true, false
	}
	return nil, nil, false, false
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
