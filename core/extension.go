package core

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// Extension is a protocol extension a Server serves beside the core protocol (tasks, skills,
// MCP Apps): the request methods it adds, its entry in capabilities.extensions and the hooks it
// needs from the protocol. The packages under ext/ implement it; a server takes its extensions
// in Options.Extensions, and NewServer binds each one once.
type Extension interface {
	// Bind is called once by NewServer, with the server being built, and returns what the
	// extension serves there. Bind must not call the server's registration methods (AddTool
	// and the like): the server is not built yet. An extension that can serve one server only
	// panics when it is bound a second time.
	Bind(s *Server) ExtensionSpec
}

// ExtensionSpec is what an extension declares to the server it is bound to. Only ID is
// required; every hook left nil costs nothing.
type ExtensionSpec struct {
	// ID is the extension identifier: its key in capabilities.extensions
	// ("io.modelcontextprotocol/tasks"). NewServer panics when it is empty or declared twice.
	ID string
	// Name is the short name error messages use for the extension's capability ("tasks": a
	// method of an extension the server does not offer answers -32603 "Server does not support
	// tasks (required for tasks/get)"). Empty means ID.
	Name string
	// Settings is the extension's entry in capabilities.extensions, as initialize and
	// server/discover announce it. Nil means an empty object.
	Settings map[string]any
	// Offered reports whether the server offers the extension now; nil means always. While it
	// reports false the extension has no entry in capabilities.extensions and its methods answer
	// -32603. It is called on every capability check: it must be quick and must not call the
	// server.
	Offered func() bool
	// ModernOnly leaves the entry out of initialize results: an extension of the 2026-07-28
	// lifecycle only, announced by server/discover.
	ModernOnly bool

	// Methods are the request methods the extension serves. NewServer panics, naming the
	// method, on one core serves or another extension declared.
	Methods []ExtensionMethod

	// Tools, when set, sees every change of the server's tool registry: AddTool calls it with the
	// tool it is about to register (an error it returns makes AddTool panic with it), and
	// RemoveTools (or a replacement) with removed set to the tool leaving. It runs while the
	// registry is locked: it must be quick and must not call the server.
	Tools func(t *Tool, removed bool) error
	// CallTool, when set, sees every tools/call of a registered tool before core checks its
	// arguments: it answers the call itself (handled true, with the result or the error) or lets
	// core run the tool as usual (handled false). See ToolCall.
	CallTool func(tc *ToolCall) (result any, handled bool, err error)
	// Listen, when set, adds a member to the filter of subscriptions/listen (see ListenMember).
	Listen *ListenMember
	// Resources, when set, serves the resources of one URI scheme (see ResourceSource).
	Resources ResourceSource
}

// ExtensionMethod is a request method an extension serves.
type ExtensionMethod struct {
	// Method is the method name ("tasks/get").
	Method string
	// Handle serves it. Its result is encoded as the response's result; on the 2026-07-28
	// lifecycle the result gets the members that lifecycle requires (resultType, the server's
	// identity), as every core result does.
	Handle MethodHandler
	// Capability is a server capability the method needs besides the extension itself, dotted
	// as core names them ("resources", "tools", "resources.subscribe"); empty means the
	// extension's own entry is enough.
	Capability string
	// Cacheable puts the SEP-2549 cache hints (ttlMs, cacheScope) on 2026-07-28 results, as on
	// the list methods of core.
	Cacheable bool
}

// ResourceSource serves the resources under one URI scheme, beside the server's own:
// resources/read of a URI of the scheme goes to Read, and resources/list lists Resources after
// the server's own resources. An extension that changes what it serves calls
// Server.NotifyResourcesListChanged. Options.Visibility and the request's filters
// (WithVisibility) decide about its resources in both, as about the server's own; the Visible
// field of the resources it lists is not consulted (a source that scopes its entries per caller
// does so itself, from the request's context).
type ResourceSource interface {
	// Scheme is the URI scheme served ("skill" for skill://...).
	Scheme() string
	// Resources returns the entries resources/list shows, in order.
	Resources() []Resource
	// Read serves resources/read of a URI of the scheme; for one it does not hold it returns
	// ResourceNotFound(uri).
	Read(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error)
}

// ListenMember is an extension's member of the subscriptions/listen filter: an array of ids
// (the tasks extension's taskIds) naming what the stream receives of the extension's
// notifications. The extension publishes them with Server.Publish, as a Change whose Method is
// Method, Key the id it concerns and Params the notification's params.
type ListenMember struct {
	// Name is the filter member ("taskIds").
	Name string
	// Method is the notification method of the changes the ids select ("notifications/tasks").
	Method string
	// Admit returns the requested ids the request may listen to (the others are left out of the
	// acknowledged filter, as if they did not exist), or the error refusing the whole request.
	// It runs on the listen request, with its context and 2026-07-28 envelope.
	Admit func(ctx context.Context, env *Envelope, ids []string) ([]string, error)
}

// extension is a bound extension as the server keeps it.
type extension struct {
	spec ExtensionSpec
}

func (x *extension) name() string {
	if x.spec.Name != "" {
		return x.spec.Name
	}
	return x.spec.ID
}

// offered reports whether the server offers the extension, from its derived capabilities.
func (x *extension) offered() bool { return x.spec.Offered == nil || x.spec.Offered() }

// extMethod is a method an extension serves.
type extMethod struct {
	ext  *extension
	spec ExtensionMethod
}

// bindExtensions binds Options.Extensions: it panics, naming it, on an extension without an id,
// an id declared twice, and a method core serves or two extensions declare.
func (s *Server) bindExtensions() {
	for i, e := range s.opts.Extensions {
		if e == nil {
			panic(fmt.Sprintf("mcpkit: Options.Extensions[%d] is nil", i))
		}
		x := &extension{spec: e.Bind(s)}
		id := x.spec.ID
		if id == "" {
			panic(fmt.Sprintf("mcpkit: Options.Extensions[%d] (%T) declares no ID", i, e))
		}
		for _, y := range s.exts {
			if y.spec.ID == id {
				panic(fmt.Sprintf("mcpkit: Options.Extensions: extension %q is given twice", id))
			}
		}
		s.bindMethods(x)
		if src := x.spec.Resources; src != nil {
			if s.resourceSources == nil {
				s.resourceSources = map[string]ResourceSource{}
			}
			if _, dup := s.resourceSources[src.Scheme()]; dup || src.Scheme() == "" {
				panic(fmt.Sprintf("mcpkit: extension %q: the resource scheme %q is empty or served by another extension", id, src.Scheme()))
			}
			s.resourceSources[src.Scheme()] = src
		}
		if l := x.spec.Listen; l != nil && (l.Name == "" || l.Method == "" || l.Admit == nil) {
			panic(fmt.Sprintf("mcpkit: extension %q: ListenMember needs a Name, a Method and Admit", id))
		}
		if x.spec.Tools != nil {
			s.toolHooks = append(s.toolHooks, x.spec.Tools)
		}
		if x.spec.CallTool != nil {
			s.callHooks = append(s.callHooks, x.spec.CallTool)
		}
		s.exts = append(s.exts, x)
	}
}

func (s *Server) bindMethods(x *extension) {
	for _, m := range x.spec.Methods {
		if _, core := builtinMethods[m.Method]; core || m.Method == "" || strings.HasPrefix(m.Method, "notifications/") {
			panic(fmt.Sprintf("mcpkit: extension %q: method %q is served by core or is not a request method", x.spec.ID, m.Method))
		}
		if m.Handle == nil {
			panic(fmt.Sprintf("mcpkit: extension %q: method %q has no handler", x.spec.ID, m.Method))
		}
		if prev, dup := s.extMethods[m.Method]; dup {
			panic(fmt.Sprintf("mcpkit: extension %q: method %q is served by extension %q already", x.spec.ID, m.Method, prev.ext.spec.ID))
		}
		if s.extMethods == nil {
			s.extMethods = map[string]*extMethod{}
		}
		s.extMethods[m.Method] = &extMethod{ext: x, spec: m}
	}
}

// addExtensionCapabilities adds the entries of the offered extensions to derived capabilities.
func (s *Server) addExtensionCapabilities(caps *ServerCapabilities) {
	for _, x := range s.exts {
		if !x.offered() {
			continue
		}
		if caps.Extensions == nil {
			caps.Extensions = map[string]any{}
		}
		settings := maps.Clone(x.spec.Settings)
		if settings == nil {
			settings = map[string]any{}
		}
		caps.Extensions[x.spec.ID] = settings
	}
}

// extensionSupported reports whether the server offers the extension x.
func (s *Server) extensionSupported(x *extension) bool {
	if s.opts.Capabilities != nil {
		_, ok := s.opts.Capabilities.Extensions[x.spec.ID]
		return ok
	}
	return x.offered()
}

// legacyCapabilities are the capabilities an initialize result announces: without the
// extensions of the 2026-07-28 lifecycle only.
func (s *Server) legacyCapabilities(caps ServerCapabilities) ServerCapabilities {
	strip := false
	for _, x := range s.exts {
		if _, ok := caps.Extensions[x.spec.ID]; ok && x.spec.ModernOnly {
			strip = true
		}
	}
	if !strip {
		return caps
	}
	ext := make(map[string]any, len(caps.Extensions))
	for k, v := range caps.Extensions {
		ext[k] = v
	}
	for _, x := range s.exts {
		if x.spec.ModernOnly {
			delete(ext, x.spec.ID)
		}
	}
	caps.Extensions = nil
	if len(ext) > 0 {
		caps.Extensions = ext
	}
	return caps
}

// cacheable reports whether results of method carry cache hints on the 2026-07-28 lifecycle.
func (s *Server) cacheable(method string) bool {
	if cacheableMethods[method] {
		return true
	}
	m := s.extMethods[method]
	return m != nil && m.spec.Cacheable
}

// LogError logs err at error level on the server's logger (Options.Logger), as core logs what a
// client is never told in full. Extensions log their internal failures this way.
func (s *Server) LogError(err error) { s.logError(err) }

// WireError returns the error a client sees for err: a *Error (also wrapped) as it is, anything
// wrapping ErrUnavailable UnavailableError (503 on HTTP), anything else -32603 with detail as
// data (never the error's own text).
func WireError(err error, detail string) *jsonrpc.Error { return asWireError(err, detail) }
