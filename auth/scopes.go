package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
)

// Operation is what a request asks the server to do, as the scope layer sees it once the decode
// layer parsed the message.
type Operation struct {
	// Method is the JSON-RPC method, for example "tools/call".
	Method string
	// Name is the tool of tools/call or the prompt of prompts/get.
	Name string
	// URI is the resource of resources/read and resources/subscribe.
	URI string
	// Template is the URI template a resources/read URI resolves to ("" for an exact resource
	// or an unknown URI), found exactly as dispatch finds it, and Vars its variables.
	Template string
	Vars     map[string]string
	// Params is the request's raw params. The bytes belong to the request: do not modify them.
	Params json.RawMessage
}

// Arguments decodes params.arguments (the arguments of a tool call or a prompt) into v. It
// parses the params only when called, so a rule that needs no arguments costs nothing.
func (op *Operation) Arguments(v any) error {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(op.Params, &p); err != nil {
		return err
	}
	if len(p.Arguments) == 0 {
		return errors.New("auth: the request has no arguments")
	}
	return json.Unmarshal(p.Arguments, v)
}

// ScopeOptions configure RequireScopes. The scopes an operation needs are the union, in this
// order, of Methods[method], the entry for its target (Tools, Prompts, Resources or Templates)
// and what Require returns.
type ScopeOptions struct {
	// ResourceMetadataURL is the absolute URL of the protected resource metadata, sent as
	// resource_metadata in every challenge. Required.
	ResourceMetadataURL string
	// Server resolves resources/read URIs to templates. Required when Templates is set.
	Server *core.Server
	// Methods maps JSON-RPC methods ("tools/list", "tools/call", "resources/subscribe", ...) to
	// scopes every call of the method needs. initialize, server/discover and ping never need
	// scopes: naming them panics.
	Methods map[string][]string
	// Tools maps tool names to the scopes a tools/call of that tool needs.
	Tools map[string][]string
	// Prompts maps prompt names to the scopes a prompts/get of that prompt needs.
	Prompts map[string][]string
	// Resources maps resource URIs to the scopes a resources/read (or resources/subscribe) of
	// that exact URI needs.
	Resources map[string][]string
	// Templates maps URI templates, as registered, to the scopes a resources/read (or
	// resources/subscribe) of a URI resolving to that template needs. Other methods naming a
	// prompt or resource (completion/complete, say) are covered by Methods.
	Templates map[string][]string
	// Require, when set, returns more scopes an operation needs, computed from the request:
	// its arguments (Operation.Arguments) or template variables. It runs for every request
	// except initialize, server/discover and ping, and must not return invalid scope tokens (the
	// request is then refused with 500).
	Require func(op *Operation) []string
	// StructuredDenials adds the SEP-2643 (draft) authorization denial envelope to the 403
	// answers: the JSON-RPC error's data is {"_meta": {"io.modelcontextprotocol/authorization":
	// ScopeDenial(...)}}, naming the scopes to request and the metadata URL. Off by default
	// until the SEP is final; the WWW-Authenticate challenge is sent either way.
	StructuredDenials bool
	// MaxRequestBytes is the body cap of the decode layer RequireScopes runs itself when no
	// decode layer ran before it. Zero means middleware.DefaultMaxRequestBytes; negative
	// panics.
	MaxRequestBytes int64
	// Hide derives what each caller sees from the scopes above, so they are stated once: a
	// tool, prompt, resource or template whose use needs a scope the request's token lacks
	// (Methods of tools/call, prompts/get or resources/read, with the entry's own Tools,
	// Prompts, Resources or Templates entry) is left out of the list methods, of
	// completion/complete and of listen streams' list changes (core.WithVisibility). Scopes only
	// Require knows are not consulted: a list cannot run it. A direct call of an entry hidden
	// this way still gets 403 with the step-up challenge naming its scopes rather than the
	// answer for an unknown name: the challenge is how a client learns what to ask for. The
	// zero value shows every entry to every caller.
	Hide bool
}

// scopeFree are the methods that never need scopes: the handshake and liveness checks a client
// makes before it can know what to ask for.
var scopeFree = []string{"initialize", "server/discover", "ping"}

// RequireScopes returns the layer that checks each request's token has every scope its
// operation needs. A request lacking one gets 403, a JSON-RPC -32600 body echoing the request
// id, and WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope the
// operation needs>", resource_metadata="..." in one challenge, so a client can step up with one
// authorization (SEP-2350). A request that needs scopes but carries no verified token (no
// RequireBearer in front) gets 401. initialize, server/discover, ping, notifications and client
// responses pass, and so do requests needing no scope.
//
// It reads the message of the decode layer (middleware.MessageFrom) and never parses the body
// again; mounted with no decode layer in front, it runs one itself (with MaxRequestBytes), and
// the endpoint's own decode layer then reuses that message. The same check serves both
// lifecycles: a legacy tools/call in a session and a 2026-07-28 request carry the same method
// and params. GET and DELETE requests carry no operation and pass. It panics on invalid options.
func RequireScopes(opts ScopeOptions) func(http.Handler) http.Handler {
	if _, err := checkURL("ScopeOptions.ResourceMetadataURL", opts.ResourceMetadataURL); err != nil {
		panic(err.Error())
	}
	for m, s := range opts.Methods {
		if slices.Contains(scopeFree, m) {
			panic("auth: ScopeOptions.Methods must not name " + m + ": it never needs scopes")
		}
		checkScopes("ScopeOptions.Methods["+m+"]", s)
	}
	for _, set := range []struct {
		name string
		m    map[string][]string
	}{{"Tools", opts.Tools}, {"Prompts", opts.Prompts}, {"Resources", opts.Resources}, {"Templates", opts.Templates}} {
		for k, s := range set.m {
			checkScopes("ScopeOptions."+set.name+"["+k+"]", s)
		}
	}
	if len(opts.Templates) > 0 && opts.Server == nil {
		panic("auth: ScopeOptions.Templates needs ScopeOptions.Server to resolve URIs")
	}
	if opts.MaxRequestBytes < 0 {
		panic("auth: ScopeOptions.MaxRequestBytes must not be negative")
	}
	p := &scopePolicy{opts: opts}
	if opts.Hide {
		p.visible = p.sees // one method value for every request
	}
	decode := middleware.Decode(middleware.DecodeOptions{MaxRequestBytes: opts.MaxRequestBytes})
	return func(next http.Handler) http.Handler {
		check := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, next) })
		decoded := decode(check)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			if _, ok := middleware.MessageFrom(r.Context()); ok {
				check.ServeHTTP(w, r)
				return
			}
			decoded.ServeHTTP(w, r)
		})
	}
}

type scopePolicy struct {
	opts    ScopeOptions
	visible core.Visibility // with Hide: what a token may see
}

func (p *scopePolicy) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if p.visible != nil {
		r = r.WithContext(core.WithVisibility(r.Context(), p.visible))
	}
	msg, ok := middleware.MessageFrom(r.Context())
	if !ok || !msg.IsRequest() || slices.Contains(scopeFree, msg.Method) {
		next.ServeHTTP(w, r)
		return
	}
	if !msg.Parsed {
		// A message some other layer built by hand: read its targets the decoder's way rather
		// than miss a tool or resource rule.
		m, derr := transport.Core.DecodeMessage(middleware.BodyFrom(r.Context()))
		if derr != nil || m.Method != msg.Method {
			middleware.Refuse(w, r, http.StatusInternalServerError, msg.ID, jsonrpc.CodeInternalError, "Internal error: the request could not be read for the scope check")
			return
		}
		msg = m
	}
	need, err := p.required(msg)
	if err != nil {
		middleware.Refuse(w, r, http.StatusInternalServerError, msg.ID, jsonrpc.CodeInternalError, "Internal error: invalid scope policy")
		return
	}
	if len(need) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	meta := p.opts.ResourceMetadataURL
	info, ok := TokenInfoFrom(r.Context())
	if !ok {
		denyID(w, r, http.StatusUnauthorized, msg.ID, challenge("resource_metadata", meta, "scope", strings.Join(need, " ")), msgUnauthorized)
		return
	}
	for _, s := range need {
		if !info.HasScope(s) {
			refuseScope(w, r, msg.ID, schemeChallenge(challengeScheme(r.Context()),
				"error", errInsufficientScope,
				"scope", strings.Join(need, " "),
				"resource_metadata", meta,
				"error_description", descInsufficientScope), need, meta, p.opts.StructuredDenials)
			return
		}
	}
	next.ServeHTTP(w, r)
}

var errBadScope = errors.New("auth: ScopeOptions.Require returned an invalid scope")

// required returns every scope the message's operation needs, without duplicates, in policy
// order.
func (p *scopePolicy) required(msg *jsonrpc.Message) ([]string, error) {
	var need []string
	add := func(scopes []string) {
		for _, s := range scopes {
			if !slices.Contains(need, s) {
				need = append(need, s)
			}
		}
	}
	add(p.opts.Methods[msg.Method])
	op := Operation{Method: msg.Method, Params: json.RawMessage(msg.Params)}
	switch msg.Method {
	case "tools/call":
		op.Name = msg.Name
		add(p.opts.Tools[op.Name])
	case "prompts/get":
		op.Name = msg.Name
		add(p.opts.Prompts[op.Name])
	case "resources/read", "resources/subscribe":
		op.URI = msg.URI
		if s, ok := p.opts.Resources[op.URI]; ok {
			add(s)
		}
		if p.opts.Server != nil {
			tpl, vars, ok := transport.Core.MatchResource(p.opts.Server, op.URI)
			if ok && tpl != "" {
				op.Template, op.Vars = tpl, vars
				add(p.opts.Templates[tpl])
			}
		}
	}
	if p.opts.Require != nil {
		more := p.opts.Require(&op)
		for _, s := range more {
			if !validScope(s) {
				return nil, errBadScope
			}
		}
		add(more)
	}
	return need, nil
}

// sees is the Visibility of Hide: whether the request's token holds every scope using the entry
// needs.
func (p *scopePolicy) sees(ctx context.Context, v *core.View) bool {
	var method string
	var own []string
	switch {
	case v.Tool != nil:
		method, own = "tools/call", p.opts.Tools[v.Tool.Name]
	case v.Prompt != nil:
		method, own = "prompts/get", p.opts.Prompts[v.Prompt.Name]
	case v.Resource != nil:
		method, own = "resources/read", p.opts.Resources[v.Resource.URI]
	case v.Template != nil:
		method, own = "resources/read", p.opts.Templates[v.Template.URITemplate]
	}
	general := p.opts.Methods[method]
	if len(own) == 0 && len(general) == 0 {
		return true
	}
	info, ok := TokenInfoFrom(ctx)
	if !ok {
		return false
	}
	for _, set := range [2][]string{general, own} {
		for _, s := range set {
			if !info.HasScope(s) {
				return false
			}
		}
	}
	return true
}
