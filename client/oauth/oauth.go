package oauth

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/urlorigin"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one request to an authorization server or a metadata location.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxDocumentBytes bounds one metadata document or token response.
	DefaultMaxDocumentBytes = 1 << 20
	// DefaultMaxStepUps bounds the authorizations one resource may ask for in a row after 403
	// insufficient_scope answers, before the call fails.
	DefaultMaxStepUps = 3
	// DefaultRefreshBefore is how long before its expiry a token is refreshed.
	DefaultRefreshBefore = time.Minute
	// DefaultAuthorizeTimeout bounds one authorization, the person's part included.
	DefaultAuthorizeTimeout = 5 * time.Minute
	// DefaultClientName is the client_name sent in dynamic client registration.
	DefaultClientName = "mcpkit client"
)

// Authorizer is the part of the authorization code flow that needs a person: it shows the
// authorization URL and hands back the query of the redirect the authorization server sent the
// browser to. LoopbackAuthorizer is a ready one for command-line programs.
type Authorizer interface {
	// RedirectURL is the redirect URI to register and to send in authorization requests.
	RedirectURL(ctx context.Context) (string, error)
	// Authorize has the person visit authURL and returns the redirect's query parameters
	// (code, state, iss; or error), or an error when the person never came back before ctx
	// ended.
	Authorize(ctx context.Context, authURL string) (url.Values, error)
}

// Enterprise configures enterprise-managed authorization (SEP-990): the person's ID token from
// the enterprise identity provider is exchanged there for an identity assertion grant (ID-JAG,
// RFC 8693 token exchange), which the MCP server's authorization server takes as a JWT-bearer
// grant (RFC 7523).
type Enterprise struct {
	// TokenEndpoint is the identity provider's token endpoint. Required.
	TokenEndpoint string
	// ClientID and ClientSecret authenticate the client at the identity provider
	// (client_secret_post; ClientSecret may be empty).
	ClientID, ClientSecret string
	// IDToken returns the person's ID token from the identity provider. Required.
	IDToken func(ctx context.Context) (string, error)
}

// Options configure a Transport. The zero value runs the authorization code flow with a
// dynamically registered public client, once Authorizer is set.
type Options struct {
	// Authorizer asks the person to authorize (authorization code grant). Nil means the
	// transport cannot ask anyone: it then needs one of ClientCredentials, Assertion or
	// Enterprise.
	Authorizer Authorizer
	// ClientID and ClientSecret are a pre-registered client, used when set (a public client
	// has no secret). ClientIssuer, when set, limits them to that authorization server: another
	// one gets a registration of its own.
	ClientID, ClientSecret, ClientIssuer string
	// ClientMetadataURL is the HTTPS URL of the client's metadata document, used as its
	// client_id at authorization servers that support client ID metadata documents. Empty
	// means dynamic registration there.
	ClientMetadataURL string
	// ClientName is the client_name of dynamic registrations. Empty means DefaultClientName.
	ClientName string
	// Scopes, when set, are asked for when the server's challenge names none, instead of the
	// protected resource metadata's scopes_supported. The scopes a challenge names are always
	// asked for (with those already held, on a step-up).
	Scopes []string
	// ClientCredentials selects the client credentials grant (no person): ClientID with
	// ClientSecret or PrivateKey.
	ClientCredentials bool
	// PrivateKey, when set, authenticates the client at the token endpoint with a signed JWT
	// (private_key_jwt, RFC 7523) instead of a secret: ECDSA, RSA (RS256) or Ed25519.
	PrivateKey crypto.Signer
	// KeyID is the kid header of those JWTs. Empty means none.
	KeyID string
	// Assertion, when set, selects the JWT-bearer grant (RFC 7523, workload identity): it
	// returns the assertion to present. Errors from the token endpoint end the attempt; no
	// other grant is tried.
	Assertion func(ctx context.Context) (string, error)
	// Enterprise, when set, selects enterprise-managed authorization.
	Enterprise *Enterprise
	// DisableDPoP sends plain bearer tokens even to authorization servers that support DPoP
	// (RFC 9449). By default a DPoP key (DPoPKey, or a fresh P-256 key) binds every token
	// such a server issues (one listing the key's algorithm in
	// dpop_signing_alg_values_supported), with a proof on every request.
	DisableDPoP bool
	// DPoPKey is the key DPoP proofs are signed with. Nil means a fresh P-256 key of the
	// transport's own (tokens bound to it then end with the process).
	DPoPKey crypto.Signer
	// Store keeps tokens and registrations. Nil means a MemoryStore of the transport's own.
	Store TokenStore
	// HTTPClient sends the requests to authorization servers and metadata locations. Nil means
	// a client with DefaultTimeout that follows at most 3 redirects, each to the same origin.
	HTTPClient *http.Client
	// Base sends the MCP requests. Nil means http.DefaultTransport.
	Base http.RoundTripper
	// AuthorizeTimeout bounds one authorization (discovery, registration, the person's part,
	// the token request). It replaces the deadline of the request that needed it, which a
	// person could not meet; cancelling that request still cancels it. Zero means
	// DefaultAuthorizeTimeout.
	AuthorizeTimeout time.Duration
	// MaxDocumentBytes bounds one metadata document or token response. Zero means
	// DefaultMaxDocumentBytes.
	MaxDocumentBytes int64
	// MaxStepUps bounds the authorizations in a row after 403 insufficient_scope. Zero means
	// DefaultMaxStepUps; negative means none (the 403 fails the call at once).
	MaxStepUps int
	// RefreshBefore is how long before expiry a token is refreshed. Zero means
	// DefaultRefreshBefore; negative means only when the server refuses it.
	RefreshBefore time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Transport is an http.RoundTripper that authorizes MCP requests: it adds the access token,
// and when the server refuses (401, or 403 insufficient_scope) it discovers the authorization
// server, registers, obtains a token (or refreshes one) and repeats the request once. Plug it
// into client.HTTPTransport with Client. When it cannot authorize, the request fails with a
// *client.AuthError saying why. It is safe for concurrent use.
type Transport struct {
	opts        Options
	base        http.RoundTripper
	hc          *http.Client
	store       TokenStore
	maxBytes    int64
	maxSteps    int
	before      time.Duration
	authTimeout time.Duration
	now         func() time.Time
	dpop        *dpopKey

	flow sync.Mutex // one authorization at a time

	mu     sync.Mutex
	res    map[string]*resourceState // by the server's URL
	nonces map[string]string         // DPoP nonces by origin
}

// resourceState is what the transport learned about one MCP server.
type resourceState struct {
	key     Key
	meta    *serverMetadata
	token   *Token
	stepUps atomic.Int32 // authorizations after 403 since the last success
}

// New returns a Transport; it panics on invalid options.
func New(opts Options) *Transport {
	opts.check()
	t := &Transport{opts: opts, base: opts.Base, hc: opts.HTTPClient, store: opts.Store, maxBytes: opts.MaxDocumentBytes,
		maxSteps: opts.MaxStepUps, before: opts.RefreshBefore, now: opts.Now, res: map[string]*resourceState{}, nonces: map[string]string{}}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.hc == nil {
		t.hc = &http.Client{Timeout: DefaultTimeout, CheckRedirect: sameOrigin}
	}
	if t.store == nil {
		t.store = &MemoryStore{}
	}
	if t.maxBytes == 0 {
		t.maxBytes = DefaultMaxDocumentBytes
	}
	if t.maxSteps == 0 {
		t.maxSteps = DefaultMaxStepUps
	}
	if t.before == 0 {
		t.before = DefaultRefreshBefore
	}
	if t.authTimeout = opts.AuthorizeTimeout; t.authTimeout == 0 {
		t.authTimeout = DefaultAuthorizeTimeout
	}
	if t.now == nil {
		t.now = time.Now
	}
	if !opts.DisableDPoP {
		k, err := newDPoPKey(opts.DPoPKey)
		if err != nil {
			panic("oauth: Options.DPoPKey: " + err.Error())
		}
		t.dpop = k
	}
	return t
}

// check panics on invalid options, naming the option.
func (opts *Options) check() {
	if opts.MaxDocumentBytes < 0 {
		panic("oauth: Options.MaxDocumentBytes must not be negative")
	}
	if opts.AuthorizeTimeout < 0 {
		panic("oauth: Options.AuthorizeTimeout must not be negative")
	}
	if opts.ClientCredentials && opts.ClientID == "" {
		panic("oauth: Options.ClientCredentials needs Options.ClientID")
	}
	if opts.ClientCredentials && opts.ClientSecret == "" && opts.PrivateKey == nil {
		panic("oauth: Options.ClientCredentials needs Options.ClientSecret or Options.PrivateKey")
	}
	grants := 0
	for _, set := range []bool{opts.ClientCredentials, opts.Assertion != nil, opts.Enterprise != nil} {
		if set {
			grants++
		}
	}
	if grants > 1 {
		panic("oauth: Options.ClientCredentials, Options.Assertion and Options.Enterprise select different grants: set one")
	}
	if opts.PrivateKey != nil {
		if _, err := algorithmOf(opts.PrivateKey); err != nil {
			panic("oauth: Options.PrivateKey: " + err.Error())
		}
	}
	if e := opts.Enterprise; e != nil && (e.TokenEndpoint == "" || e.IDToken == nil) {
		panic("oauth: Options.Enterprise needs TokenEndpoint and IDToken")
	}
	if opts.ClientMetadataURL != "" {
		if u, err := url.Parse(opts.ClientMetadataURL); err != nil || u.Host == "" || (u.Scheme != "https" && !loopbackHost(u.Hostname())) {
			panic("oauth: Options.ClientMetadataURL must be an https URL")
		}
	}
}

// sameOrigin is the redirect policy of metadata and token requests: at most 3, never to
// another origin.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 {
		return errors.New("stopped after 3 redirects")
	}
	if o := via[0].URL; urlorigin.Of(req.URL) != urlorigin.Of(o) {
		return fmt.Errorf("refusing a redirect from %s to another origin (%s)", o.Host, req.URL.Host)
	}
	return nil
}

func loopbackHost(h string) bool { return h == "127.0.0.1" || h == "::1" || h == "localhost" }

// Client returns an *http.Client sending through t, for client.HTTPTransport.HTTPClient.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// Token returns the token the transport holds for the MCP server at serverURL, or nil.
func (t *Transport) Token(serverURL string) *Token {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.res[serverURL]; st != nil && st.token != nil {
		c := *st.token
		return &c
	}
	return nil
}

func (t *Transport) state(server string) *resourceState {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.res[server]
	if st == nil {
		st = &resourceState{}
		t.res[server] = st
	}
	return st
}

func (t *Transport) current(server string) (*Token, *resourceState) {
	st := t.state(server)
	t.mu.Lock()
	defer t.mu.Unlock()
	return st.token, st
}

// RoundTrip sends req with the access token, authorizing first when the server asks.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := replayable(req); err != nil {
		return nil, err
	}
	ctx := req.Context()
	server := canonicalURL(req.URL)
	tok, st := t.current(server)
	if tok != nil && t.expiring(tok) && tok.RefreshToken != "" {
		if nt, err := t.renew(ctx, server, tok, nil, false); err == nil {
			tok = nt
		}
	}
	resp, err := t.send(req, tok)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		ch := challengeOf(resp)
		if ch == nil { // a 401 without a challenge: discover from the server's URL
			ch = &client.Challenge{Scheme: "Bearer"}
		}
		discard(resp)
		actx, cancel := t.flowContext(ctx)
		nt, err := t.renew(actx, server, tok, ch, true)
		cancel()
		if err != nil {
			return nil, refusal(http.StatusUnauthorized, resp.Header, err)
		}
		tok = nt
		if resp, err = t.send(req, tok); err != nil {
			return nil, err
		}
	}
	for resp.StatusCode == http.StatusForbidden {
		ch := challengeOf(resp)
		if ch == nil || ch.Params["error"] != "insufficient_scope" {
			return resp, nil
		}
		discard(resp)
		actx, cancel := t.flowContext(ctx)
		nt, err := t.stepUp(actx, server, st, tok, ch)
		cancel()
		if err != nil {
			return nil, refusal(http.StatusForbidden, resp.Header, err)
		}
		tok = nt
		if resp, err = t.send(req, tok); err != nil {
			return nil, err
		}
	}
	if resp.StatusCode < 400 && st.stepUps.Load() != 0 {
		st.stepUps.Store(0)
	}
	return resp, nil
}

// flowContext is the context of an authorization the request ctx started: cancelling ctx
// cancels it, but ctx's deadline does not apply (a probe such as Auto's server/discover has a
// short one, and a person takes longer): Options.AuthorizeTimeout does.
func (t *Transport) flowContext(ctx context.Context) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel(context.Cause(ctx))
		}
	})
	tctx, tcancel := context.WithTimeout(actx, t.authTimeout)
	return tctx, func() {
		tcancel()
		stop()
		cancel(nil)
	}
}

func refusal(status int, h http.Header, err error) error {
	return client.NewAuthError(status, h, err)
}

func (t *Transport) expiring(tok *Token) bool {
	return !tok.Expiry.IsZero() && t.before > 0 && !t.now().Add(t.before).Before(tok.Expiry)
}

// send sends one attempt of req carrying tok (none when nil), with a DPoP proof for a DPoP
// token. A DPoP nonce challenge from the server is answered once.
func (t *Transport) send(req *http.Request, tok *Token) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r, err := t.attempt(req, tok)
		if err != nil {
			return nil, err
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		t.noteNonce(req.URL, resp.Header)
		if attempt == 0 && resp.StatusCode == http.StatusUnauthorized && isDPoP(tok) {
			if ch := challengeOf(resp); ch != nil && ch.Params["error"] == "use_dpop_nonce" {
				discard(resp)
				continue
			}
		}
		return resp, nil
	}
}

// attempt clones req for one try, with a fresh body and the credentials.
func (t *Transport) attempt(req *http.Request, tok *Token) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	if tok == nil {
		return r, nil
	}
	if isDPoP(tok) && t.dpop != nil {
		proof, err := t.dpop.proof(req.Method, req.URL, t.nonce(req.URL), tok.AccessToken, t.now())
		if err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
		r.Header.Set("DPoP", proof)
		return r, nil
	}
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r, nil
}

func isDPoP(tok *Token) bool { return tok != nil && strings.EqualFold(tok.Type, "DPoP") }

// replayable makes sure req's body can be sent again.
func replayable(req *http.Request) error {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.Body, _ = req.GetBody()
	return nil
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// challengeOf returns the answer's Bearer or DPoP challenge, or nil.
func challengeOf(resp *http.Response) *client.Challenge {
	for _, c := range client.ParseChallenges(resp.Header.Values("WWW-Authenticate")) {
		if s := strings.ToLower(c.Scheme); s == "bearer" || s == "dpop" {
			return &c
		}
	}
	return nil
}

func canonicalURL(u *url.URL) string { return canonical(u) }
