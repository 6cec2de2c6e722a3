package core

import "github.com/mcpkit/mcpkit/internal/metakey"

// Values of AuthorizationDenial (SEP-2643 draft).
const (
	// DenialInsufficientAuthorization is the one Reason the draft defines.
	DenialInsufficientAuthorization = "insufficient_authorization"
	// RemediationAvailable: a remedy exists and the client may pursue it.
	RemediationAvailable = "available"
	// RemediationUnavailable: no remedy exists; the client must not retry unchanged nor
	// reauthorize.
	RemediationUnavailable = "unavailable"
	// RemediationUndisclosed: a remedy may exist and the server does not describe it.
	RemediationUndisclosed = "undisclosed"
)

// AuthorizationDenial is the authorization denial envelope of SEP-2643 (draft), carried under
// _meta["io.modelcontextprotocol/authorization"] of the result (or error) that refuses a
// request on authorization grounds, the same on every transport: why (Reason), whether there is a way forward
// (Remediation) and, when there is, hints saying what would remedy it. The zero value is not a
// valid envelope: Reason and Remediation are required.
type AuthorizationDenial struct {
	// Reason classifies the denial: DenialInsufficientAuthorization.
	Reason string `json:"reason"`
	// Remediation is RemediationAvailable, RemediationUnavailable or RemediationUndisclosed.
	Remediation string `json:"remediation"`
	// AuthorizationContextID is an opaque correlation handle the client echoes on its retry
	// (under _meta["io.modelcontextprotocol/authorization-context-id"]); never authorization
	// material. Empty sends none.
	AuthorizationContextID string `json:"authorizationContextId,omitempty"`
	// RemediationHints say what would remedy the denial; each has a "type" member naming the
	// mechanism, and clients ignore the types they do not know. Only with RemediationAvailable.
	RemediationHints []map[string]any `json:"remediationHints,omitempty"`
}

// DeniedResult is the tool result of a call refused on authorization grounds where no
// transport challenge can say so (stdio, or a denial HTTP cannot express): an isError result
// with text for the model and the denial envelope in
// _meta["io.modelcontextprotocol/authorization"], as the SEP-2643 draft puts it.
func DeniedResult(text string, d AuthorizationDenial) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(text)}, IsError: true, Meta: Meta{metakey.Authorization: d}}
}
