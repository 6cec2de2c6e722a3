package core

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// RequestStateOptions configure the protection of requestState. The zero value seals it with a
// random key made for this process. A sealed state is bound to the request it was issued for
// (method, target, arguments, lifecycle), to the request's principal (WithPrincipal): a state
// issued to P opens only for P, one issued to nobody only for nobody; to the name of the server
// that sealed it (Implementation.Name), so servers sharing a key never accept each other's
// states; and, when an authentication layer names it (auth.BearerOptions.Resource), to the
// resource URI.
type RequestStateOptions struct {
	// Key is the 32-byte AES-256 key (NewServer panics on any other length, even with
	// Disable). Nil means a random key per process: replicas behind one load balancer must share
	// a key, or a retry landing on another replica is refused.
	Key []byte
	// OldKeys are earlier keys (32 bytes each) still accepted for opening a state, never for
	// sealing one: the key ring of a rotation. To rotate across replicas, first give every
	// replica the new key in OldKeys, then make it Key everywhere (moving the previous Key to
	// OldKeys), and drop the old key once TTL has passed. NewServer panics on a key of another
	// length. Nil accepts only Key.
	OldKeys [][]byte
	// TTL bounds how long an issued state can be used. Zero means 5 minutes; NewServer panics
	// on a negative TTL.
	TTL time.Duration
	// Disable sends the handler's state as it is, unprotected. Only for handlers that protect
	// their state themselves.
	Disable bool
}

// DefaultRequestStateTTL is the lifetime of a sealed requestState when RequestStateOptions.TTL is
// zero.
const DefaultRequestStateTTL = 5 * time.Minute

const sealPrefix = "v1."

type sealer struct {
	aead     cipher.AEAD
	old      []cipher.AEAD // OldKeys: tried, in order, when aead cannot open a state
	ttl      time.Duration
	disabled bool
	// now is the clock of expiry (time.Now; tests move it).
	now func() time.Time
}

func newSealer(o RequestStateOptions) (*sealer, error) {
	s := &sealer{ttl: o.TTL, disabled: o.Disable, now: time.Now}
	if o.Key != nil && len(o.Key) != 32 {
		return nil, fmt.Errorf("RequestState.Key must be 32 bytes, not %d", len(o.Key))
	}
	for i, k := range o.OldKeys {
		if len(k) != 32 {
			return nil, fmt.Errorf("RequestState.OldKeys[%d] must be 32 bytes, not %d", i, len(k))
		}
	}
	if s.ttl < 0 {
		return nil, errors.New("RequestState.TTL must not be negative")
	}
	if s.ttl == 0 {
		s.ttl = DefaultRequestStateTTL
	}
	if s.disabled {
		return s, nil
	}
	key := o.Key
	if key == nil {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	var err error
	if s.aead, err = newAEAD(key); err != nil {
		return nil, err
	}
	for _, k := range o.OldKeys {
		a, err := newAEAD(k)
		if err != nil {
			return nil, err
		}
		s.old = append(s.old, a)
	}
	return s, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// stateClaims is what a sealed requestState carries, besides the handler's state: what it was
// issued for, so it cannot be replayed elsewhere. Exp is in Unix milliseconds.
type stateClaims struct {
	V   int    `json:"v"`
	Exp int64  `json:"exp"`
	M   string `json:"m"`
	T   string `json:"t"`
	A   string `json:"a"`
	Aud string `json:"aud,omitzero"`
	// N is the name of the server that sealed the state; R the resource URI of the request
	// (withResource), when an authentication layer named one.
	N string `json:"n"`
	R string `json:"r,omitzero"`
	// E is the lifecycle the state was issued on: "modern" for a 2026-07-28 request, empty
	// for a legacy one. A state issued to a stateless request is refused on a session.
	E string `json:"e,omitzero"`
	S string `json:"s"`
}

// binding computes the claims that tie a state to this request: method, target (the name of a
// tool or prompt, the URI of a resource) and a digest of the normalized arguments (members
// sorted, floats in their RFC 8785 form, integers kept digit for digit), so that members in
// another order or floats spelled differently still match while integers beyond 2^53 never
// collide; the lifecycle (a state issued to a 2026-07-28 request is refused on a legacy
// session, where the server never issues one); the principal, the resource URI and the name of
// the server. ok is false when the params cannot be read:
// such a request matches no state.
func (c *Call) binding() (cl stateClaims, ok bool) {
	cl = stateClaims{V: 1, M: c.msg.Method}
	var p struct {
		Name      jsontext.Value `json:"name"`
		URI       jsontext.Value `json:"uri"`
		Arguments jsontext.Value `json:"arguments"`
	}
	if !rawObject(c.msg.Params) || unmarshal(c.msg.Params, &p) != nil {
		return cl, false
	}
	target := p.Name
	if c.msg.Method == "resources/read" {
		target = p.URI
	}
	if target.Kind() == '"' && unmarshal(target, &cl.T) != nil {
		return cl, false
	}
	args := jsontext.Value("{}")
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		args = p.Arguments.Clone()
	}
	// Members reordered, whitespace and string escapes normalized, floats in their RFC 8785
	// form; integers keep their exact digits, so ids above 2^53 never collide.
	if err := args.Format(jsontext.ReorderRawObjects(true), jsontext.CanonicalizeRawFloats(true)); err != nil {
		return cl, false
	}
	sum := sha256.Sum256(args)
	cl.A = hex.EncodeToString(sum[:])
	// The audience is the request's principal (WithPrincipal): a state issued to P opens only for
	// P, and one issued to nobody only for nobody.
	cl.Aud, _ = PrincipalFrom(c.ctx)
	cl.R, _ = resourceFrom(c.ctx)
	cl.N = c.session.server.impl.Name
	if c.modern != nil {
		cl.E = "modern"
	}
	return cl, true
}

func (s *sealer) seal(c *Call, state string) (string, error) {
	if s.disabled {
		return state, nil
	}
	cl, ok := c.binding()
	if !ok {
		return "", errors.New("the request's params cannot be bound")
	}
	cl.Exp = s.now().Add(s.ttl).UnixMilli()
	cl.S = state
	plain, err := marshal(cl)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(sealPrefix))
	return sealPrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

var errBadState = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid or expired requestState")

// open verifies a requestState and returns the handler's plaintext. Every failure is the same
// -32602 on the wire: which check failed is not the client's business.
func (s *sealer) open(c *Call, token string) (string, *jsonrpc.Error) {
	if s.disabled {
		return token, nil
	}
	b64, ok := strings.CutPrefix(token, sealPrefix)
	if !ok {
		return "", errBadState
	}
	// Strict: a token has exactly one spelling, so no character can change unnoticed.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return "", errBadState
	}
	nonce, sealed := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, sealed, []byte(sealPrefix))
	for _, a := range s.old {
		if err == nil {
			break
		}
		plain, err = a.Open(nil, nonce, sealed, []byte(sealPrefix))
	}
	if err != nil {
		return "", errBadState
	}
	var cl stateClaims
	if unmarshal(plain, &cl) != nil || cl.V != 1 || s.now().UnixMilli() > cl.Exp {
		return "", errBadState
	}
	want, ok := c.binding()
	if !ok || cl.M != want.M || cl.T != want.T || cl.A != want.A || cl.Aud != want.Aud || cl.E != want.E ||
		cl.N != want.N || cl.R != want.R {
		return "", errBadState
	}
	return cl.S, nil
}
