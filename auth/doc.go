// Package auth is the resource-server half of the MCP authorization specification, as ordinary
// HTTP layers a team can use alone, together, or not at all:
//
//   - RequireBearer checks the Authorization header against a Verifier, answers 401 with a
//     WWW-Authenticate challenge clients can follow (RFC 6750, RFC 9728 resource_metadata), and
//     puts the verified TokenInfo and the request's principal (core.WithPrincipal) in the
//     request context. Session ownership, the listen id scope, the requestState audience and
//     task ownership all read that one principal.
//   - JWTVerifier verifies RFC 9068 JWT access tokens against the issuer's JWKS (fetched lazily,
//     cached, refreshed on an unknown key id at a bounded rate, one background fetch at a time
//     while stale keys keep serving, a wait bounded by the request's context): signature with an allow-list of
//     asymmetric algorithms, issuer, audience (the server's canonical resource URI: tokens
//     issued for another resource are refused, so no token passthrough), expiry and not-before.
//     IntrospectionVerifier asks an RFC 7662 introspection endpoint about opaque tokens, caches
//     the answers (refusals briefly), shares one call among simultaneous checks of a token and
//     bounds the calls a second.
//   - With BearerOptions.DPoP, RequireBearer also accepts DPoP-bound tokens (RFC 9449):
//     Authorization: DPoP with one proof header, checked as section 4.3 says (signature with
//     the embedded key, typ, the algorithm allow-list, htm and htu, iat window, ath, the token's
//     cnf.jkt, jti replay through a ReplayCache), optional stateless server nonces, and DPoP
//     challenges beside or instead of the Bearer ones (DPoPAccepted, DPoPRequired).
//   - MetadataHandler serves the RFC 9728 protected resource metadata document at the
//     path-inserted and the root well-known URIs.
//   - RequireScopes maps each operation (a tool, prompt, resource or resource template, or a
//     JSON-RPC method) to the scopes it needs and answers a call without them with 403 and an
//     insufficient_scope challenge listing every scope the operation needs (SEP-2350). It reads
//     the message the decode layer parsed (middleware.MessageFrom), so the body is never parsed
//     twice, and works for both lifecycles. With ScopeOptions.Hide the same scopes decide what
//     each token sees: what it may not use is left out of the lists (core.WithVisibility),
//     while a direct call of it still gets the challenge, which is how a client learns what to
//     ask for.
//
// # Mounting order
//
// The bearer layer goes after the Origin guard and before the decode layer, so the body of an
// unauthenticated request is never read; the scope layer goes after decode, where the method
// and target are known:
//
//	meta := auth.NewMetadataHandler(auth.Metadata{Resource: resource, AuthorizationServers: []string{issuer}})
//	verifier := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: resource})
//	mcp := mcphttp.New(server, mcphttp.Options{})
//	defer mcp.Close() // ends the sessions and streams when the server stops
//	h := middleware.OriginGuard(middleware.OriginGuardOptions{})(
//		auth.RequireBearer(verifier, auth.BearerOptions{ResourceMetadataURL: meta.URL()})(
//			middleware.Decode(middleware.DecodeOptions{})(
//				auth.RequireScopes(auth.ScopeOptions{ResourceMetadataURL: meta.URL(), Server: server,
//					Tools: map[string][]string{"delete_note": {"notes:write"}}})(mcp))))
//	mux.Handle("/mcp", h)
//	meta.Mount(mux)
//
// The decode layer inside mcphttp.New sees the message already decoded and does not read the
// body again. stdio is out of scope: the specification has stdio servers take their credentials
// from the environment; a tool refusing a call there can answer core.DeniedResult with
// ScopeDenial, the SEP-2643 (draft) envelope that StructuredDenials adds to the 403s on HTTP.
package auth
