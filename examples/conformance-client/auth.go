package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/client/oauth"
)

// clientMetadataURL is the client ID metadata document URL the suite expects a client to
// present where the authorization server supports them.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// authContext is what MCP_CONFORMANCE_CONTEXT carries for the auth scenarios.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

// authTransport is the OAuth layer an auth/* scenario needs, configured from its context.
func authTransport(scenario, scenarioContext string) (*oauth.Transport, error) {
	var ac authContext
	if scenarioContext != "" {
		if err := json.Unmarshal([]byte(scenarioContext), &ac); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	opts := oauth.Options{
		Authorizer:        redirectFollower{},
		ClientID:          ac.ClientID,
		ClientSecret:      ac.ClientSecret,
		ClientIssuer:      ac.Issuer,
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "mcpkit-conformance-client",
	}
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		opts.ClientCredentials = true
		if ac.PrivateKeyPEM != "" {
			k, err := parseKey(ac.PrivateKeyPEM)
			if err != nil {
				return nil, err
			}
			opts.PrivateKey = k
		}
	case scenario == "auth/enterprise-managed-authorization":
		opts.Enterprise = &oauth.Enterprise{
			TokenEndpoint: ac.IDPTokenEndpoint,
			ClientID:      ac.IDPClientID,
			IDToken:       func(context.Context) (string, error) { return ac.IDPIDToken, nil },
		}
	case scenario == "auth/wif-jwt-bearer":
		opts.Assertion = func(context.Context) (string, error) { return ac.ValidJWT, nil }
	}
	return oauth.New(opts), nil
}

func parseKey(p string) (crypto.Signer, error) {
	b, _ := pem.Decode([]byte(p))
	if b == nil {
		return nil, errors.New("private_key_pem: no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private_key_pem: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("private_key_pem: not a signing key")
	}
	return s, nil
}

// redirectFollower plays the person: the suite's authorization endpoint approves at once, so
// the redirect it answers with is the authorization response.
type redirectFollower struct{}

func (redirectFollower) RedirectURL(context.Context) (string, error) {
	return "http://127.0.0.1:3333/callback", nil
}

func (redirectFollower) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return nil, fmt.Errorf("the authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
	}
	return loc.Query(), nil
}
