package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// resourceMetadata is the part of RFC 9728 protected resource metadata the client uses.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is the part of RFC 8414 (or OpenID Connect discovery) metadata the client uses.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
	DPoPSigningAlgValuesSupported     []string `json:"dpop_signing_alg_values_supported"`
	// legacy is set for the 2025-03-26 default endpoints of a server without metadata.
	legacy bool
}

// errNotFound is a metadata location that has no document.
var errNotFound = errors.New("no document")

// getJSON fetches url into v: bounded in size (and in time, by the client), JSON only.
func (t *Transport) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", metadataProtocolVersion)
	resp, err := t.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%w (HTTP %d)", errNotFound, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := readLimited(resp.Body, t.maxBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	return nil
}

// metadataProtocolVersion is sent on metadata requests, as the specification asks.
const metadataProtocolVersion = "2025-11-25"

func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("document larger than %d bytes", max)
	}
	return b, nil
}

// canonical is a URL without query and fragment, as a resource identifier is compared.
func canonical(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.RawFragment, c.ForceQuery = "", "", "", false
	return c.String()
}

// discoverResource finds the protected resource metadata of the server at server: the
// challenge's resource_metadata, else the path-based well-known location, else the root one
// (RFC 9728). It returns nil metadata (and no error) when the server publishes none, as a
// 2025-03-26 server does.
func (t *Transport) discoverResource(ctx context.Context, server *url.URL, fromChallenge string) (*resourceMetadata, error) {
	var candidates []string
	if fromChallenge != "" {
		u, err := server.Parse(fromChallenge)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("discovery: the challenge's resource_metadata %q is not an http(s) URL", fromChallenge)
		}
		candidates = append(candidates, u.String())
	} else {
		origin := server.Scheme + "://" + server.Host
		if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
			candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
		}
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	}
	var errs []error
	for _, c := range candidates {
		var m resourceMetadata
		err := t.getJSON(ctx, c, &m)
		if errors.Is(err, errNotFound) {
			errs = append(errs, fmt.Errorf("%s: %w", c, err))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovery: protected resource metadata at %s: %w", c, err)
		}
		if err := checkResource(server, m.Resource); err != nil {
			return nil, fmt.Errorf("discovery: protected resource metadata at %s: %w", c, err)
		}
		if len(m.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("discovery: protected resource metadata at %s names no authorization server", c)
		}
		return &m, nil
	}
	if fromChallenge != "" {
		return nil, fmt.Errorf("discovery: %w", errors.Join(errs...))
	}
	return nil, nil
}

// checkResource refuses metadata whose resource is not the server: it must be on the same
// origin and its path the server's path or a parent of it (segment-wise).
func checkResource(server *url.URL, resource string) error {
	r, err := url.Parse(resource)
	if err != nil || resource == "" || r.Fragment != "" {
		return fmt.Errorf("its resource %q is not a valid resource identifier", resource)
	}
	if !strings.EqualFold(r.Scheme, server.Scheme) || !strings.EqualFold(r.Host, server.Host) {
		return fmt.Errorf("its resource %q is not the server %s (another origin): refusing to authorize for it", resource, canonical(server))
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(server.EscapedPath(), "/")
	if rp != sp && !strings.HasPrefix(sp, rp+"/") {
		return fmt.Errorf("its resource %q does not cover the server %s: refusing to authorize for it", resource, canonical(server))
	}
	return nil
}

// serverMetadataURLs are the locations of an issuer's metadata: RFC 8414 and OpenID Connect
// discovery, with the path-insertion variants for an issuer with a path.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// discoverServer fetches the metadata of issuer and checks its issuer. legacy (a server
// without resource metadata) allows the 2025-03-26 default endpoints when none is found.
func (t *Transport) discoverServer(ctx context.Context, issuer string, legacy bool) (*serverMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || (iu.Scheme != "https" && iu.Scheme != "http") || iu.Host == "" {
		return nil, fmt.Errorf("discovery: the authorization server %q is not an http(s) URL", issuer)
	}
	var tried []string
	for _, c := range serverMetadataURLs(iu) {
		var m serverMetadata
		err := t.getJSON(ctx, c, &m)
		if errors.Is(err, errNotFound) {
			tried = append(tried, c)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovery: authorization server metadata at %s: %w", c, err)
		}
		if m.Issuer != issuer {
			return nil, fmt.Errorf("discovery: authorization server metadata at %s names issuer %q, not %q: refusing it (RFC 8414 section 3.3)", c, m.Issuer, issuer)
		}
		if m.AuthorizationEndpoint == "" && m.TokenEndpoint == "" {
			return nil, fmt.Errorf("discovery: authorization server metadata at %s has no endpoints", c)
		}
		return &m, nil
	}
	if !legacy {
		return nil, fmt.Errorf("discovery: authorization server %s publishes no metadata (tried %s)", issuer, strings.Join(tried, ", "))
	}
	origin := iu.Scheme + "://" + iu.Host
	return &serverMetadata{
		Issuer:                issuer,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
		legacy:                true,
	}, nil
}
