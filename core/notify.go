package core

import "context"

// notifyListChanged tells every initialized session that a list changed, when the server
// announces such changes (the capability's listChanged). Sessions without a path to the client
// miss it; they re-list when they reconnect. Registration changes (AddTool and the like) have no
// caller context: they publish with context.Background(), and a shared broadcaster bounds the
// call with its own timeout.
func (s *Server) notifyListChanged(ctx context.Context, method string) error {
	if !s.announcesListChanged(method) {
		return nil
	}
	return s.publish(ctx, Change{Method: method})
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
// sessions that sent resources/subscribe, and listen streams whose filter names the URI. ctx
// bounds the broadcaster's Publish (a shared broadcaster talks to a remote service); the error is
// the broadcaster's, also given to the server's error log.
func (s *Server) NotifyResourceUpdated(ctx context.Context, uri string) error {
	return s.publish(ctx, Change{Method: ResourceUpdated, URI: uri})
}

// NotifyToolsListChanged tells every session that the tool list changed. Adding or removing
// tools does it already; call it when tools change in a way the server cannot see. ctx and the
// error are as for NotifyResourceUpdated.
func (s *Server) NotifyToolsListChanged(ctx context.Context) error {
	return s.notifyListChanged(ctx, ToolsListChanged)
}

// NotifyPromptsListChanged tells every session that the prompt list changed (see
// NotifyToolsListChanged).
func (s *Server) NotifyPromptsListChanged(ctx context.Context) error {
	return s.notifyListChanged(ctx, PromptsListChanged)
}

// NotifyResourcesListChanged tells every session that the resource list changed (see
// NotifyToolsListChanged).
func (s *Server) NotifyResourcesListChanged(ctx context.Context) error {
	return s.notifyListChanged(ctx, ResourcesListChanged)
}
