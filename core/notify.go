package core

// notifyListChanged tells every initialized session that a list changed, when the server
// announces such changes (the capability's listChanged). Sessions without a path to the client
// miss it; they re-list when they reconnect.
func (s *Server) notifyListChanged(method string) {
	if !s.announcesListChanged(method) {
		return
	}
	s.publish(Change{Method: method})
}

// announcesListChanged reports whether the capabilities promise the given list_changed
// notification. Derived capabilities always do (even once the last item is removed, so that
// clients learn about the removal); configured ones only when they say listChanged.
func (s *Server) announcesListChanged(method string) bool {
	if s.opts.Capabilities == nil {
		return true
	}
	caps := *s.opts.Capabilities
	switch method {
	case "notifications/tools/list_changed":
		return caps.Tools != nil && caps.Tools.ListChanged
	case "notifications/prompts/list_changed":
		return caps.Prompts != nil && caps.Prompts.ListChanged
	case "notifications/resources/list_changed":
		return caps.Resources != nil && caps.Resources.ListChanged
	}
	return false
}

// NotifyResourceUpdated tells the clients subscribed to uri that the resource changed: legacy
// sessions that sent resources/subscribe, and listen streams whose filter names the URI.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.publish(Change{Method: ResourceUpdated, URI: uri})
}

// NotifyToolsListChanged tells every session that the tool list changed. Adding or removing
// tools does it already; call it when tools change in a way the server cannot see.
func (s *Server) NotifyToolsListChanged() { s.notifyListChanged("notifications/tools/list_changed") }

// NotifyPromptsListChanged tells every session that the prompt list changed.
func (s *Server) NotifyPromptsListChanged() {
	s.notifyListChanged("notifications/prompts/list_changed")
}

// NotifyResourcesListChanged tells every session that the resource list changed.
func (s *Server) NotifyResourcesListChanged() {
	s.notifyListChanged("notifications/resources/list_changed")
}
