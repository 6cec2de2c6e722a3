package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// InputAsker takes the server-to-client requests of a call Detach made (elicitation, sampling,
// roots: Elicit, CreateMessage, ListRoots, Request, and the requests of an InputRequiredError
// the handler returns to Resolve) in place of the client: the tasks extension turns them into
// input requests of the task. Implementations must be safe for concurrent use.
type InputAsker interface {
	// Asking reports whether it takes the call's requests now; until it does, they go the
	// usual way (on the 2026-07-28 lifecycle, a *NeedInputError).
	Asking() bool
	// AskInput hands the requests, by key, to whoever answers them and waits for the answers,
	// returned by the same keys. Core has checked already that the client declared the
	// capabilities the requests need.
	AskInput(ctx context.Context, reqs map[string]InputRequest) (map[string]json.RawMessage, error)
}

// maxDetachedInputRounds bounds how often Resolve runs a handler that keeps returning
// InputRequiredError.
const maxDetachedInputRounds = 64

// Detach returns a copy of the call for work that goes on after the request is answered (a
// task): the same request (method, params, envelope, _meta, retry responses and state), with ctx
// as its context (derive it from context.WithoutCancel(c.Context()) so that it outlives the
// request), a path that sends nothing (progress, log messages and notifications are dropped), and
// its server-to-client requests going to asker while asker.Asking(). end ends the detached call:
// its context is cancelled with the cause, and nothing it sends afterwards goes anywhere.
func (c *Call) Detach(ctx context.Context, asker InputAsker) (dc *Call, end context.CancelCauseFunc) {
	c.Meta("") // a message built by hand: read its _meta once, so the copy shares it
	dc = &Call{session: c.session, msg: c.msg,
		out: discardSender{}, handler: c.handler, modern: c.modern, inputResponses: c.inputResponses,
		requestState: c.requestState, hasState: c.hasState, asker: asker}
	dc.meta.Store(c.meta.Load())
	var cancel context.CancelCauseFunc
	dc.ctx, cancel = context.WithCancelCause(ctx)
	dc.ctx = context.WithValue(dc.ctx, callKey{}, dc)
	dc.cancelFn = cancel
	return dc, func(cause error) {
		dc.setOver()
		cancel(cause)
	}
}

// discardSender drops what a detached call sends.
type discardSender struct{}

func (discardSender) Send(context.Context, []byte) error { return nil }

// asking reports whether the call's server-to-client requests go to its InputAsker now.
func (c *Call) asking() bool { return c.asker != nil && c.asker.Asking() }

// Resolve settles the outcome (res, err) of a handler run on a call Detach made: while err is
// an InputRequiredError, its requests go to the call's InputAsker and run is called again with
// the answers (as a retry would bring them: InputResponses, RequestState), at most 64 times. It
// returns the first other outcome; an invalid InputRequiredError, one more round than the bound
// or a failed AskInput is an error (a *Error, a *CapabilityError or the AskInput error).
func (c *Call) Resolve(res any, err error, run func() (any, error)) (any, error) {
	for round := 0; ; round++ {
		var ir *InputRequiredError
		if !errors.As(err, &ir) {
			return res, err
		}
		if round == maxDetachedInputRounds || c.asker == nil {
			return nil, jsonrpc.InternalError(fmt.Sprintf("Handler still returned input_required after %d rounds", round))
		}
		if verr := ir.validate(); verr != nil {
			c.session.server.logError(fmt.Errorf("mcpkit: %s: invalid input_required result: %w", c.msg.Method, verr))
			return nil, jsonrpc.InternalError("Internal error handling " + c.msg.Method + " request")
		}
		responses, aerr := c.askInput(c.ctx, ir.Requests)
		if aerr != nil {
			return nil, aerr
		}
		c.inputResponses = responses
		c.requestState, c.hasState = ir.State, ir.State != ""
		res, err = run()
	}
}

// askInput hands requests to the call's InputAsker, once the client declared what they need.
func (c *Call) askInput(ctx context.Context, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	if miss := missingCapabilities(requiredCapabilities(reqs), c.ClientCapabilities()); miss != nil {
		b, _ := marshal(miss)
		return nil, &CapabilityError{msg: "the client did not declare the capabilities these input requests need: " + string(b)}
	}
	return c.asker.AskInput(ctx, reqs)
}

// askOne is a server-to-client request of a detached call, through its InputAsker.
func (c *Call) askOne(ctx context.Context, method string, params, result any) error {
	got, err := c.askInput(ctx, map[string]InputRequest{"": {Method: method, Params: params}})
	if err != nil {
		return err
	}
	return decodeAnswer(method, &jsonrpc.Message{Result: got[""]}, result)
}

// EncodeResult encodes a handler's result as the response to the call would carry it (nil as
// {}), with the members the 2026-07-28 lifecycle requires on a 2026-07-28 call: for work that
// keeps a result beyond the request (a task's result, read later through tasks/get).
func (c *Call) EncodeResult(result any) (json.RawMessage, error) {
	b := []byte("{}")
	if result != nil {
		var err error
		if b, err = marshal(result); err != nil {
			return nil, err
		}
	}
	if c.modern != nil {
		b = c.stampModern(b)
	}
	return json.RawMessage(b), nil
}

// ValidInputResponse reports whether v has the shape of a result of elicitation/create,
// sampling/createMessage or roots/list: what an input response (SEP-2322) may be.
func ValidInputResponse(v json.RawMessage) bool { return validInputResponse(v) }
