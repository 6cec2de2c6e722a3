package core

import "context"

// notifyListChanged tells every live session that a list changed. Sessions without a path to
// the client miss it; they re-list when they reconnect.
func (s *Server) notifyListChanged(method string) {
	for _, ss := range s.liveSessions() {
		if !ss.Initialized() {
			continue
		}
		_ = ss.Notify(context.Background(), method, nil)
	}
}

// NotifyResourceUpdated tells the sessions subscribed to uri that the resource changed.
func (s *Server) NotifyResourceUpdated(uri string) {
	params := map[string]string{"uri": uri}
	for _, ss := range s.liveSessions() {
		if ss.Subscribed(uri) {
			_ = ss.Notify(context.Background(), "notifications/resources/updated", params)
		}
	}
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
