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

// notifyEntryChanged announces the list change caused by registering the entry name: a new
// entry (added is set) is named in the change, so that listen streams and legacy sessions whose
// caller may not see it are spared; a replaced or removed one is not, since what the caller saw
// of it may be gone.
func (s *Server) notifyEntryChanged(method, name string, added bool) {
	if !s.announcesListChanged(method) {
		return
	}
	c := Change{Method: method}
	if added {
		c.Name = name
	}
	_ = s.publish(context.Background(), c)
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

// FilterChanged tells one caller that what it may see changed (a grant, a revoked scope, a
// feature flag turned on: anything a Visibility decides by): the legacy sessions and the
// subscriptions/listen streams of principal, on every replica (through Options.Broadcaster),
// get the list-changed notifications of the lists the server announces changes of (tools,
// prompts, resources), and nobody else does; the client then lists again and sees its new
// view. A session or stream belongs to the principal of the request that opened it
// (PrincipalFrom). An empty principal names nobody: nothing is sent. ctx and the error are as
// for NotifyResourceUpdated (the first error, after trying every list).
func (s *Server) FilterChanged(ctx context.Context, principal string) error {
	if principal == "" {
		return nil
	}
	caps := s.Capabilities()
	var first error
	for _, l := range [...]struct {
		method string
		on     bool
	}{
		{ToolsListChanged, caps.Tools != nil && caps.Tools.ListChanged},
		{PromptsListChanged, caps.Prompts != nil && caps.Prompts.ListChanged},
		{ResourcesListChanged, caps.Resources != nil && caps.Resources.ListChanged},
	} {
		if !l.on {
			continue
		}
		if err := s.publish(ctx, Change{Method: l.method, Principal: principal}); err != nil && first == nil {
			first = err
		}
	}
	return first
}
