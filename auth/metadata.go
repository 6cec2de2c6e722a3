package auth

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// Metadata is the RFC 9728 protected resource metadata of an MCP server.
type Metadata struct {
	// Resource is the server's canonical resource URI, for example https://mcp.example.com/mcp:
	// the audience its tokens must name. Required: absolute, https (http only on a loopback
	// host), no user information or fragment.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuer URLs of the authorization servers clients may get
	// tokens from. At least one is required; each must be an acceptable URL like Resource.
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported lists the scopes clients may request. "offline_access" must not be
	// advertised: refresh tokens are the authorization server's business, not the resource's.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported says how tokens are sent. Nil means ["header"], the only method
	// RequireBearer reads; anything else panics.
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceName is a human-readable name of the server.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is a URL of documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// DPoPSigningAlgValuesSupported lists the DPoP proof algorithms the server accepts (RFC 9449
	// section 5.1; DPoPOptions.Advertise fills it). Nil leaves it out; an algorithm that is not
	// an asymmetric JWS algorithm panics.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// DPoPBoundAccessTokensRequired says the server accepts DPoP-bound tokens only
	// (DPoPRequired). False leaves it out.
	DPoPBoundAccessTokensRequired bool `json:"dpop_bound_access_tokens_required,omitempty"`
}

// MetadataHandler serves a Metadata document at the path-inserted well-known URI of its
// resource (/.well-known/oauth-protected-resource/<resource path>) and at the root one
// (/.well-known/oauth-protected-resource), for GET and CORS preflight (OPTIONS) only. Other
// paths get 404, other methods 405. Responses allow any origin (the document is public) and may
// be cached for an hour.
type MetadataHandler struct {
	body  []byte
	url   string
	paths []string
}

// NewMetadataHandler validates m and returns its handler. It panics, naming the field, when
// Resource or an authorization server is not an acceptable URL, when there is no authorization
// server, when a scope is not a valid scope token, when offline_access is advertised, or when a
// bearer method other than "header" is listed.
func NewMetadataHandler(m Metadata) *MetadataHandler {
	u, err := checkURL("Metadata.Resource", m.Resource)
	if err != nil {
		panic(err.Error())
	}
	if len(m.AuthorizationServers) == 0 {
		panic("auth: Metadata.AuthorizationServers needs at least one authorization server")
	}
	for _, as := range m.AuthorizationServers {
		if _, err := checkURL("Metadata.AuthorizationServers", as); err != nil {
			panic(err.Error())
		}
	}
	checkScopes("Metadata.ScopesSupported", m.ScopesSupported)
	if slices.Contains(m.ScopesSupported, "offline_access") {
		panic("auth: Metadata.ScopesSupported must not advertise offline_access")
	}
	if m.BearerMethodsSupported == nil {
		m.BearerMethodsSupported = []string{"header"}
	}
	for _, bm := range m.BearerMethodsSupported {
		if bm != "header" {
			panic("auth: Metadata.BearerMethodsSupported may list only \"header\"")
		}
	}
	if m.ResourceDocumentation != "" {
		if _, err := checkURL("Metadata.ResourceDocumentation", m.ResourceDocumentation); err != nil {
			panic(err.Error())
		}
	}
	for _, a := range m.DPoPSigningAlgValuesSupported {
		if !slices.Contains(asymmetricAlgorithms, a) {
			panic("auth: Metadata.DPoPSigningAlgValuesSupported: " + strconvQuote(a) + " is not an asymmetric JWS algorithm")
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		panic("auth: Metadata: " + err.Error())
	}
	mu := metadataURL(u)
	pu, _ := url.Parse(mu)
	paths := []string{pu.Path}
	if pu.Path != wellKnownPRM {
		paths = append(paths, wellKnownPRM)
	}
	return &MetadataHandler{body: body, url: mu, paths: paths}
}

// URL returns the absolute URL of the document (the path-inserted well-known URI), the value
// for BearerOptions.ResourceMetadataURL and ScopeOptions.ResourceMetadataURL.
func (h *MetadataHandler) URL() string { return h.url }

// Paths returns the paths the handler answers: the path-inserted well-known path, then the
// root one (just one path when the resource has no path).
func (h *MetadataHandler) Paths() []string { return slices.Clone(h.paths) }

// Mount registers the handler on mux at each of its Paths.
func (h *MetadataHandler) Mount(mux *http.ServeMux) {
	for _, p := range h.paths {
		mux.Handle(p, h)
	}
}

// ServeHTTP serves the document.
func (h *MetadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !slices.Contains(h.paths, r.URL.Path) {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet:
		hd.Set("Content-Type", "application/json")
		hd.Set("Cache-Control", "public, max-age=3600")
		hd.Set("Content-Length", strconv.Itoa(len(h.body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(h.body)
	case http.MethodOptions:
		hd.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			hd.Set("Access-Control-Allow-Headers", req)
		}
		hd.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	default:
		hd.Set("Allow", "GET, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
