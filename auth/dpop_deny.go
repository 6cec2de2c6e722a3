package auth

import (
	"net/http"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/middleware"
)

// headerDPoPNonce carries a server nonce (RFC 9449 section 8.1).
const headerDPoPNonce = "DPoP-Nonce"

// Wire messages of the DPoP refusals (JSON-RPC error bodies).
const (
	msgInvalidProof = "Unauthorized: the DPoP proof is invalid"
	msgUseNonce     = "Unauthorized: the DPoP proof needs a fresh server nonce"
	msgTwoSchemes   = "Bad Request: send either a Bearer or a DPoP credential, not both"
)

// denyBearer answers a refusal of the Bearer scheme (or of a request with no credential):
// chal first when bearer tokens are accepted, then the DPoP challenge when DPoP is on.
func (l *bearerLayer) denyBearer(w http.ResponseWriter, r *http.Request, status int, chal, message string) {
	h := w.Header()
	h.Del("WWW-Authenticate")
	if l.dpop == nil || l.dpop.mode != DPoPRequired {
		h.Add("WWW-Authenticate", chal)
	}
	if l.dpop != nil && status == http.StatusUnauthorized {
		h.Add("WWW-Authenticate", l.dpopChallenge(nil))
	}
	l.finishDenial(w, r, status, message)
}

// denyDPoP answers a refusal of the DPoP scheme: its challenge first (with the error), then
// the bare Bearer one when bearer tokens are accepted too. A replay cache failure is 503.
func (l *bearerLayer) denyDPoP(w http.ResponseWriter, r *http.Request, p *dpopProblem) {
	if p.status == http.StatusServiceUnavailable {
		w.Header().Set("Cache-Control", "no-store")
		middleware.Refuse(w, r, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.CodeInternalError, msgVerifyUnavailable)
		return
	}
	h := w.Header()
	h.Del("WWW-Authenticate")
	h.Add("WWW-Authenticate", l.dpopChallenge(p))
	if l.dpop.mode == DPoPAccepted && p.status == http.StatusUnauthorized {
		h.Add("WWW-Authenticate", l.missing)
	}
	message := msgInvalidToken
	switch p.code {
	case errInvalidDPoPProof:
		message = msgInvalidProof
	case errUseDPoPNonce:
		message = msgUseNonce
	case errInsufficientScope:
		message = msgInsufficientScope
	case errInvalidRequest:
		message = msgTwoSchemes
	}
	l.finishDenial(w, r, p.status, message)
}

// dpopChallenge is the DPoP challenge: the error of p (nil for none), the algorithms, the
// metadata URL and the layer's scopes.
func (l *bearerLayer) dpopChallenge(p *dpopProblem) string {
	code, desc := "", ""
	if p != nil {
		code, desc = p.code, p.desc
	}
	return schemeChallenge("DPoP", "error", code, "error_description", desc, "algs", l.dpop.algNames,
		"resource_metadata", l.meta, "scope", l.scope)
}

// finishDenial writes the refusal: no-store, a fresh nonce on a 401 when nonces are required,
// and the JSON-RPC -32600 body.
func (l *bearerLayer) finishDenial(w http.ResponseWriter, r *http.Request, status int, message string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized && l.dpop != nil && l.dpop.nonces != nil {
		h.Set(headerDPoPNonce, l.dpop.nonces.issue(l.dpop.now()))
	}
	if status == http.StatusForbidden && l.opts.StructuredDenials {
		writeDenial(w, r, jsonrpc.ID{}, ScopeDenial(l.opts.Scopes, l.meta))
		return
	}
	middleware.Refuse(w, r, status, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, message)
}

// Advertise returns m with the DPoP members of the protected resource metadata set as o
// configures them: dpop_signing_alg_values_supported (Algorithms, or DefaultDPoPAlgorithms)
// when DPoP is on, and dpop_bound_access_tokens_required for DPoPRequired. For DPoPOff, m is
// returned as it is.
func (o DPoPOptions) Advertise(m Metadata) Metadata {
	if o.Mode != DPoPAccepted && o.Mode != DPoPRequired {
		return m
	}
	algs := o.Algorithms
	if algs == nil {
		algs = DefaultDPoPAlgorithms
	}
	m.DPoPSigningAlgValuesSupported = append([]string(nil), algs...)
	m.DPoPBoundAccessTokensRequired = o.Mode == DPoPRequired
	return m
}
