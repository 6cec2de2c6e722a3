package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// dpopKey signs DPoP proofs (RFC 9449).
type dpopKey struct {
	signer jose.Signer
	alg    string
}

func newDPoPKey(k crypto.Signer) (*dpopKey, error) {
	if k == nil {
		var err error
		if k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, err
		}
	}
	alg, err := algorithmOf(k)
	if err != nil {
		return nil, err
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return nil, err
	}
	return &dpopKey{signer: s, alg: string(alg)}, nil
}

// algorithmOf is the JWS algorithm for a key.
func algorithmOf(k crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch p := k.Public().(type) {
	case *ecdsa.PublicKey:
		switch p.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", errors.New("unsupported key type (want ECDSA, RSA or Ed25519)")
}

// proof is a fresh proof for a request: htm, htu (no query or fragment), iat, a new jti, the
// server's nonce when it gave one, and ath when an access token is presented.
func (k *dpopKey) proof(method string, u *url.URL, nonce, accessToken string, now time.Time) (string, error) {
	claims := map[string]any{
		"jti": randomString(16),
		"htm": method,
		"htu": canonical(u),
		"iat": now.Unix(),
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return jwt.Signed(k.signer).Claims(claims).Serialize()
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// noteNonce remembers the DPoP-Nonce a server sent.
func (t *Transport) noteNonce(u *url.URL, h http.Header) {
	if n := h.Get("DPoP-Nonce"); n != "" {
		t.mu.Lock()
		t.nonces[origin(u)] = n
		t.mu.Unlock()
	}
}

func (t *Transport) nonce(u *url.URL) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nonces[origin(u)]
}

// clientAssertion is a private_key_jwt client assertion (RFC 7523 section 2.2): iss and sub the
// client, aud the authorization server's issuer, valid for five minutes.
func clientAssertion(k crypto.Signer, kid, clientID, audience string, now time.Time) (string, error) {
	alg, err := algorithmOf(k)
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, opts)
	if err != nil {
		return "", err
	}
	return jwt.Signed(s).Claims(map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
		"jti": randomString(16),
	}).Serialize()
}
