package middleware

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Headers the 2026-07-28 lifecycle mirrors from the body.
const (
	HeaderMethod      = "Mcp-Method"
	HeaderName        = "Mcp-Name"
	HeaderParamPrefix = "Mcp-Param-"
)

// MirrorHeadersOptions configure the mirror-header checks.
type MirrorHeadersOptions struct {
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
//   - Mcp-Name is required on tools/call, prompts/get (params.name), resources/read
//     (params.uri) and tasks/get, tasks/update, tasks/cancel (params.taskId, SEP-2663) and must
//     equal it, after decoding the =?base64?...?= form;
//   - on tools/call, each argument the tool's input schema marks with x-mcp-header must be
//     mirrored in Mcp-Param-<name> with the same value (strings verbatim, numbers by value,
//     booleans as true/false), and no such header may appear without its argument.
//
// Header names are case-insensitive; values are compared after net/http trimmed the spaces around
// them. A value of the exact form =?base64?<standard base64>?= is decoded first (invalid base64
// or a result that is not UTF-8 is refused); any other value is taken literally and must be
// visible ASCII, spaces and tabs. A mirrored header sent more than once is refused, since a
// gateway might read another of its values. Every mismatch is 400 -32020 with the request id.
// Requests other than POST pass through.
func MirrorHeaders(opts MirrorHeadersOptions) func(http.Handler) http.Handler {
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

func mismatch(format string, args ...any) *jsonrpc.Error {
	e := jsonrpc.Errorf(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+format, args...)
	e.Data = nil
	return e
}

// plainStringIs reports whether raw, a JSON string, is exactly s without needing to be decoded
// (no escapes): the usual case, checked without allocating.
func plainStringIs(raw []byte, s string) bool {
	if len(raw) != len(s)+2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	inner := raw[1 : len(raw)-1]
	return bytes.IndexByte(inner, '\\') < 0 && string(inner) == s
}

func checkMirror(r *http.Request, msg *jsonrpc.Message, srv *core.Server) (int, *jsonrpc.Error) {
	// Each mirrored header is looked up once: its values say both what it is and whether it
	// was sent more than once.
	versions := r.Header[protocolVersionKey]
	v := firstValue(versions)
	if v == "" {
		return http.StatusBadRequest, mismatch("MCP-Protocol-Version header is required on the modern path")
	}
	if !core.IsModernVersion(v) {
		e := transport.Core.UnsupportedVersion(v)
		return http.StatusBadRequest, e
	}
	if raw := transport.Core.MetaValue(msg, metakey.ProtocolVersion); jsontext.Value(raw).Kind() == '"' && !plainStringIs(raw, v) {
		var body string
		if json.Unmarshal(raw, &body) == nil && body != v {
			return http.StatusBadRequest, mismatch("MCP-Protocol-Version header value '%s' does not match body value '%s'", v, body)
		}
	}
	if msg.Method == "" {
		return 0, nil // a client response: nothing to mirror
	}
	methods, names := r.Header[HeaderMethod], r.Header[HeaderName]
	if name, ok := repeated(len(versions), len(methods), len(names)); ok {
		return http.StatusBadRequest, mismatch("%s header is sent more than once", name)
	}
	method := firstValue(methods)
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
	case "tasks/get", "tasks/update", "tasks/cancel":
		target = msg.TaskID // SEP-2663: Mcp-Name carries params.taskId
	default:
		return 0, nil
	}
	if target != "" {
		raw := firstValue(names)
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

// repeated returns the first of the mirrored headers (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name, in that order, given their numbers of values) that carries more than one value: a
// gateway could route on one value and the server check another, so a mirrored header must
// appear once.
func repeated(versions, methods, names int) (string, bool) {
	switch {
	case versions > 1:
		return HeaderProtocolVersion, true
	case methods > 1:
		return HeaderMethod, true
	case names > 1:
		return HeaderName, true
	}
	return "", false
}

// firstValue is the first of a header's values, or "" when it has none.
func firstValue(vals []string) string {
	if len(vals) > 0 {
		return vals[0]
	}
	return ""
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

func checkParamHeaders(r *http.Request, msg *jsonrpc.Message, srv *core.Server) *jsonrpc.Error {
	params, _ := transport.Core.ToolParamHeaders(srv, msg.Name)
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
		if len(vals) > 1 {
			return mismatch("%s header is sent more than once", header)
		}
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
			return mismatch("%s header value '%s' does not match body value '%s'", header, got, bodyText(arg))
		}
	}
	return nil
}

// bodyText shows an argument in an error message: a string as its text, anything else as JSON.
func bodyText(arg jsontext.Value) string {
	var s string
	if arg.Kind() == '"' && json.Unmarshal(arg, &s) == nil {
		return s
	}
	return string(arg)
}

// sameValue compares a header's text with a JSON argument: strings verbatim, numbers by value,
// booleans by their literal. Other JSON types cannot be mirrored.
func sameValue(header string, arg jsontext.Value) bool {
	switch arg.Kind() {
	case '"':
		var s string
		return json.Unmarshal(arg, &s) == nil && s == header
	case '0':
		// The header must itself be a JSON number (no hex, no leading +) of the same value.
		if header == string(arg) {
			return true
		}
		hv := jsontext.Value(header)
		if !hv.IsValid() || hv.Kind() != '0' {
			return false
		}
		a, ok1 := parseDecimal(string(arg))
		h, ok2 := parseDecimal(header)
		return ok1 && ok2 && a == h
	case 't', 'f':
		return string(bytes.TrimSpace(arg)) == header
	}
	return false
}

// decimal is a JSON number reduced to a canonical form: the significant digits without leading or
// trailing zeros, the power of ten that scales them, and the sign. Zero is the zero decimal,
// whatever its sign or spelling.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxDecimalExponent bounds the exponent parseDecimal accepts: a mirrored value never needs more,
// and the bound keeps the arithmetic in an int64.
const maxDecimalExponent = 1 << 40

// parseDecimal reads a valid JSON number into its canonical form, without arbitrary-precision
// arithmetic (which an attacker could make expensive with a huge exponent). It reports false for
// an exponent beyond maxDecimalExponent.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg = true
		s = s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if hasExp {
		e, err := strconv.ParseInt(strings.TrimPrefix(expPart, "+"), 10, 64)
		if err != nil || e > maxDecimalExponent || e < -maxDecimalExponent {
			return decimal{}, false
		}
		d.exp = e
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	d.exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	d.exp += int64(len(digits) - len(trimmed))
	if trimmed == "" {
		return decimal{}, true // zero
	}
	d.digits = trimmed
	return d, true
}
