package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/client"
)

// renew gets a token after failed (nil: none was held) was refused (with challenge ch) or is
// expiring (refused false): the token another request got meanwhile, a refresh, else, after a
// refusal, a new authorization.
func (t *Transport) renew(ctx context.Context, server string, failed *Token, ch *client.Challenge, refused bool) (*Token, error) {
	t.flow.Lock()
	defer t.flow.Unlock()
	cur, st := t.current(server)
	if cur != nil && (failed == nil || cur.AccessToken != failed.AccessToken) {
		return cur, nil // another request already renewed it
	}
	if !refused {
		if failed == nil || failed.RefreshToken == "" || st.meta == nil {
			return nil, errors.New("the token expires and cannot be refreshed")
		}
		return t.refresh(ctx, st, failed)
	}
	// Discovery first: a server that moved to another authorization server gets a
	// registration and a token there, never a refresh at the old one.
	d, err := t.discover(ctx, server, st, ch)
	if err != nil {
		return nil, err
	}
	if failed != nil && failed.RefreshToken != "" && failed.Issuer == d.key.Issuer {
		if nt, err := t.refresh(ctx, st, failed); err == nil {
			return nt, nil
		}
	}
	return t.grant(ctx, st, ch, d, nil, failed)
}

// stepUp authorizes again after 403 insufficient_scope, asking for the union of the scopes
// held and those the challenge requires, at most MaxStepUps times in a row.
func (t *Transport) stepUp(ctx context.Context, server string, st *resourceState, failed *Token, ch *client.Challenge) (*Token, error) {
	required := strings.Fields(ch.Params["scope"])
	t.flow.Lock()
	defer t.flow.Unlock()
	cur, _ := t.current(server)
	if cur != nil && failed != nil && cur.AccessToken != failed.AccessToken && covers(cur.Scopes, required) {
		return cur, nil
	}
	n := int(st.stepUps.Load())
	if t.maxSteps < 0 || n >= t.maxSteps {
		return nil, fmt.Errorf("the server requires scope %q and %d authorizations in a row did not satisfy it", strings.Join(required, " "), n)
	}
	if failed != nil && len(required) > 0 && covers(failed.Scopes, required) {
		return nil, fmt.Errorf("the server requires scope %q, which the token already holds: authorizing again would not help", strings.Join(required, " "))
	}
	st.stepUps.Add(1)
	var held []string
	if failed != nil {
		held = failed.Scopes
	}
	return t.authorize(ctx, server, st, ch, held, failed)
}

func covers(have, need []string) bool {
	for _, s := range need {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// authorize discovers the authorization server of server, makes sure the client is
// registered there and obtains a new token with the scopes the challenge (or the metadata)
// names, plus held.
func (t *Transport) authorize(ctx context.Context, server string, st *resourceState, ch *client.Challenge, held []string, failed *Token) (*Token, error) {
	d, err := t.discover(ctx, server, st, ch)
	if err != nil {
		return nil, err
	}
	return t.grant(ctx, st, ch, d, held, failed)
}

// discovered is what discovery found for a server.
type discovered struct {
	key       Key
	meta      *serverMetadata
	prmScopes []string
}

// discover finds the protected resource metadata and the authorization server of server from
// the challenge ch, and records them in st.
func (t *Transport) discover(ctx context.Context, server string, st *resourceState, ch *client.Challenge) (*discovered, error) {
	su, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	prm, err := t.discoverResource(ctx, su, ch.Params["resource_metadata"])
	if err != nil {
		return nil, err
	}
	d := &discovered{key: Key{Resource: server}}
	if prm == nil { // a 2025-03-26 server: the authorization server is at its origin
		d.key.Issuer = su.Scheme + "://" + su.Host
	} else {
		d.key.Issuer, d.key.Resource, d.prmScopes = prm.AuthorizationServers[0], prm.Resource, prm.ScopesSupported
	}
	if d.meta, err = t.discoverServer(ctx, d.key.Issuer, prm == nil); err != nil {
		return nil, err
	}
	t.mu.Lock()
	st.key, st.meta = d.key, d.meta
	t.mu.Unlock()
	return d, nil
}

// grant obtains a token from the authorization server d found, with the scopes the challenge
// (or the metadata) names plus held: a stored one when it fits, else a new grant.
func (t *Transport) grant(ctx context.Context, st *resourceState, ch *client.Challenge, d *discovered, held []string, failed *Token) (*Token, error) {
	key, meta, prmScopes := d.key, d.meta, d.prmScopes
	scopes := strings.Fields(ch.Params["scope"])
	if len(scopes) == 0 {
		if scopes = t.opts.Scopes; scopes == nil {
			scopes = prmScopes
		}
	}
	scopes = union(held, scopes)
	if slices.Contains(meta.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") && len(scopes) > 0 {
		scopes = append(scopes, "offline_access")
	}
	// A stored token for this server (an earlier run's) that is not the refused one.
	if stored, err := t.store.Token(ctx, key); err == nil && stored != nil && (failed == nil || stored.AccessToken != failed.AccessToken) &&
		!t.expiring(stored) && covers(stored.Scopes, scopes) {
		t.setToken(st, stored)
		return stored, nil
	}
	tok, err := t.obtain(ctx, meta, key, scopes)
	if err != nil {
		return nil, err
	}
	if err := t.store.SetToken(ctx, key, tok); err != nil {
		return nil, fmt.Errorf("storing the token: %w", err)
	}
	t.setToken(st, tok)
	return tok, nil
}

func (t *Transport) setToken(st *resourceState, tok *Token) {
	t.mu.Lock()
	st.token = tok
	t.mu.Unlock()
}
