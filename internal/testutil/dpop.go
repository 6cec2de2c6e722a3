package testutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// DPoPKey is a client's P-256 DPoP key for tests: it makes proofs (RFC 9449 section 4.2) that
// a test may bend in any way (headers and claims edited before signing) and names the
// thumbprint a bound token carries as cnf.jkt.
type DPoPKey struct {
	Key *ecdsa.PrivateKey
	// JKT is the RFC 7638 SHA-256 thumbprint of the public key, base64url.
	JKT string
}

// NewDPoPKey returns a fresh key.
func NewDPoPKey(t testing.TB) *DPoPKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := (&jose.JSONWebKey{Key: &k.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &DPoPKey{Key: k, JKT: base64.RawURLEncoding.EncodeToString(tp)}
}

// PublicJWK returns the public key as a JWK object.
func (k *DPoPKey) PublicJWK() map[string]any { return jwkMap(k.Key, false) }

// PrivateJWK returns the key with its private part ("d") as a JWK object.
func (k *DPoPKey) PrivateJWK() map[string]any { return jwkMap(k.Key, true) }

func jwkMap(k *ecdsa.PrivateKey, private bool) map[string]any {
	enc := base64.RawURLEncoding
	pub, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		panic(err)
	}
	m := map[string]any{"kty": "EC", "crv": "P-256", "x": enc.EncodeToString(pub[1:33]), "y": enc.EncodeToString(pub[33:])}
	if private {
		d, err := k.Bytes()
		if err != nil {
			panic(err)
		}
		m["d"] = enc.EncodeToString(d)
	}
	return m
}

// ProofParts are the header and claims of a proof before it is signed; a test edits them.
type ProofParts struct {
	Header, Claims map[string]any
}

// Proof returns a valid ES256 proof for method and htu at now, with ath for token (none when
// token is "") and a fresh jti; edit, when set, changes the parts before signing.
func (k *DPoPKey) Proof(t testing.TB, method, htu, token string, edit func(*ProofParts)) string {
	t.Helper()
	p := &ProofParts{
		Header: map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": k.PublicJWK()},
		Claims: map[string]any{"jti": randomToken(), "htm": method, "htu": htu, "iat": time.Now().Unix()},
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		p.Claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if edit != nil {
		edit(p)
	}
	return k.Sign(t, p)
}

// Sign signs the parts with ES256 (whatever alg the header names) and returns the compact JWS.
func (k *DPoPKey) Sign(t testing.TB, p *ProofParts) string {
	t.Helper()
	return rawJWT(t, p.Header, p.Claims, func(in []byte) []byte {
		sum := sha256.Sum256(in)
		r, s, err := ecdsa.Sign(rand.Reader, k.Key, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	})
}

// BoundClaims returns claims with cnf.jkt set to the key's thumbprint.
func (k *DPoPKey) BoundClaims(claims map[string]any) map[string]any {
	c := maps.Clone(claims)
	c["cnf"] = map[string]any{"jkt": k.JKT}
	return c
}

// MarshalJWK returns the JSON of a JWK object.
func MarshalJWK(t testing.TB, jwk map[string]any) string {
	t.Helper()
	b, err := json.Marshal(jwk)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
