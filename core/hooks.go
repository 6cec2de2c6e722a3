package core

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/corehook"
)

// kit is core's side of the kit's transport API: the entry points a server author never calls
// (driving sessions, the codec, the shared-state plumbing, subscriptions/listen outside dispatch,
// the observer's plumbing). internal/transport declares them as its API interface and documents
// them; kit reaches them to the kit's own packages through internal/corehook, so that they are
// not part of core's exported surface.
type kit struct{}

func init() { corehook.Core = kit{} }

func (kit) SetOut(ss *Session, out sender)                           { ss.setOut(out) }
func (kit) EndInput(ss *Session)                                     { ss.closeInput() }
func (kit) Run(c *Call) *Response                                    { return c.execute() }
func (kit) RefusedResponse(id jsonrpc.ID, err error) *Response       { return refusedResponse(id, err) }
func (kit) Send(c *Call, ctx context.Context, msg []byte) error      { return c.sendWith(ctx, msg) }
func (kit) SetHooks(ss *Session, h sessionHooks)                     { ss.setHooks(h) }
func (kit) State(ss *Session) SessionState                           { return ss.sharedState() }
func (kit) Restore(ss *Session, st SessionState)                     { ss.restore(st) }
func (kit) Deliver(ss *Session, msg *jsonrpc.Message) bool           { return ss.deliverForwarded(msg) }
func (kit) Implementation(s *Server) Implementation                  { return s.impl }
func (kit) Observer(s *Server) Observer                              { return s.opts.Observer }
func (kit) EncodeResponse(id jsonrpc.ID, result []byte) []byte       { return encodeResponse(id, result) }
func (kit) EncodeError(id jsonrpc.ID, e *jsonrpc.Error) []byte       { return encodeError(id, e) }
func (kit) EncodeMessage(m *jsonrpc.Message) []byte                  { return codec.EncodeMessage(m) }
func (kit) MetaValue(m *jsonrpc.Message, key string) json.RawMessage { return metaValue(m, key) }
func (kit) ClaimsModern(m *jsonrpc.Message) bool                     { return messageClaimsModern(m) }
func (kit) UnsupportedVersion(requested string) *jsonrpc.Error       { return unsupportedVersion(requested) }
func (kit) IDKey(id jsonrpc.ID) jsonrpc.ID                           { return idKey(id) }
func (kit) Unavailable(e *jsonrpc.Error) bool                        { return codec.Unavailable(e) }
func (kit) Observers(obs ...Observer) Observer                       { return combineObservers(obs...) }
func (kit) SetMessage(op *Operation, msg *jsonrpc.Message)           { op.setMessage(msg) }
func (kit) Release(op *Operation, end func())                        { op.settle(end) }
func (kit) ParseListenFilter(params []byte) (SubscriptionFilter, *jsonrpc.Error) {
	return parseListenFilter(params)
}

func (kit) NewSession(s *Server, id, principal string, out sender, ephemeral, modern, changeNotifications bool,
	tr Transport, obs Observer, listen listenServer, state *SessionState) *Session {
	return s.newSession(sessionOptions{ID: id, Principal: principal, Out: out, Ephemeral: ephemeral, Modern: modern,
		ChangeNotifications: changeNotifications, Transport: tr, Observer: obs, Listen: listen, State: state})
}

func (kit) Handle(ss *Session, ctx context.Context, msg *jsonrpc.Message, out sender) *Response {
	return ss.serveMessage(ctx, msg, out)
}

func (kit) Begin(ss *Session, ctx context.Context, msg *jsonrpc.Message, out sender) (*Call, error) {
	return ss.begin(ctx, msg, out)
}

func (kit) SendLocal(ss *Session, ctx context.Context, msg []byte) error {
	return ss.sendLocal(ctx, msg)
}

func (kit) ToolParamHeaders(s *Server, tool string) ([]paramHeader, bool) {
	return s.toolParamHeaders(tool)
}

func (kit) MatchResource(s *Server, uri string) (string, map[string]string, bool) {
	return s.matchResource(uri)
}

func (kit) HonorListen(s *Server, ctx context.Context, env *Envelope, f SubscriptionFilter) (SubscriptionFilter, error) {
	return s.honorListen(ctx, env, f)
}

func (kit) EncodeNotification(method string, params any) ([]byte, error) {
	return encodeNotification(method, params)
}

func (kit) EncodeRequest(id jsonrpc.ID, method string, params any) ([]byte, error) {
	return encodeRequest(id, method, params)
}

func (kit) WithOperation(ctx context.Context, op *Operation) context.Context {
	return withOperation(ctx, op)
}

func (kit) WithResource(ctx context.Context, uri string) context.Context {
	return withResource(ctx, uri)
}

func (kit) ResourceFrom(ctx context.Context) (string, bool) { return resourceFrom(ctx) }

func (kit) DecodeMessage(data []byte) (*jsonrpc.Message, error) {
	m, derr := codec.DecodeMessage(data)
	if derr != nil {
		return nil, derr
	}
	return m, nil
}

func (kit) DecodeOwned(data []byte) (*jsonrpc.Message, error) {
	m, derr := codec.DecodeOwned(data)
	if derr != nil {
		return nil, derr
	}
	return m, nil
}

func (kit) DecodeBatch(data []byte) ([]jsonrpc.BatchItem, error) {
	items, derr := codec.DecodeBatch(data)
	if derr != nil {
		return nil, derr
	}
	return items, nil
}

func (kit) ParseEnvelope(m *jsonrpc.Message) (*Envelope, error) {
	x := new(struct { // one allocation, as a call of an ephemeral 2026-07-28 session makes
		c  Call
		st envelopeStore
	})
	c := &x.c
	c.msg, c.store = m, &x.st
	env, e := c.parseEnvelope()
	if e != nil {
		return nil, e
	}
	return env, nil
}

func (kit) InFlight(ss *Session, id jsonrpc.ID) bool { return ss.inFlight(id) }

func (kit) EncodeResponseMessage(r *Response) []byte  { return r.encode() }
func (kit) Wants(f SubscriptionFilter, c Change) bool { return f.wants(c) }
func (kit) HandshakeVersions() []string               { return append([]string(nil), handshakeVersions...) }
func (kit) ModernVersions() []string                  { return supportedModern() }
func (kit) NewLocalBroadcaster() Broadcaster          { return newLocalBroadcaster() }
func (kit) IsInFlight(err error) bool                 { return errors.Is(err, errInFlight) }
