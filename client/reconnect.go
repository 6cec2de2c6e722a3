package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Reconnect replaces the legacy HTTP session with a new one: the current session is deleted (if
// the server still has it), a new initialize is sent, and the client's resource subscriptions
// (Subscribe, and the resources of open Listen streams) and logging level are restored on the new
// session. The client does this by itself when the server reports the session expired, unless
// Options.DisableReconnect is set. The new session must speak the protocol version of the old
// one. Only a legacy session over HTTP can be replaced: other transports and the 2026-07-28
// lifecycle answer ErrUnsupported.
func (c *Client) Reconnect(ctx context.Context) error {
	r, err := c.restartable()
	if err != nil {
		return err
	}
	old := c.link.sessionID()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_ = r.endSession(dctx) // the old session may be gone already
	cancel()
	return c.reconnect(ctx, old)
}

func (c *Client) restartable() (restarter, error) {
	r, ok := c.link.(restarter)
	if !ok || c.modern {
		return nil, fmt.Errorf("%w: reconnecting (only a legacy session over HTTP can be replaced)", ErrUnsupported)
	}
	return r, nil
}

// reconnect starts a new session in place of old, once: callers that met the same expiry wait
// for the first and then use its session. Options.OnReconnect runs after, outside any lock, so it
// may call the client.
func (c *Client) reconnect(ctx context.Context, old string) error {
	r, err := c.restartable()
	if err != nil {
		return err
	}
	replaced, err := c.replace(ctx, r, old)
	if err == nil && replaced && c.opts.OnReconnect != nil {
		c.opts.OnReconnect(ctx, old, c.link.sessionID())
	}
	return err
}

// replace runs the new handshake and restores the client's state, holding back every other
// message meanwhile. It reports false when another caller had replaced old already.
func (c *Client) replace(ctx context.Context, r restarter, old string) (bool, error) {
	c.recoverMu.Lock()
	defer c.recoverMu.Unlock()
	if c.link.sessionID() != old {
		return false, nil
	}
	if !r.restart() {
		return false, ErrClosed
	}
	defer r.settled()
	res, err := c.handshake(ctx)
	if err != nil {
		return false, fmt.Errorf("mcpkit/client: starting a new session: %w", err)
	}
	if res.ProtocolVersion != c.version {
		_ = r.endSession(ctx)
		return false, fmt.Errorf("mcpkit/client: starting a new session: the server chose protocol version %s, the session it replaces had %s", res.ProtocolVersion, c.version)
	}
	if err := c.opened(ctx, res.ProtocolVersion); err != nil {
		return false, fmt.Errorf("mcpkit/client: starting a new session: %w", err)
	}
	c.restore(ctx)
	return true, nil
}

// restore repeats on a new session what the old one was told: the logging level and the
// resource subscriptions. Listen streams whose resource cannot be subscribed again end with the
// error.
func (c *Client) restore(ctx context.Context) {
	internal := &callOpts{noRecover: true}
	c.mu.Lock()
	level := c.logLevel
	uris := make([]string, 0, len(c.uris)+len(c.explicit))
	for u := range c.uris {
		uris = append(uris, u)
	}
	for u := range c.explicit {
		if c.uris[u] == 0 {
			uris = append(uris, u)
		}
	}
	c.mu.Unlock()
	if level != "" {
		_ = c.call(ctx, "logging/setLevel", map[string]any{"level": level}, nil, internal)
	}
	slices.Sort(uris)
	for _, u := range uris {
		if err := c.call(ctx, "resources/subscribe", map[string]any{"uri": u}, nil, internal); err != nil {
			c.endListens(func(s *Subscription) bool { return slices.Contains(s.Honored.ResourceSubscriptions, u) },
				fmt.Errorf("mcpkit/client: resubscribing to %s on the new session: %w", u, err))
		}
	}
}

// recoverCall handles a call that failed because the session expired: a new session is started
// and the call repeated when that is safe.
func (c *Client) recoverCall(ctx context.Context, method string, params map[string]any, res any, o *callOpts, err error) error {
	var exp *expiredError
	if c.opts.DisableReconnect || !errors.As(err, &exp) {
		return err
	}
	if rerr := c.reconnect(ctx, exp.session); rerr != nil {
		return fmt.Errorf("%w (and %w)", err, rerr)
	}
	if !repeatable(method, params, exp.ran) {
		return fmt.Errorf("%w (a new session was started; %s was not repeated: it may have run, or it continues a list of the old session)", err, method)
	}
	return c.rounds(ctx, method, params, res, o)
}

// repeatable reports whether a request that met an expired session may be sent again on a new
// one: any request the server refused (it never ran), except a list continued from a cursor of
// the old session; once the request had run, only requests that change nothing.
func repeatable(method string, params map[string]any, ran bool) bool {
	if _, ok := params["cursor"]; ok {
		return false
	}
	if !ran {
		return true
	}
	switch method {
	case "ping", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
		"resources/read", "prompts/get", "completion/complete", "logging/setLevel",
		"resources/subscribe", "resources/unsubscribe":
		return true
	}
	return false
}

// streamEnded is told by the link that the standalone stream closed for good. When the session
// expired and legacy Listen streams are open, a new session is started for them at once (they
// would wait for the next call otherwise); failing that, or for any other cause, they end with
// the error.
func (c *Client) streamEnded(err error) {
	var exp *expiredError
	c.mu.Lock()
	if c.closed || !c.hasLegacyListens() {
		c.mu.Unlock()
		return
	}
	if c.opts.DisableReconnect || !errors.As(err, &exp) {
		c.mu.Unlock()
		c.endListens(func(s *Subscription) bool { return s.legacy }, err)
		return
	}
	c.handlers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.handlers.Done()
		ctx, cancel := c.baseCtx, context.CancelFunc(func() {})
		if c.timeout > 0 {
			ctx, cancel = context.WithTimeout(c.baseCtx, c.timeout)
		}
		defer cancel()
		if rerr := c.reconnect(ctx, exp.session); rerr != nil {
			c.endListens(func(s *Subscription) bool { return s.legacy }, fmt.Errorf("%w (and %w)", err, rerr))
		}
	}()
}

// hasLegacyListens reports whether a legacy Listen is open; c.mu is held.
func (c *Client) hasLegacyListens() bool {
	for _, s := range c.listens {
		if s.legacy {
			return true
		}
	}
	return false
}

// endListens ends the open listens that match with err.
func (c *Client) endListens(match func(*Subscription) bool, err error) {
	c.mu.Lock()
	var subs []*Subscription
	for _, s := range c.listens {
		if match(s) {
			subs = append(subs, s)
		}
	}
	c.mu.Unlock()
	for _, s := range subs {
		s.finish(err)
	}
}
