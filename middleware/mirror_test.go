package middleware

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/core"
)

// mirrorSchema annotates three arguments with x-mcp-header (a string, a number and a boolean).
const mirrorSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"priority":{"type":"number","x-mcp-header":"Priority"},` +
	`"flag":{"type":"boolean","x-mcp-header":"Flag"},` +
	`"note":{"type":"string"}}}`

// mirrorServer serves Decode -> MirrorHeaders -> "ok", with a core server that has the tool
// "mirrored" (mirrorSchema) and the tool "plain" (no annotations). A nil server (withServer false)
// leaves the Mcp-Param-* checks out.
func mirrorServer(t *testing.T, withServer bool) string {
	t.Helper()
	var s *core.Server
	if withServer {
		s = core.NewServer(core.Implementation{Name: "mirror", Version: "1"}, core.Options{})
		h := func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("x"), nil
		}
		s.AddTool(&core.Tool{Name: "mirrored", InputSchema: json.RawMessage(mirrorSchema)}, h)
		s.AddTool(&core.Tool{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	return newServer(t, Decode(DecodeOptions{})(MirrorHeaders(MirrorHeadersOptions{Server: s})(okHandler))).URL
}

// env is the _meta envelope of the bodies below.
const env = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func callBody(id, name, args string) string {
	if args != "" {
		args = `,"arguments":` + args
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"` + args + `,` + env + `}}`
}

// mismatchBody is the exact answer to a header mismatch of the request with id 1.
func mismatchBody(msg string) string {
	return `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: ` + msg + `"}}`
}

type mirrorCase struct {
	name string
	body string
	hdr  []string // pairs, applied after the defaults; an empty value removes the header
	want string   // "ok", or the exact error body (status 400)
}

func runMirrorCases(t *testing.T, url string, cases []mirrorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(HeaderProtocolVersion, "2026-07-28")
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				k := tc.hdr[i]
				switch v := tc.hdr[i+1]; {
				case v == "":
					req.Header.Del(k)
				case strings.HasPrefix(k, "+"): // an extra value of the same header
					req.Header.Add(k[1:], v)
				case http.CanonicalHeaderKey(k) != k: // sent as written, to test case-insensitive names
					req.Header.Del(k)
					req.Header[k] = []string{v}
				default:
					req.Header.Set(k, v)
				}
			}
			status, h, body := do(t, http.DefaultClient, req)
			if tc.want == "ok" {
				if status != http.StatusOK || body != "ok" {
					t.Fatalf("%d %s, want the request to pass", status, body)
				}
				return
			}
			if sameJSON(body, tc.want) {
				body = tc.want // member order aside (error data is a map), the answer is the same
			}
			wantError(t, status, h, body, http.StatusBadRequest, tc.want)
		})
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// MCP-Protocol-Version, Mcp-Method and Mcp-Name.
func TestMirrorStandardHeaders(t *testing.T) {
	url := mirrorServer(t, true)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + env + `}}`
	echo := callBody("1", "echo", `{}`)
	get := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"grüße",` + env + `}}`
	read := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://a b",` + env + `}}`
	m := func(method string) []string { return []string{HeaderMethod, method} }
	runMirrorCases(t, url, []mirrorCase{
		{"all good", list, m("tools/list"), "ok"},
		{"version missing", list, append(m("tools/list"), HeaderProtocolVersion, ""),
			mismatchBody("MCP-Protocol-Version header is required on the modern path")},
		{"version unsupported", list, append(m("tools/list"), HeaderProtocolVersion, "2025-11-25"),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`},
		{"body version differs", strings.Replace(list, `protocolVersion":"2026-07-28"`, `protocolVersion":"2099-01-01"`, 1), m("tools/list"),
			mismatchBody("MCP-Protocol-Version header value '2026-07-28' does not match body value '2099-01-01'")},
		{"body version escaped, same value", strings.Replace(list, `protocolVersion":"2026-07-28"`, `protocolVersion":"2026\u002d07-28"`, 1), m("tools/list"), "ok"},
		{"body version escaped, other value", strings.Replace(list, `protocolVersion":"2026-07-28"`, `protocolVersion":"2026\u002d07-29"`, 1), m("tools/list"),
			mismatchBody("MCP-Protocol-Version header value '2026-07-28' does not match body value '2026-07-29'")},
		{"body version not a string", strings.Replace(list, `protocolVersion":"2026-07-28"`, `protocolVersion":7`, 1), m("tools/list"), "ok"},
		{"no body version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, m("tools/list"), "ok"},
		{"client response", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil, "ok"},
		{"method missing", list, nil, mismatchBody("Mcp-Method header is required on the modern path")},
		{"method mismatch", list, m("prompts/list"), mismatchBody("Mcp-Method header value 'prompts/list' does not match body value 'tools/list'")},
		{"method value case", list, m("Tools/List"), mismatchBody("Mcp-Method header value 'Tools/List' does not match body value 'tools/list'")},
		{"method name lower-case", list, []string{"mcp-method", "tools/list"}, "ok"},
		{"method name upper-case", list, []string{"MCP-METHOD", "tools/list"}, "ok"},
		{"method sent twice", list, []string{HeaderMethod, "tools/list", "+" + HeaderMethod, "tools/list"},
			mismatchBody("Mcp-Method header is sent more than once")},
		{"version sent twice", list, append(m("tools/list"), "+"+HeaderProtocolVersion, "2026-07-28"),
			mismatchBody("MCP-Protocol-Version header is sent more than once")},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil,
			strings.Replace(mismatchBody("Mcp-Method header is required on the modern path"), `"id":1`, `"id":null`, 1)},
		{"name", echo, append(m("tools/call"), HeaderName, "echo"), "ok"},
		{"name with spaces around", echo, append(m("tools/call"), HeaderName, "  echo\t"), "ok"},
		{"name missing", echo, m("tools/call"), mismatchBody("Mcp-Name header is required for `tools/call`")},
		{"name mismatch", echo, append(m("tools/call"), HeaderName, "Echo"), mismatchBody("Mcp-Name header value 'Echo' does not match body value 'echo'")},
		{"name sent twice", echo, append(m("tools/call"), HeaderName, "echo", "+"+HeaderName, "echo"), mismatchBody("Mcp-Name header is sent more than once")},
		{"name absent from the body", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + env + `}}`, m("tools/call"), "ok"},
		{"name on another method is not checked", list, append(m("tools/list"), HeaderName, "whatever"), "ok"},
		{"base64 name", get, append(m("prompts/get"), HeaderName, "=?base64?Z3LDvMOfZQ==?="), "ok"},
		{"raw non-ASCII name", get, append(m("prompts/get"), HeaderName, "grüße"), mismatchBody("Mcp-Name header value is not valid")},
		{"base64 without padding", echo, append(m("tools/call"), HeaderName, "=?base64?ZWNobw?="), mismatchBody("Mcp-Name header value is not valid")},
		{"base64 with a bad character", echo, append(m("tools/call"), HeaderName, "=?base64?ZWN!bw==?="), mismatchBody("Mcp-Name header value is not valid")},
		{"base64 of bytes that are not UTF-8", echo, append(m("tools/call"), HeaderName, "=?base64?/w==?="), mismatchBody("Mcp-Name header value is not valid")},
		{"base64 prefix without suffix is literal", echo, append(m("tools/call"), HeaderName, "=?base64?ZWNobw=="),
			mismatchBody("Mcp-Name header value '=?base64?ZWNobw==' does not match body value 'echo'")},
		{"base64 decoded mismatch", echo, append(m("tools/call"), HeaderName, "=?base64?ZWNobzI=?="),
			mismatchBody("Mcp-Name header value 'echo2' does not match body value 'echo'")},
		{"uri", read, append(m("resources/read"), HeaderName, "=?base64?dGVzdDovL2EgYg==?="), "ok"},
		{"uri verbatim with an inner space", read, append(m("resources/read"), HeaderName, "test://a b"), "ok"},
		{"uri missing", read, m("resources/read"), mismatchBody("Mcp-Name header is required for `resources/read`")},
		{"prompt missing", get, m("prompts/get"), mismatchBody("Mcp-Name header is required for `prompts/get`")},
	})
}

// Mcp-Param-* headers of x-mcp-header arguments.
func TestMirrorParamHeaders(t *testing.T) {
	url := mirrorServer(t, true)
	good := []string{HeaderMethod, "tools/call", HeaderName, "mirrored",
		"Mcp-Param-Region", "eu-west", "Mcp-Param-Priority", "2.5", "Mcp-Param-Flag", "true"}
	with := func(extra ...string) []string { return append(append([]string(nil), good...), extra...) }
	all := callBody("1", "mirrored", `{"region":"eu-west","priority":2.5,"flag":true,"note":"free"}`)
	prio := func(v string) string { return callBody("1", "mirrored", `{"priority":`+v+`}`) }
	onlyPrio := func(h string) []string {
		return []string{HeaderMethod, "tools/call", HeaderName, "mirrored", "Mcp-Param-Priority", h}
	}
	runMirrorCases(t, url, []mirrorCase{
		{"all mirrored", all, good, "ok"},
		{"header names in any case", all, with("Mcp-Param-Region", "", "mcp-param-region", "eu-west"), "ok"},
		{"base64 value", all, with("Mcp-Param-Region", "=?base64?ZXUtd2VzdA==?="), "ok"},
		{"spaces around", all, with("Mcp-Param-Region", " eu-west "), "ok"},
		{"none sent, none mirrored", callBody("1", "mirrored", `{"note":"x"}`), []string{HeaderMethod, "tools/call", HeaderName, "mirrored"}, "ok"},
		{"null argument needs no header", callBody("1", "mirrored", `{"region":null}`), []string{HeaderMethod, "tools/call", HeaderName, "mirrored"}, "ok"},
		{"no arguments at all", callBody("1", "mirrored", ""), []string{HeaderMethod, "tools/call", HeaderName, "mirrored"}, "ok"},
		{"header missing", all, with("Mcp-Param-Flag", ""),
			mismatchBody("Mcp-Param-Flag header is required: argument `flag` is present")},
		{"argument missing", callBody("1", "mirrored", `{"priority":2.5,"flag":true}`), good,
			mismatchBody("Mcp-Param-Region header is present but argument `region` is not")},
		{"header for a null argument", callBody("1", "mirrored", `{"region":null,"priority":2.5,"flag":true}`), good,
			mismatchBody("Mcp-Param-Region header is present but argument `region` is not")},
		{"string mismatch", all, with("Mcp-Param-Region", "EU-WEST"),
			mismatchBody(`Mcp-Param-Region header value 'EU-WEST' does not match body value 'eu-west'`)},
		{"invalid characters", all, with("Mcp-Param-Region", "eu-wést"), mismatchBody("Mcp-Param-Region header value is not valid")},
		{"invalid base64", all, with("Mcp-Param-Region", "=?base64?ZXUtd2VzdA?="), mismatchBody("Mcp-Param-Region header value is not valid")},
		{"sent twice", all, with("+Mcp-Param-Region", "eu-west"), mismatchBody("Mcp-Param-Region header is sent more than once")},
		{"boolean mismatch", all, with("Mcp-Param-Flag", "True"), mismatchBody("Mcp-Param-Flag header value 'True' does not match body value 'true'")},
		{"boolean false", callBody("1", "mirrored", `{"flag":false}`), []string{HeaderMethod, "tools/call", HeaderName, "mirrored", "Mcp-Param-Flag", "false"}, "ok"},
		{"number by value: trailing zeros", prio("2.5"), onlyPrio("2.50"), "ok"},
		{"number with spaces around it in the body", prio(" 2.5 "), onlyPrio("2.50"), "ok"},
		{"boolean with spaces around it in the body", callBody("1", "mirrored", `{"flag": true }`),
			[]string{HeaderMethod, "tools/call", HeaderName, "mirrored", "Mcp-Param-Flag", "true"}, "ok"},
		{"number by value: exponent", prio("250e-2"), onlyPrio("2.5"), "ok"},
		{"number by value: big exponent", prio("1E3"), onlyPrio("1000"), "ok"},
		{"number by value: zero", prio("0"), onlyPrio("-0.0"), "ok"},
		{"number by value: leading zeros of the fraction", prio("0.001"), onlyPrio("1e-3"), "ok"},
		{"number by value: negative", prio("-12"), onlyPrio("-1.2e1"), "ok"},
		{"number differs", prio("2.5"), onlyPrio("2.6"), mismatchBody("Mcp-Param-Priority header value '2.6' does not match body value '2.5'")},
		{"number sign differs", prio("3"), onlyPrio("-3"), mismatchBody("Mcp-Param-Priority header value '-3' does not match body value '3'")},
		{"number not JSON: hex", prio("16"), onlyPrio("0x10"), mismatchBody("Mcp-Param-Priority header value '0x10' does not match body value '16'")},
		{"number not JSON: plus", prio("1"), onlyPrio("+1"), mismatchBody("Mcp-Param-Priority header value '+1' does not match body value '1'")},
		{"number not JSON: text", prio("1"), onlyPrio("one"), mismatchBody("Mcp-Param-Priority header value 'one' does not match body value '1'")},
		{"huge exponents are refused cheaply", prio("1"), onlyPrio("1e999999999999"),
			mismatchBody("Mcp-Param-Priority header value '1e999999999999' does not match body value '1'")},
		{"identical spelling always matches", prio("1e999999999999"), onlyPrio("1e999999999999"), "ok"},
		{"tool without annotations", callBody("1", "plain", `{"region":"x"}`),
			[]string{HeaderMethod, "tools/call", HeaderName, "plain", "Mcp-Param-Region", "y"}, "ok"},
		{"unknown tool", callBody("1", "nope", `{"region":"x"}`), []string{HeaderMethod, "tools/call", HeaderName, "nope"}, "ok"},
		{"arguments not an object", callBody("1", "mirrored", `[1]`), []string{HeaderMethod, "tools/call", HeaderName, "mirrored"}, "ok"},
	})

	// Without a server the layer cannot know the annotations: Mcp-Param-* are not checked.
	runMirrorCases(t, mirrorServer(t, false), []mirrorCase{
		{"no server", all, []string{HeaderMethod, "tools/call", HeaderName, "mirrored", "Mcp-Param-Region", "elsewhere"}, "ok"},
		{"no server, standard headers still checked", all, []string{HeaderMethod, "tools/call", HeaderName, "other"},
			mismatchBody("Mcp-Name header value 'other' does not match body value 'mirrored'")},
	})
}

// Requests other than POST pass through the layer.
func TestMirrorOtherMethods(t *testing.T) {
	url := mirrorServer(t, true)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if status, _, body := do(t, http.DefaultClient, req); status != http.StatusOK || body != "ok" {
		t.Fatalf("GET: %d %s", status, body)
	}
}

func TestSameValue(t *testing.T) {
	for _, tc := range []struct {
		header, arg string
		want        bool
	}{
		{"a", `"a"`, true},
		{"a", `"b"`, false},
		{`"a"`, `"a"`, false},
		{"é", `"\u00e9"`, true},
		{"1", `1`, true},
		{"1.0", `1`, true},
		{"10", `1e1`, true},
		{"0.1", `1e-1`, true},
		{"100", `1E+2`, true},
		{"-0", `0`, true},
		{"0e5", `0.000`, true},
		{"12.340", `12.34`, true},
		{"1", `2`, false},
		{"-1", `1`, false},
		{"01", `1`, false}, // not a JSON number
		{"1.", `1`, false},
		{"", `0`, false},
		{"1e9999999999999", `1e9999999999998`, false},
		{"true", `true`, true},
		{"false", `false`, true},
		{"true", `false`, false},
		{"1", `true`, false},
		{"null", `null`, false},
		{"{}", `{}`, false},
		{"[1]", `[1]`, false},
	} {
		if got := sameValue(tc.header, jsontext.Value(tc.arg)); got != tc.want {
			t.Errorf("sameValue(%q, %s) = %v, want %v", tc.header, tc.arg, got, tc.want)
		}
	}
}

// A number with an enormous exponent costs next to nothing to compare (arbitrary-precision
// arithmetic would take tens of milliseconds per value).
func TestSameValueHugeExponentIsCheap(t *testing.T) {
	t0 := time.Now()
	for range 1000 {
		if sameValue("1e999999", jsontext.Value(`1e-999999`)) {
			t.Fatal("equal")
		}
		if !sameValue("10e999998", jsontext.Value(`1e999999`)) {
			t.Fatal("not equal")
		}
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("2000 comparisons took %v", d)
	}
}
