package oauth

import (
	"context"
	"sync"
	"time"
)

// Token is what an authorization server granted for one resource.
type Token struct {
	// Issuer is the authorization server that granted it.
	Issuer string `json:"issuer"`
	// Resource is the protected resource (the MCP server's canonical URI) it is for.
	Resource string `json:"resource"`
	// AccessToken is the token sent to the MCP server.
	AccessToken string `json:"access_token"`
	// Type is the token type the server answered: "Bearer", or "DPoP" for a token bound to the
	// transport's DPoP key. Empty means Bearer.
	Type string `json:"token_type,omitempty"`
	// RefreshToken obtains a new access token without the person; empty when none was granted.
	RefreshToken string `json:"refresh_token,omitempty"`
	// Expiry is when the access token expires; zero when the server did not say.
	Expiry time.Time `json:"expiry,omitzero"`
	// Scopes are the scopes asked for (or granted, when the server said).
	Scopes []string `json:"scopes,omitempty"`
}

// ClientInfo is the client's registration at one authorization server.
type ClientInfo struct {
	// ID is the client_id.
	ID string `json:"client_id"`
	// Secret is the client_secret; empty for a public client.
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is the token_endpoint_auth_method the server registered, empty when it did
	// not say.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// RedirectURI is the redirect URI registered with it, empty when none was.
	RedirectURI string `json:"redirect_uri,omitempty"`
}

// Key names a token in a TokenStore: the authorization server and the resource.
type Key struct {
	// Issuer is the authorization server's issuer identifier.
	Issuer string
	// Resource is the protected resource's identifier, as its metadata publishes it.
	Resource string
}

// TokenStore keeps tokens and registrations, so that a program can persist them between runs.
// Its methods are called from any goroutine; they return (nil, nil) for what they do not hold.
type TokenStore interface {
	// Token returns the token for key.
	Token(ctx context.Context, key Key) (*Token, error)
	// SetToken stores t under key; a nil t deletes it.
	SetToken(ctx context.Context, key Key, t *Token) error
	// Client returns the registration at issuer.
	Client(ctx context.Context, issuer string) (*ClientInfo, error)
	// SetClient stores the registration at issuer; a nil c deletes it.
	SetClient(ctx context.Context, issuer string, c *ClientInfo) error
}

// MemoryStore is a TokenStore in memory, the default. Its zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	tokens  map[Key]Token
	clients map[string]ClientInfo
}

// Token returns a copy of the token for key.
func (s *MemoryStore) Token(_ context.Context, key Key) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[key]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SetToken stores a copy of t.
func (s *MemoryStore) SetToken(_ context.Context, key Key, t *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil {
		delete(s.tokens, key)
		return nil
	}
	if s.tokens == nil {
		s.tokens = map[Key]Token{}
	}
	s.tokens[key] = *t
	return nil
}

// Client returns a copy of the registration at issuer.
func (s *MemoryStore) Client(_ context.Context, issuer string) (*ClientInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[issuer]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// SetClient stores a copy of c.
func (s *MemoryStore) SetClient(_ context.Context, issuer string, c *ClientInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c == nil {
		delete(s.clients, issuer)
		return nil
	}
	if s.clients == nil {
		s.clients = map[string]ClientInfo{}
	}
	s.clients[issuer] = *c
	return nil
}
