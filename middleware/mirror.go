package middleware

import (
	"bytes"
	"encoding/base64"
	"math/big"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
)

// Headers the 2026-07-28 lifecycle mirrors from the body.
const (
	HeaderMethod      = "Mcp-Method"
	HeaderName        = "Mcp-Name"
	HeaderParamPrefix = "Mcp-Param-"
)

// MirrorOptions configure the mirror-header checks.
type MirrorOptions struct {
	// Server, when set, supplies the tools' x-mcp-header parameters so that Mcp-Param-* headers
	// are checked against the arguments. Nil skips those checks (the other checks still run).
	Server *core.Server
}

// MirrorHeaders is the layer that checks, on 2026-07-28 POSTs, that the HTTP headers say what
// the body says, so that a gateway routing on headers and the server executing the body can
// never disagree. It must sit below Decode (it reads the decoded message) and in front of the
// modern handler. In order:
//
//   - MCP-Protocol-Version must be a version the kit serves: else 400 -32022 with
//     data.supported and data.requested;
//   - it must equal the body's io.modelcontextprotocol/protocolVersion when the body has one;
//   - Mcp-Method is required and must equal the body's method (case-sensitive);
//   - Mcp-Name is required on tools/call, prompts/get (params.name) and resources/read
//     (params.uri) and must equal it, after decoding the =?base64?...?= form;
//   - on tools/call, each argument the tool's input schema marks with x-mcp-header must be
//     mirrored in Mcp-Param-<name> with the same value, and no such header may appear without
//     its argument.
//
// Every mismatch is 400 -32020 with the request id. Requests other than POST pass through.
func MirrorHeaders(opts MirrorOptions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			msg, ok := MessageFrom(r.Context())
			if r.Method != http.MethodPost || !ok {
				next.ServeHTTP(w, r)
				return
			}
			if status, e := checkMirror(r, msg, opts.Server); e != nil {
				if ex := ExchangeFrom(r.Context()); ex != nil {
					ex.SetError(e.Code, e.Message)
				}
				WriteErrorData(w, status, msg.ID, e.Code, e.Message, e.Data)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func mismatch(format string, args ...any) *core.Error {
	e := core.Errorf(core.CodeHeaderMismatch, "Header mismatch: "+format, args...)
	e.Data = nil
	return e
}

func checkMirror(r *http.Request, msg *core.Message, srv *core.Server) (int, *core.Error) {
	v := r.Header.Get(HeaderProtocolVersion)
	if v == "" {
		return http.StatusBadRequest, mismatch("MCP-Protocol-Version header is required on the modern path")
	}
	if !core.IsModernVersion(v) {
		e := core.UnsupportedVersionError(v)
		return http.StatusBadRequest, e
	}
	if raw := msg.MetaValue(core.MetaProtocolVersion); raw.Kind() == '"' {
		var body string
		if json.Unmarshal(raw, &body) == nil && body != v {
			return http.StatusBadRequest, mismatch("MCP-Protocol-Version header value '%s' does not match body value '%s'", v, body)
		}
	}
	if msg.Method == "" {
		return 0, nil // a client response: nothing to mirror
	}
	method := r.Header.Get(HeaderMethod)
	if method == "" {
		return http.StatusBadRequest, mismatch("Mcp-Method header is required on the modern path")
	}
	if method != msg.Method {
		return http.StatusBadRequest, mismatch("Mcp-Method header value '%s' does not match body value '%s'", method, msg.Method)
	}
	var target string
	switch msg.Method {
	case "tools/call", "prompts/get":
		target = msg.Name
	case "resources/read":
		target = msg.URI
	default:
		return 0, nil
	}
	if target != "" {
		raw := r.Header.Get(HeaderName)
		if raw == "" {
			return http.StatusBadRequest, mismatch("Mcp-Name header is required for `%s`", msg.Method)
		}
		name, ok := decodeHeaderValue(raw)
		if !ok {
			return http.StatusBadRequest, mismatch("Mcp-Name header value is not valid")
		}
		if name != target {
			return http.StatusBadRequest, mismatch("Mcp-Name header value '%s' does not match body value '%s'", name, target)
		}
	}
	if msg.Method == "tools/call" && srv != nil {
		if e := checkParamHeaders(r, msg, srv); e != nil {
			return http.StatusBadRequest, e
		}
	}
	return 0, nil
}

// decodeHeaderValue returns a header's value: the =?base64?...?= form decoded (strict standard
// base64, UTF-8), anything else as is, which must then be visible ASCII (with spaces).
func decodeHeaderValue(v string) (string, bool) {
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b64, ok := strings.CutSuffix(inner, "?="); ok {
			b, err := base64.StdEncoding.Strict().DecodeString(b64)
			if err != nil || !utf8Valid(b) {
				return "", false
			}
			return string(b), true
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

func utf8Valid(b []byte) bool { return utf8.Valid(b) }

func checkParamHeaders(r *http.Request, msg *core.Message, srv *core.Server) *core.Error {
	params, _ := srv.ToolParamHeaders(msg.Name)
	if len(params) == 0 {
		return nil
	}
	var body struct {
		Arguments map[string]jsontext.Value `json:"arguments"`
	}
	if json.Unmarshal(msg.Params, &body) != nil {
		return nil // the core answers malformed params with -32602
	}
	for _, p := range params {
		header := HeaderParamPrefix + p.Name
		vals, present := r.Header[http.CanonicalHeaderKey(header)]
		arg, hasArg := body.Arguments[p.Argument]
		if hasArg && string(arg) == "null" {
			hasArg = false
		}
		switch {
		case !present && !hasArg:
			continue
		case !present:
			return mismatch("%s header is required: argument `%s` is present", header, p.Argument)
		case !hasArg:
			return mismatch("%s header is present but argument `%s` is not", header, p.Argument)
		}
		got, ok := decodeHeaderValue(vals[0])
		if !ok {
			return mismatch("%s header value is not valid", header)
		}
		if !sameValue(got, arg) {
			return mismatch("%s header value '%s' does not match body value '%s'", header, got, string(arg))
		}
	}
	return nil
}

// sameValue compares a header's text with a JSON argument: strings verbatim, numbers by value,
// booleans by their literal. Other JSON types cannot be mirrored.
func sameValue(header string, arg jsontext.Value) bool {
	switch arg.Kind() {
	case '"':
		var s string
		return json.Unmarshal(arg, &s) == nil && s == header
	case '0':
		// The header must itself be a JSON number (no hex, no fractions) of the same value.
		hv := jsontext.Value(header)
		if !hv.IsValid() || hv.Kind() != '0' {
			return false
		}
		a, ok1 := new(big.Rat).SetString(string(arg))
		h, ok2 := new(big.Rat).SetString(header)
		return ok1 && ok2 && a.Cmp(h) == 0
	case 't', 'f':
		return string(bytes.TrimSpace(arg)) == header
	}
	return false
}
