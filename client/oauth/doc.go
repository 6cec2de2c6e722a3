// Package oauth authorizes the kit's MCP client (package client) at servers that require it,
// following the MCP authorization specification (2025-11-25 and 2026-07-28) and the OAuth
// documents it builds on. A Transport is an http.RoundTripper for client.HTTPTransport; a
// command-line program needs these lines:
//
//	package main
//
//	import (
//		"context"
//		"fmt"
//		"log"
//
//		"github.com/mcpkit/mcpkit/client"
//		"github.com/mcpkit/mcpkit/client/oauth"
//	)
//
//	func main() {
//		ctx := context.Background()
//		login := &oauth.LoopbackAuthorizer{OpenBrowser: true} // prints the URL, takes the redirect on 127.0.0.1
//		defer login.Close()
//		auth := oauth.New(oauth.Options{Authorizer: login})
//		c, err := client.Connect(ctx, &client.HTTPTransport{URL: "https://mcp.example.com/mcp", HTTPClient: auth.Client()}, client.Options{})
//		if err != nil {
//			log.Fatal(err) // a *client.AuthError when authorization failed, saying why
//		}
//		defer c.Close()
//		res, err := c.CallTool(ctx, "whoami", nil)
//		if err != nil {
//			log.Fatal(err)
//		}
//		fmt.Println(res.Content)
//	}
//
// Given only the MCP URL, on the server's first 401 it:
//
//   - discovers the protected resource metadata (RFC 9728: the challenge's resource_metadata,
//     else the path-based well-known location, else the root one) and refuses metadata whose
//     resource is not the server; finds the authorization server's metadata (RFC 8414, then
//     OpenID Connect discovery, with the path-insertion variants) and refuses an issuer that
//     differs from the one it asked for; a 2025-03-26 server without metadata gets the default
//     endpoints at its origin;
//   - registers: pre-registered credentials (Options.ClientID), else the client ID metadata
//     document URL (Options.ClientMetadataURL) where the server supports them, else dynamic
//     client registration (RFC 7591); registrations are kept per authorization server, so a
//     server that moves to another one gets a new registration, never the old credentials;
//   - obtains a token: the authorization code grant with PKCE S256, state and the RFC 9207 iss
//     checked, through the Authorizer (the person); or, without a person, the client
//     credentials grant (a secret, or a private-key JWT, RFC 7523), the JWT-bearer grant
//     (Options.Assertion, workload identity) or enterprise-managed authorization
//     (Options.Enterprise: an RFC 8693 token exchange for an ID-JAG, then the JWT-bearer
//     grant); every token request names the resource (RFC 8707) and authenticates as the
//     server advertises (client_secret_basic, client_secret_post, private_key_jwt or none);
//   - asks for the scopes of the challenge, else the metadata's scopes_supported, else none,
//     with offline_access only when the authorization server lists it.
//
// After that it repeats the request with the token. A 403 insufficient_scope gets a new
// authorization for the union of the held and the required scopes (at most
// Options.MaxStepUps in a row); an expiring token, or one the server refuses with 401, is
// refreshed (a rotated refresh token replaces the old one); when the authorization server
// supports DPoP (RFC 9449), tokens are bound to a key of the transport and every request
// carries a fresh proof, server nonces honoured. Tokens and registrations live in a
// TokenStore (MemoryStore by default) keyed by issuer and resource, so a command-line program
// can keep them between runs.
//
// When it cannot authorize, the request fails with a *client.AuthError whose Err says what
// failed (discovery, a mismatch, the registration, the person's answer, a refused scope).
// Every request to an authorization server or metadata location is bounded in time
// (DefaultTimeout) and size (Options.MaxDocumentBytes) and follows redirects only within one
// origin.
package oauth
