package core

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/uritemplate"
)

// ResourceHandler serves resources/read for a resource or a template.
type ResourceHandler func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error)

// ResourceRequest is a resources/read request as a resource handler sees it.
type ResourceRequest struct {
	*Call
	// URI is the URI asked for.
	URI string
	// Vars holds the template variables matched in URI (nil for a plain resource).
	Vars map[string]string
}

// SubscribeRequest is a resources/subscribe or resources/unsubscribe request.
type SubscribeRequest struct {
	*Call
	// URI is the resource the client (un)subscribes to.
	URI string
}

// ResourceNotFound returns the -32602 error for an unknown resource, with data.uri.
func ResourceNotFound(uri string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: " + uri, Data: map[string]string{"uri": uri}}
}

type resourceEntry struct {
	resource Resource
	handler  ResourceHandler
}

type templateEntry struct {
	template ResourceTemplate
	tpl      *uritemplate.Template
	handler  ResourceHandler
}

// AddResource registers a resource, replacing any with the same URI, and announces the change.
func (s *Server) AddResource(r *Resource, h ResourceHandler) {
	if r == nil || h == nil || r.URI == "" || r.Name == "" {
		panic("mcpkit: AddResource needs a resource with a URI and a name, and a handler")
	}
	s.mu.Lock()
	_, had := s.resources.get(r.URI)
	s.resources.set(r.URI, &resourceEntry{resource: *r, handler: h})
	s.resources.guard(r.URI, r.Visible != nil)
	s.mu.Unlock()
	s.notifyEntryChanged(ResourcesListChanged, r.URI, !had)
}

// AddResourceTemplate registers a resource template, an RFC 6570 URI template of levels 1 to 3,
// replacing any with the same template text, and announces the change. resources/read tries
// exact resources first, then the templates in registration order; the handler gets the
// variables percent-decoded in ResourceRequest.Vars. How each expression matches:
//   - {var}: one or more characters other than reserved ones, so never a '/' (test://t/{id}).
//   - {+var}: one or more characters, reserved ones included, so '/' too (file:///{+path}).
//   - {#var}, {.var}, {/var}, {;var}: an optional part introduced by its operator.
//   - {?a,b} and {&c} at the end: optional query parameters, in any order; a parameter the
//     template does not name means no match.
//
// It panics, naming the template, on a malformed template, on level 4 modifiers (prefix :N,
// explode *), and on two {var} or {+var} expressions in a row, whose boundary no match can tell.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) {
	if t == nil || h == nil || t.URITemplate == "" || t.Name == "" {
		panic("mcpkit: AddResourceTemplate needs a template with a uriTemplate and a name, and a handler")
	}
	tpl, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	_, had := s.templates.get(t.URITemplate)
	s.templates.set(t.URITemplate, &templateEntry{template: *t, tpl: tpl, handler: h})
	s.templates.guard(t.URITemplate, t.Visible != nil)
	s.mu.Unlock()
	s.notifyEntryChanged(ResourcesListChanged, t.URITemplate, !had)
}

// RemoveResources removes resources and templates by URI (or URI template) and announces it.
func (s *Server) RemoveResources(uris ...string) {
	changed := false
	s.mu.Lock()
	for _, u := range uris {
		changed = s.resources.remove(u) || changed
		changed = s.templates.remove(u) || changed
	}
	s.mu.Unlock()
	if changed {
		_ = s.notifyListChanged(context.Background(), "notifications/resources/list_changed")
	}
}

// match matches uri against the template and returns its variables.
func (t *templateEntry) match(uri string) (map[string]string, bool) { return t.tpl.Match(uri) }

type listResourcesResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
	cacheable
	modern
}

type listTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitzero"`
	Meta              Meta               `json:"_meta,omitzero"`
	cacheable
	modern
}

func handleListResources(c *Call) (any, error) {
	s := c.session.server
	if len(s.resourceSources) > 0 {
		return listWithSources(c)
	}
	items, next, filtered, err := listPage(c, &s.resources, func(e *resourceEntry) Resource { return e.resource }, resourceVisible, resourceView)
	if err != nil {
		return nil, err
	}
	res := &listResourcesResult{Resources: items, NextCursor: next}
	res.markPrivate(c, filtered)
	return res, nil
}

// listWithSources lists the server's resources, then those of its extensions' sources.
func listWithSources(c *Call) (any, error) {
	cursor, err := listParams(c)
	if err != nil {
		return nil, err
	}
	s := c.session.server
	s.mu.RLock()
	entries := s.resources.values()
	s.mu.RUnlock()
	vw := viewerOf(c)
	filtered := guarded(vw, entries, resourceVisible)
	if filtered {
		entries = filterVisible(c, vw, entries, resourceVisible, resourceView)
	}
	items := make([]Resource, 0, len(entries))
	for _, e := range entries {
		items = append(items, e.resource)
	}
	for _, x := range s.exts {
		if src := x.spec.Resources; src != nil && x.offered() {
			more := src.Resources()
			if vw.filters() {
				more, filtered = filterVisible(c, vw, more, sourceVisible, sourceView), true
			}
			items = append(items, more...)
		}
	}
	page, next, err := paginate(items, cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := &listResourcesResult{Resources: page, NextCursor: next}
	res.markPrivate(c, filtered)
	return res, nil
}

// sourceFor returns the extension's source serving uri's scheme, or nil.
func (s *Server) sourceFor(uri string) ResourceSource {
	if len(s.resourceSources) == 0 {
		return nil
	}
	scheme, _, ok := strings.Cut(uri, "://")
	if !ok {
		return nil
	}
	return s.resourceSources[scheme]
}

// offersSources reports whether an offered extension serves resources.
func (s *Server) offersSources() bool {
	for _, x := range s.exts {
		if x.spec.Resources != nil && x.offered() {
			return true
		}
	}
	return false
}

func handleListTemplates(c *Call) (any, error) {
	items, next, filtered, err := listPage(c, &c.session.server.templates, func(e *templateEntry) ResourceTemplate { return e.template }, templateVisible, templateView)
	if err != nil {
		return nil, err
	}
	res := &listTemplatesResult{ResourceTemplates: items, NextCursor: next}
	res.markPrivate(c, filtered)
	return res, nil
}

func uriParam(c *Call) (string, error) {
	var p struct {
		URI jsontext.Value `json:"uri"`
	}
	if !rawObject(c.msg.Params) || unmarshal(c.msg.Params, &p) != nil {
		return "", jsonrpc.InvalidParams("Invalid params")
	}
	var uri string
	if p.URI.Kind() != '"' || unmarshal(p.URI, &uri) != nil {
		return "", jsonrpc.InvalidParams("Missing or invalid uri")
	}
	return uri, nil
}

func handleReadResource(c *Call) (any, error) {
	uri, err := uriParam(c)
	if err != nil {
		return nil, err
	}
	h, vars, ok, _ := c.session.server.readTarget(c, uri)
	if !ok {
		return nil, ResourceNotFound(uri)
	}
	res, err := runResource(c, h, uri, vars)
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Contents) == 0 {
		// An empty contents would tell the client the resource exists and is empty.
		return nil, ResourceNotFound(uri)
	}
	return res, nil
}

func runResource(c *Call, h ResourceHandler, uri string, vars map[string]string) (res *ReadResourceResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.session.server.logError(fmt.Errorf("mcpkit: panic reading %q: %v\n%s", uri, v, debug.Stack()))
			res, err = nil, jsonrpc.InternalError("Internal error handling resources/read request")
		}
	}()
	return h(c.ctx, &ResourceRequest{Call: c, URI: uri, Vars: vars})
}

func handleSubscribe(c *Call) (any, error) {
	uri, err := uriParam(c)
	if err != nil {
		return nil, err
	}
	opts := &c.session.server.opts
	if limit := opts.MaxSubscriptionURIBytes; limit > 0 && len(uri) > limit {
		return nil, jsonrpc.InvalidParams("uri exceeds " + strconv.Itoa(limit) + " bytes (MaxSubscriptionURIBytes)")
	}
	if h := c.session.server.opts.SubscribeHandler; h != nil {
		if err := h(c.ctx, &SubscribeRequest{Call: c, URI: uri}); err != nil {
			return nil, asWireError(err, "Internal error handling resources/subscribe request")
		}
	}
	// A URI the caller may not see, resolved as resources/read resolves it, is answered as any
	// URI is (nothing tells an unknown one apart) but not recorded: its updates must not reach
	// this session. The limits are checked for it all the same.
	_, _, _, hidden := c.session.server.readTarget(c, uri)
	ss := c.session
	limit := c.session.server.opts.MaxSubscriptions
	ss.mu.Lock()
	l := ss.lastingLocked()
	if l.subscriptions == nil {
		l.subscriptions = map[string]struct{}{}
	}
	_, had := l.subscriptions[uri]
	if !had && limit > 0 && len(l.subscriptions) >= limit {
		ss.mu.Unlock()
		return nil, jsonrpc.InvalidParams(fmt.Sprintf("Too many resource subscriptions on this session (limit %d)", limit))
	}
	if total := opts.MaxSubscriptionBytes; !had && total > 0 && l.subscriptionBytes+len(uri) > total {
		ss.mu.Unlock()
		return nil, jsonrpc.InvalidParams("the resource subscriptions of this session would exceed " + strconv.Itoa(total) + " bytes (MaxSubscriptionBytes)")
	}
	record := !had && !hidden
	if record {
		l.subscriptions[uri] = struct{}{}
		l.subscriptionBytes += len(uri)
	}
	ss.mu.Unlock()
	if record {
		if e := ss.persist(c.ctx); e != nil {
			return nil, e
		}
	}
	return emptyResult{}, nil
}

func handleUnsubscribe(c *Call) (any, error) {
	uri, err := uriParam(c)
	if err != nil {
		return nil, err
	}
	if h := c.session.server.opts.UnsubscribeHandler; h != nil {
		if err := h(c.ctx, &SubscribeRequest{Call: c, URI: uri}); err != nil {
			return nil, asWireError(err, "Internal error handling resources/unsubscribe request")
		}
	}
	ss := c.session
	ss.mu.Lock()
	had := false
	if l := ss.lasting; l != nil {
		if _, had = l.subscriptions[uri]; had {
			delete(l.subscriptions, uri)
			l.subscriptionBytes -= len(uri)
		}
	}
	ss.mu.Unlock()
	if had {
		if e := ss.persist(c.ctx); e != nil {
			return nil, e
		}
	}
	return emptyResult{}, nil
}

// Expand returns the URI the template names for vars, following RFC 6570 (levels 1 to 3):
// reserved characters are kept in {+var} and {#var} and percent-encoded elsewhere, and an
// absent variable expands to nothing (with its operator's prefix). It fails on a template that
// AddResourceTemplate would refuse.
func (t ResourceTemplate) Expand(vars map[string]string) (string, error) {
	ut, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		return "", err
	}
	return ut.Expand(vars)
}
