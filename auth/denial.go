package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/middleware"
)

// HintOAuthScope is the type of the remediation hint ScopeDenial adds: the SEP-2643 draft
// defines none for OAuth scopes (on HTTP it leaves them to the WWW-Authenticate challenge), so
// the kit names its own, which clients that do not know it ignore, as the draft requires. Its
// members: "scope" (the space-separated scopes to request), "resource_metadata" (the protected
// resource metadata URL, which lists the authorization servers) and "authorization_servers"
// (when known).
const HintOAuthScope = "oauth_scope"

// ScopeDenial returns the SEP-2643 (draft) denial envelope of a request refused for want of
// scopes: reason insufficient_authorization, remediation available, a fresh opaque
// authorizationContextId, and one HintOAuthScope hint naming the scopes to request, the
// metadata URL (empty leaves it out) and the authorization servers given. On stdio, hand it
// to core.DeniedResult; on HTTP, ScopeOptions.StructuredDenials and
// BearerOptions.StructuredDenials add it to their 403 answers.
func ScopeDenial(scopes []string, resourceMetadataURL string, authorizationServers ...string) core.AuthorizationDenial {
	hint := map[string]any{"type": HintOAuthScope, "scope": strings.Join(scopes, " ")}
	if resourceMetadataURL != "" {
		hint["resource_metadata"] = resourceMetadataURL
	}
	if len(authorizationServers) > 0 {
		hint["authorization_servers"] = append([]string(nil), authorizationServers...)
	}
	return core.AuthorizationDenial{
		Reason:                 core.DenialInsufficientAuthorization,
		Remediation:            core.RemediationAvailable,
		AuthorizationContextID: contextID(),
		RemediationHints:       []map[string]any{hint},
	}
}

// contextID returns a fresh opaque correlation handle: it says nothing about the request.
func contextID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "authzctx_" + hex.EncodeToString(b[:])
}

// refuseScope answers 403 for want of need, with chal in WWW-Authenticate and a JSON-RPC -32600
// body echoing id; with structured, the error's data carries the denial envelope under
// _meta["io.modelcontextprotocol/authorization"].
func refuseScope(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, chal string, need []string, meta string, structured bool) {
	h := w.Header()
	h.Set("WWW-Authenticate", chal)
	h.Set("Cache-Control", "no-store")
	if !structured {
		middleware.Refuse(w, r, http.StatusForbidden, id, jsonrpc.CodeInvalidRequest, msgInsufficientScope)
		return
	}
	writeDenial(w, r, id, ScopeDenial(need, meta))
}

// writeDenial writes the 403 -32600 body with the envelope in error.data._meta.
func writeDenial(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, d core.AuthorizationDenial) {
	if ex := middleware.ExchangeFrom(r.Context()); ex != nil {
		ex.SetError(jsonrpc.CodeInvalidRequest, msgInsufficientScope)
	}
	middleware.WriteErrorData(w, http.StatusForbidden, id, jsonrpc.CodeInvalidRequest, msgInsufficientScope,
		map[string]any{"_meta": map[string]any{metakey.Authorization: d}})
}

type dpopKeyCtx struct{}

// DPoPThumbprintFrom returns the JWK thumbprint of the DPoP key the request's token is bound
// to and proved with (RequireBearer with DPoP on), and whether the request used DPoP at all.
func DPoPThumbprintFrom(ctx context.Context) (string, bool) {
	jkt, ok := ctx.Value(dpopKeyCtx{}).(string)
	return jkt, ok
}

// challengeScheme is the scheme of the request's credentials, for the challenges of later
// layers: DPoP for a DPoP request, else Bearer.
func challengeScheme(ctx context.Context) string {
	if _, ok := DPoPThumbprintFrom(ctx); ok {
		return "DPoP"
	}
	return "Bearer"
}
