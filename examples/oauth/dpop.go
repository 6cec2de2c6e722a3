package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/auth"
)

// trustedJWKSPath is where the example publishes the key of the extra issuer given with
// -trust-issuer and -trust-jwk, for its JWT verifier to fetch.
const trustedJWKSPath = "/trusted-issuer/jwks"

// trustedIssuer serves the public part of jwk (a JSON JWK, private or public) as a JWKS on mux
// and returns a verifier of that issuer's tokens for resource.
func trustedIssuer(mux *http.ServeMux, base, issuer, jwk, resource string) (auth.Verifier, error) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON([]byte(jwk)); err != nil {
		return nil, fmt.Errorf("-trust-jwk: %w", err)
	}
	pub := k.Public()
	if !pub.Valid() {
		return nil, errors.New("-trust-jwk: not an asymmetric key")
	}
	pub.Use = "sig"
	body, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	if err != nil {
		return nil, err
	}
	mux.HandleFunc("GET "+trustedJWKSPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	return auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: resource, JWKSURL: base + trustedJWKSPath}), nil
}

// anyOf accepts a token that one of vs accepts, asking them in order. When all refuse it,
// an unavailable verifier's error wins (503 rather than blaming the token), else the first.
func anyOf(vs ...auth.Verifier) auth.Verifier {
	return auth.VerifierFunc(func(ctx context.Context, token string) (*auth.TokenInfo, error) {
		var first error
		for _, v := range vs {
			info, err := v.Verify(ctx, token)
			if err == nil {
				return info, nil
			}
			if first == nil || errors.Is(err, auth.ErrUnavailable) {
				first = err
			}
		}
		return nil, first
	})
}
