// Command oauth serves an MCP endpoint as an OAuth 2.1 resource server: every request needs a
// bearer access token issued for this server, and each tool, prompt and resource needs its own
// scopes.
//
//	go run ./examples/oauth                                   # http://127.0.0.1:8090/mcp, with a local test authorization server
//	go run ./examples/oauth -http 127.0.0.1:9000              # another address
//	go run ./examples/oauth -issuer https://as.example.com    # trust an external authorization server instead
//	go run ./examples/oauth -resource https://mcp.example.com/mcp   # the canonical URI tokens must name
//	go run ./examples/oauth -connect http://127.0.0.1:8090/mcp      # the client mode, in a second terminal
//	go run ./examples/oauth -dpop                             # DPoP-bound tokens only (add -dpop-nonce for server nonces)
//	go run ./examples/oauth -trust-issuer https://issuer.example -trust-jwk "$JWK"   # also trust tokens signed with that key
//
// Without -issuer, the example also runs a local test authorization server on the same address
// (issuer http://ADDR): its metadata at /.well-known/oauth-authorization-server, its keys at
// /jwks, an authorization endpoint at /authorize that approves every request at once for
// subject "user", dynamic registration at /register, and a token endpoint at /token (the
// authorization code grant with PKCE, refresh, client credentials; without grant_type it hands
// a token to anyone who asks, form fields subject, resource, scope). It is for trying the
// endpoint out, nothing more. With -issuer, the issuer's RFC 8414 metadata and JWKS are fetched
// when the first token arrives.
//
// With -connect the program is a client instead: given only the MCP URL, it discovers the
// authorization server, registers, prints the URL to authorize (add -open to open it in the
// browser; the local test server approves at once), takes the redirect on 127.0.0.1, calls
// whoami, then add_note, which needs notes:write: it authorizes once more for that scope and
// prints both answers.
//
// With -dpop the server accepts only DPoP-bound tokens (RFC 9449): every request carries
// Authorization: DPoP and a proof, and the local authorization server binds the tokens it issues
// to the key of the proof sent with the token request; the client mode does all of it by itself.
// -trust-issuer and -trust-jwk add an issuer whose tokens are accepted too, its public key
// published at /trusted-issuer/jwks (the conformance suite's DPoP scenario mints its own tokens
// that way: pass it DPOP_ISSUER and DPOP_ISSUER_PRIVATE_JWK).
//
// Each token lists only what its scopes let it use (auth.ScopeOptions.Hide): a notes:read token
// does not see add_note in tools/list, a notes:read notes:write one does; calling add_note with
// the read token still gets the 403 challenge naming notes:write. -show-all lists everything to
// every token.
//
// The protected resource metadata is served at /.well-known/oauth-protected-resource/mcp (and
// at the root well-known path). Sessions, listen ids and requestState belong to the token's
// subject.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

// config is what the flags say.
type config struct {
	issuer      string // external authorization server; "" runs the local one
	resource    string // canonical resource URI; "" means http://ADDR/mcp
	conformance bool   // also serve the conformance suite's scope fixture
	dpop        bool   // accept only DPoP-bound tokens (RFC 9449)
	dpopNonce   bool   // with dpop, require server nonces in proofs
	// trustIssuer and trustJWK name one more issuer whose tokens are accepted, signed with
	// the key trustJWK (a JSON JWK; only its public part is used).
	trustIssuer, trustJWK string
	showAll               bool // list every entry to every token (no ScopeOptions.Hide)
	// setup, when set, adjusts the local test authorization server before it serves (tests:
	// its clock, token lifetime, clients).
	setup func(*testutil.AuthServer)
}

func main() {
	addr := flag.String("http", "127.0.0.1:8090", "serve Streamable HTTP on this address (endpoint /mcp)")
	issuer := flag.String("issuer", "", "trust this external authorization server (its RFC 8414 metadata and JWKS are fetched lazily) instead of running the local test one")
	resource := flag.String("resource", "", "the canonical resource URI tokens must name as audience (default: the served /mcp URL)")
	connect := flag.String("connect", "", "run as a client of the MCP server at this URL instead of serving: print the URL to authorize (the redirect comes back to 127.0.0.1), then call whoami and add_note")
	open := flag.Bool("open", false, "with -connect, also open the authorization URL in the browser")
	conformance := flag.Bool("conformance", false, "also serve the entries and accept the two fixed opaque tokens of the conformance suite's scope-challenge scenario (local test runs only)")
	dpop := flag.Bool("dpop", false, "accept only DPoP-bound access tokens (RFC 9449), each request with a proof; the local authorization server binds its tokens to the proof key of the token request")
	dpopNonce := flag.Bool("dpop-nonce", false, "with -dpop, require a server nonce in every proof (DPoP-Nonce, use_dpop_nonce)")
	trustIssuer := flag.String("trust-issuer", "", "also accept tokens of this issuer, signed with the key of -trust-jwk")
	trustJWK := flag.String("trust-jwk", "", "the JSON JWK of -trust-issuer's signing key (a private JWK is accepted: only its public part is used)")
	showAll := flag.Bool("show-all", false, "list every tool, prompt and resource to every token, not only what its scopes allow")
	flag.Parse()
	if (*trustIssuer == "") != (*trustJWK == "") {
		fmt.Fprintln(os.Stderr, "oauth: -trust-issuer and -trust-jwk go together")
		os.Exit(2)
	}

	if *connect != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		login := &oauth.LoopbackAuthorizer{OpenBrowser: *open}
		err := runClient(ctx, *connect, login, os.Stdout)
		_ = login.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "oauth:", err)
			os.Exit(1)
		}
		return
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := config{issuer: *issuer, resource: *resource, conformance: *conformance, dpop: *dpop, dpopNonce: *dpopNonce,
		trustIssuer: *trustIssuer, trustJWK: *trustJWK, showAll: *showAll}
	if err := serve(ctx, ln, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "oauth:", err)
		os.Exit(1)
	}
}

// serve runs the example on ln until ctx ends.
func serve(ctx context.Context, ln net.Listener, cfg config) error {
	base := "http://" + ln.Addr().String()
	h, closeMCP, err := newHandler(base, cfg)
	if err != nil {
		return err
	}
	srv := mcphttp.NewHTTPServer(ln.Addr().String(), h, mcphttp.HTTPServerOptions{})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("oauth: serving MCP at %s/mcp", base)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = closeMCP(shutdown)
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler builds the whole site for an endpoint served at base: the MCP endpoint at /mcp
// behind the Origin guard, the bearer layer, decode and the scope layer, the protected resource
// metadata, and the local test authorization server unless cfg names an issuer.
func newHandler(base string, cfg config) (http.Handler, func(context.Context) error, error) {
	resource := cfg.resource
	if resource == "" {
		resource = base + "/mcp"
	}
	mux := http.NewServeMux()
	issuer := cfg.issuer
	if issuer == "" {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		as := testutil.NewAuthServer(base, &testutil.SigningKey{KID: "local-1", Alg: "ES256", Key: key})
		as.DPoP = cfg.dpop
		issuer = as.Issuer
		if cfg.setup != nil {
			cfg.setup(as)
		}
		as.Mount(mux)
	}
	var dpop auth.DPoPOptions
	if cfg.dpop {
		dpop = auth.DPoPOptions{Mode: auth.DPoPRequired, RequireNonce: cfg.dpopNonce}
	}
	meta := auth.NewMetadataHandler(dpop.Advertise(auth.Metadata{
		Resource:             resource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{scopeRead, scopeWrite},
		ResourceName:         "mcpkit notes example",
	}))
	meta.Mount(mux)

	var verifier auth.Verifier = auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: resource})
	if cfg.trustIssuer != "" {
		extra, err := trustedIssuer(mux, base, cfg.trustIssuer, cfg.trustJWK, resource)
		if err != nil {
			return nil, nil, err
		}
		verifier = anyOf(verifier, extra)
	}
	s := newServer()
	scopes := notesScopes(s, meta.URL())
	scopes.Hide = !cfg.showAll
	if cfg.conformance {
		verifier = conformanceVerifier(verifier)
		addConformanceFixture(s, &scopes)
	}
	mcp := mcphttp.New(s, mcphttp.Options{})
	mux.Handle("/mcp", middleware.OriginGuard(middleware.OriginGuardOptions{})(
		auth.RequireBearer(verifier, auth.BearerOptions{ResourceMetadataURL: meta.URL(), Resource: resource, DPoP: dpop})(
			middleware.Decode(middleware.DecodeOptions{})(
				auth.RequireScopes(scopes)(mcp)))))
	return mux, mcp.Shutdown, nil
}
