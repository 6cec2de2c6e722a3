package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// SamplingMessage is one message of a sampling request or result. Content holds one block, or
// several (2025-11-25 allows an array), in order.
type SamplingMessage struct {
	Role    string      `json:"role"`
	Content ContentList `json:"content"`
	Meta    Meta        `json:"_meta,omitzero"`
}

// ContentList is one or more content blocks. It encodes a single block as an object (the form
// every version understands) and several as an array, and decodes both.
type ContentList []Content

// MarshalJSON encodes one block as an object, several as an array.
func (l ContentList) MarshalJSON() ([]byte, error) {
	if len(l) == 1 {
		return marshal(l[0])
	}
	return marshal([]Content(l))
}

// UnmarshalJSON accepts an object or an array of objects.
func (l *ContentList) UnmarshalJSON(b []byte) error {
	if jsontext.Value(b).Kind() == '[' {
		var many []Content
		if err := unmarshal(b, &many); err != nil {
			return err
		}
		*l = many
		return nil
	}
	var one Content
	if err := unmarshal(b, &one); err != nil {
		return err
	}
	*l = ContentList{one}
	return nil
}

// ModelHint names a model family the server would like.
type ModelHint struct {
	Name string `json:"name,omitzero"`
}

// ModelPreferences guide the client's choice of model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitzero"`
	CostPriority         *float64    `json:"costPriority,omitzero"`
	SpeedPriority        *float64    `json:"speedPriority,omitzero"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitzero"`
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitzero"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitzero"`
	IncludeContext   string            `json:"includeContext,omitzero"`
	Temperature      *float64          `json:"temperature,omitzero"`
	StopSequences    []string          `json:"stopSequences,omitzero"`
	Metadata         any               `json:"metadata,omitzero"`
	// Tools and ToolChoice need the client's sampling.tools capability.
	Tools      []Tool `json:"tools,omitzero"`
	ToolChoice any    `json:"toolChoice,omitzero"`
	Meta       Meta   `json:"_meta,omitzero"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role       string      `json:"role"`
	Content    ContentList `json:"content"`
	Model      string      `json:"model"`
	StopReason string      `json:"stopReason,omitzero"`
	Meta       Meta        `json:"_meta,omitzero"`
}

// CreateMessage asks the client to sample a message from its language model (the client must
// have declared sampling, and sampling.tools when Tools or ToolChoice are set).
//
// Legacy lifecycle only: on a 2026-07-28 request it fails at once with a *NeedInputError. To
// serve both lifecycles, return NeedInput with SamplingInput and read Call.SamplingResponse on
// the retry.
func (c *Call) CreateMessage(ctx context.Context, p *CreateMessageParams, opts ...RequestOption) (*CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("mcpkit: CreateMessage needs params")
	}
	if err := c.requestsAllowed("sampling/createMessage"); err != nil {
		return nil, err
	}
	caps := c.ClientCapabilities()
	if !caps.Has("sampling") {
		return nil, &CapabilityError{Capability: "sampling", msg: "Client does not support sampling."}
	}
	if len(p.Tools) > 0 && !caps.Has("sampling", "tools") {
		return nil, &CapabilityError{Capability: "sampling.tools", msg: "Client does not support sampling with tools."}
	}
	if p.ToolChoice != nil && !caps.Has("sampling", "tools") {
		return nil, &CapabilityError{Capability: "sampling.tools", msg: "Client does not support sampling with tool_choice."}
	}
	var res CreateMessageResult
	if err := c.Request(ctx, "sampling/createMessage", p, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// ElicitParams are the params of elicitation/create. Mode "form" (the default) asks for
// structured input described by RequestedSchema; mode "url" sends the user to URL, identified
// by ElicitationID (made up when empty).
type ElicitParams struct {
	Mode    string `json:"mode,omitzero"`
	Message string `json:"message"`
	// Form is the typed form of the schema (FormOf, NewForm); when set it is sent as
	// requestedSchema, which must then be empty. Either way the schema must be a flat object of
	// primitive properties, and an accepted answer is checked against it (defaults applied).
	Form            *Form           `json:"-"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitzero"`
	URL             string          `json:"url,omitzero"`
	ElicitationID   string          `json:"elicitationId,omitzero"`
	Meta            Meta            `json:"_meta,omitzero"`
}

// ElicitResult is the client's answer: Action is "accept", "decline" or "cancel"; Content holds
// the form values on accept.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitzero"`
	Meta    Meta           `json:"_meta,omitzero"`
}

// formElicitation reports whether caps allow form elicitation: elicitation.form, or a bare
// elicitation declaration (which implies form) that does not name url alone.
func formElicitation(caps ClientCapabilities) bool {
	if caps.Has("elicitation", "form") {
		return true
	}
	if !caps.Has("elicitation") {
		return false
	}
	e, _ := caps["elicitation"].(map[string]any)
	return !caps.Has("elicitation", "url") || len(e) == 0
}

// Elicit asks the client for input from the user: a form (needs the elicitation capability) or
// a URL to visit (needs elicitation.url). A form's schema (p.Form, or p.RequestedSchema; none
// asks for a bare decision) must be a flat object of primitive properties, as elicitation
// allows: anything else fails before a request is sent. An accepted answer gets the schema's
// defaults for what the user left out and is validated against it: a wrong answer is an
// *ElicitAnswerError (its Result is the answer as received).
//
// Legacy lifecycle only: on a 2026-07-28 request it fails at once with a *NeedInputError. To
// serve both lifecycles, return NeedInput with ElicitInput and read Call.ElicitResponse on the
// retry.
func (c *Call) Elicit(ctx context.Context, p *ElicitParams, opts ...RequestOption) (*ElicitResult, error) {
	if p == nil {
		return nil, errors.New("mcpkit: Elicit needs params")
	}
	if err := c.requestsAllowed("elicitation/create"); err != nil {
		return nil, err
	}
	caps := c.ClientCapabilities()
	q := *p
	var form *Form
	switch q.Mode {
	case "", "form":
		if !formElicitation(caps) {
			return nil, &CapabilityError{Capability: "elicitation", msg: "Client does not support elicitation. The client must declare the `elicitation` capability during initialization."}
		}
		var err error
		if form, err = formFor(&q); err != nil {
			return nil, err
		}
		q.RequestedSchema, q.Form = form.raw, nil
		q.URL, q.ElicitationID = "", "" // members of the url mode only
		if c.ProtocolVersion() >= Version20251125 {
			q.Mode = "form"
		} else {
			q.Mode = "" // older clients know no modes
		}
	case "url":
		if !caps.Has("elicitation", "url") {
			return nil, &CapabilityError{Capability: "elicitation.url", msg: "Client does not support URL mode elicitation. The client must declare the `elicitation.url` capability during initialization."}
		}
		if q.ElicitationID == "" {
			q.ElicitationID = uuid.NewString()
		}
		q.RequestedSchema = nil // a member of the form mode only
	default:
		return nil, fmt.Errorf("mcpkit: unknown elicitation mode %q", q.Mode)
	}
	var res ElicitResult
	if err := c.Request(ctx, "elicitation/create", &q, &res, opts...); err != nil {
		return nil, err
	}
	if form != nil {
		if err := form.checkAnswer(&res); err != nil {
			return nil, err
		}
	}
	return &res, nil
}

// NotifyElicitationComplete tells the client that the URL elicitation with this id finished. It
// is part of the legacy elicitation flow: on an ephemeral session or one locked to the
// 2026-07-28 lifecycle (which dropped this notification) it fails with ErrRequestsRefused.
func (ss *Session) NotifyElicitationComplete(ctx context.Context, elicitationID string) error {
	if err := ss.requestsAllowed(); err != nil {
		return err
	}
	return ss.Notify(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": elicitationID})
}

// URLElicitationRequired returns the -32042 error that asks the client to complete URL
// elicitations before retrying (legacy lifecycle only; the 2026-07-28 lifecycle uses
// input_required results instead).
func URLElicitationRequired(elicitations ...ElicitParams) *jsonrpc.Error {
	list := make([]ElicitParams, len(elicitations)) // the caller's slice is left alone
	for i, e := range elicitations {
		e.Mode = "url"
		e.RequestedSchema = nil
		if e.ElicitationID == "" {
			e.ElicitationID = uuid.NewString()
		}
		list[i] = e
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeURLElicitationRequired, Message: "URL elicitation required", Data: map[string]any{"elicitations": list}}
}

// Root is a root the client exposes.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitzero"`
	Meta Meta   `json:"_meta,omitzero"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitzero"`
}

// ListRoots asks the client for its roots (it must have declared roots).
//
// Legacy lifecycle only: on a 2026-07-28 request it fails at once with a *NeedInputError. To
// serve both lifecycles, return NeedInput with RootsInput and read Call.RootsResponse on the
// retry.
func (c *Call) ListRoots(ctx context.Context, opts ...RequestOption) (*ListRootsResult, error) {
	if err := c.requestsAllowed("roots/list"); err != nil {
		return nil, err
	}
	if !c.ClientCapabilities().Has("roots") {
		return nil, &CapabilityError{Capability: "roots", msg: "Client does not support roots."}
	}
	var res ListRootsResult
	if err := c.Request(ctx, "roots/list", nil, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}
