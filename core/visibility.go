package core

import (
	"context"
)

// Visibility decides whether the caller of a request may see one of the server's entries (a
// tool, a prompt, a resource or a resource template): ctx is the request's context, with its
// principal (PrincipalFrom) and whatever an authentication layer put there (auth.TokenInfoFrom),
// and v names the entry and the request's lifecycle. An entry it hides is left out of the list
// methods and answered as an unknown name by tools/call, prompts/get, resources/read and
// completion/complete, so its existence does not leak.
//
// It runs for every entry of every list request, and for the entry of every request naming
// one, while a subscriptions/listen stream decides whether a list change concerns it: it must
// be quick, must not block and must not call the server. It may run concurrently.
type Visibility func(ctx context.Context, v *View) bool

// View is what a Visibility decides about: exactly one of Tool, Prompt, Resource and Template
// is set, pointing at the registered entry (which must not be changed), and the request's
// lifecycle.
type View struct {
	Tool     *Tool
	Prompt   *Prompt
	Resource *Resource
	Template *ResourceTemplate
	// ProtocolVersion is the request's protocol version (the negotiated one on a legacy
	// session, the envelope's on a 2026-07-28 request); Modern is set on the 2026-07-28
	// lifecycle.
	ProtocolVersion string
	Modern          bool
}

// Name returns the name the entry is known by: a tool's or a prompt's name, a resource's URI,
// a template's URI template.
func (v *View) Name() string {
	switch {
	case v.Tool != nil:
		return v.Tool.Name
	case v.Prompt != nil:
		return v.Prompt.Name
	case v.Resource != nil:
		return v.Resource.URI
	case v.Template != nil:
		return v.Template.URITemplate
	}
	return ""
}

// visibilityKey is the context key of the request-scoped filters (WithVisibility).
type visibilityKey struct{}

// visibilityNode is one request-scoped filter and the ones given before it.
type visibilityNode struct {
	f    Visibility
	next *visibilityNode
}

// WithVisibility returns a copy of ctx whose requests see only the entries f lets through, on
// top of the entries' own predicates, Options.Visibility and the filters given earlier to the
// same context (an entry is visible when every one of them says so). It is how a layer in front
// of the server scopes the view of one request: auth.RequireScopes does it when
// ScopeOptions.Hide is set. A nil f leaves ctx as it is.
func WithVisibility(ctx context.Context, f Visibility) context.Context {
	if f == nil {
		return ctx
	}
	prev, _ := ctx.Value(visibilityKey{}).(*visibilityNode)
	return context.WithValue(ctx, visibilityKey{}, &visibilityNode{f: f, next: prev})
}

// viewer is the view of one request (or one listen stream): its context, the filters that
// apply to every entry, and its lifecycle.
type viewer struct {
	ctx     context.Context
	server  Visibility
	scoped  *visibilityNode
	version string
	modern  bool
}

// viewerOf returns the view of the call's request.
func viewerOf(c *Call) viewer {
	vw := viewer{ctx: c.ctx, server: c.session.server.opts.Visibility}
	vw.scoped, _ = c.ctx.Value(visibilityKey{}).(*visibilityNode)
	return vw
}

// filters reports whether anything but the entries' own predicates filters the view.
func (vw viewer) filters() bool { return vw.server != nil || vw.scoped != nil }

// sees reports whether the viewer may see the entry v names, whose own predicate is own.
func (vw *viewer) sees(own Visibility, v *View) bool {
	v.ProtocolVersion, v.Modern = vw.version, vw.modern
	if own != nil && !own(vw.ctx, v) {
		return false
	}
	if vw.server != nil && !vw.server(vw.ctx, v) {
		return false
	}
	for n := vw.scoped; n != nil; n = n.next {
		if !n.f(vw.ctx, v) {
			return false
		}
	}
	return true
}

// The entry kinds as the registries hold them: their own predicate, and the view of one.
func toolVisible(e *toolEntry) Visibility         { return e.tool.Visible }
func promptVisible(e *promptEntry) Visibility     { return e.prompt.Visible }
func resourceVisible(e *resourceEntry) Visibility { return e.resource.Visible }
func templateVisible(e *templateEntry) Visibility { return e.template.Visible }
func sourceVisible(Resource) Visibility           { return nil } // see ResourceSource

func toolView(v *View, e *toolEntry)         { *v = View{Tool: &e.tool} }
func promptView(v *View, e *promptEntry)     { *v = View{Prompt: &e.prompt} }
func resourceView(v *View, e *resourceEntry) { *v = View{Resource: &e.resource} }
func templateView(v *View, e *templateEntry) { *v = View{Template: &e.template} }
func sourceView(v *View, r Resource)         { *v = View{Resource: &r} }

// guarded reports whether the view of the entries needs filtering: a filter applies to every
// entry, or one of them has a predicate of its own.
func guarded[E any](vw viewer, entries []E, own func(E) Visibility) bool {
	if vw.filters() {
		return true
	}
	for _, e := range entries {
		if own(e) != nil {
			return true
		}
	}
	return false
}

// filterVisible keeps, in place and in order, the entries the viewer of c sees. Callers check
// guarded first, so that a server without filters pays nothing.
func filterVisible[E any](c *Call, vw viewer, entries []E, own func(E) Visibility, view func(*View, E)) []E {
	vw.version, vw.modern = c.ProtocolVersion(), c.modern != nil
	var v View
	kept := entries[:0]
	for _, e := range entries {
		view(&v, e)
		if vw.sees(own(e), &v) {
			kept = append(kept, e)
		}
	}
	clear(entries[len(kept):]) // no stale pointers past the end
	return kept
}

// seesEntry reports whether the caller of c may see one entry (the target of a request naming
// it), at no cost when nothing filters.
func seesEntry[E any](c *Call, e E, own func(E) Visibility, view func(*View, E)) bool {
	vw := viewerOf(c)
	if own(e) == nil && !vw.filters() {
		return true
	}
	return seesSlow(c, vw, e, own, view)
}

func seesSlow[E any](c *Call, vw viewer, e E, own func(E) Visibility, view func(*View, E)) bool {
	vw.version, vw.modern = c.ProtocolVersion(), c.modern != nil
	var v View
	view(&v, e)
	return vw.sees(own(e), &v)
}

// markPrivate makes the cache hints of a filtered list say it is private to the caller, on
// the 2026-07-28 lifecycle (legacy results carry hints only when a handler set them).
func (x *cacheable) markPrivate(c *Call, filtered bool) {
	if filtered && c.modern != nil {
		x.CacheScope = "private"
	}
}

// Sees reports whether the caller of the request may see the entry v describes (one of its
// Tool, Prompt, Resource or Template set), as core's list methods decide it: the entry's own
// Visible predicate, Options.Visibility and the request's filters (WithVisibility). An
// extension whose methods list or name what core serves (the files of skills, say) keeps to the
// caller's view with it. v's lifecycle fields are set from the request.
func (c *Call) Sees(v *View) bool {
	vw := viewerOf(c)
	var own Visibility
	switch {
	case v.Tool != nil:
		own = v.Tool.Visible
	case v.Prompt != nil:
		own = v.Prompt.Visible
	case v.Resource != nil:
		own = v.Resource.Visible
	case v.Template != nil:
		own = v.Template.Visible
	}
	if own == nil && !vw.filters() {
		return true
	}
	vw.version, vw.modern = c.ProtocolVersion(), c.modern != nil
	return vw.sees(own, v)
}
