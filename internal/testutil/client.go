package testutil

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Media types and header names of the Streamable HTTP transport, as the helpers send them.
const (
	// AcceptBoth is the Accept value of a legacy POST in SSE mode.
	AcceptBoth = "application/json, text/event-stream"
	// AcceptSSE is the Accept value of a GET stream.
	AcceptSSE = "text/event-stream"

	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
)

// Request returns the text of a JSON-RPC request. id is encoded as given (an int, a string, or
// nil for an id-less message, which makes it a notification); params is omitted when nil. A
// json.RawMessage (or []byte holding JSON) is inserted as is.
func Request(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = rawOrValue(params)
	}
	return mustJSON(m)
}

// Notification returns the text of a JSON-RPC notification.
func Notification(method string, params any) string { return Request(nil, method, params) }

// Result returns the text of a client's JSON-RPC response (to a server-to-client request).
func Result(id any, result any) string {
	return mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": rawOrValue(result)})
}

// InitializeParams returns initialize params asking for version, with an empty capability set
// and a client named "testutil".
func InitializeParams(version string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "testutil", "version": "1.0.0"},
	}
}

// Initialize returns the text of an initialize request with the given id and version.
func Initialize(id any, version string) string {
	return Request(id, "initialize", InitializeParams(version))
}

// CallTool returns the text of a tools/call request. A non-nil progressToken goes into _meta.
func CallTool(id any, name string, args any, progressToken any) string {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = rawOrValue(args)
	}
	if progressToken != nil {
		p["_meta"] = map[string]any{"progressToken": progressToken}
	}
	return Request(id, "tools/call", p)
}

func rawOrValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return json.RawMessage(x)
	}
	return v
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("testutil: encoding %v: %v", v, err))
	}
	return string(b)
}

// Wire is a decoded JSON-RPC message as a test inspects it. ID keeps the raw JSON ("null", "1",
// "\"a\"", or empty when the member was absent).
type Wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *WireError      `json:"error"`
}

// WireError is the error member of a JSON-RPC response.
type WireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// DecodeWire decodes one JSON-RPC message, failing the test when it is not a JSON object with
// "jsonrpc": "2.0".
func DecodeWire(t testing.TB, data []byte) Wire {
	t.Helper()
	var w Wire
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %s", err, data)
	}
	if w.JSONRPC != "2.0" {
		t.Fatalf("jsonrpc = %q, want 2.0: %s", w.JSONRPC, data)
	}
	return w
}

// Reply is a whole HTTP answer: status, headers and body.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// ContentType returns the media type of the answer, without parameters.
func (r Reply) ContentType() string {
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(mt)
}

// Message decodes the body as one JSON-RPC message; an SSE body yields its last message event.
func (r Reply) Message(t testing.TB) Wire {
	t.Helper()
	if r.ContentType() == "text/event-stream" {
		msgs := r.Events(t)
		if len(msgs) == 0 {
			t.Fatalf("SSE answer carries no message: %q", r.Body)
		}
		return msgs[len(msgs)-1]
	}
	return DecodeWire(t, r.Body)
}

// Events decodes every message event of an SSE body, in order (comments and the empty priming
// events of resumable streams are skipped).
func (r Reply) Events(t testing.TB) []Wire {
	t.Helper()
	sr := NewSSEReader(bytes.NewReader(r.Body))
	var out []Wire
	for {
		ev, err := sr.NextMessage()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading SSE body: %v", err)
		}
		if ev.Data == "" {
			continue
		}
		out = append(out, DecodeWire(t, []byte(ev.Data)))
	}
}

// WantError checks that the answer is a JSON-RPC error with the given HTTP status, code and
// message, sent as application/json, and that its id is wantID (raw JSON, "null" for none).
func (r Reply) WantError(t testing.TB, status int, code int64, message, wantID string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status = %d, want %d (body %s)", r.Status, status, r.Body)
	}
	if ct := r.ContentType(); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	w := DecodeWire(t, r.Body)
	if w.Error == nil {
		t.Fatalf("not an error response: %s", r.Body)
	}
	if w.Error.Code != code || w.Error.Message != message {
		t.Errorf("error = %d %q, want %d %q", w.Error.Code, w.Error.Message, code, message)
	}
	if got := string(w.ID); got != wantID {
		t.Errorf("id = %s, want %s", got, wantID)
	}
}

// Client is a small MCP client over Streamable HTTP for wire tests. It remembers the session id
// initialize returned and sends it, with the negotiated protocol version, on later requests.
// Header is added to every request (Origin, Authorization, ...).
type Client struct {
	URL             string
	HTTP            *http.Client
	SessionID       string
	ProtocolVersion string
	Header          http.Header
	// Accept is the Accept header of POSTs; empty means AcceptBoth.
	Accept string
}

// NewClient returns a client of the endpoint at url using hc (nil means http.DefaultClient).
func NewClient(url string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{URL: url, HTTP: hc, Header: http.Header{}}
}

// NewPost returns a POST of body with Content-Type application/json, the client's Accept,
// session and protocol headers, and its extra headers.
func (c *Client) NewPost(ctx context.Context, body string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	accept := c.Accept
	if accept == "" {
		accept = AcceptBoth
	}
	req.Header.Set("Accept", accept)
	c.decorate(req)
	return req
}

// NewRequest returns a bodiless request (GET, DELETE, ...) with the client's headers; a GET asks
// for an event stream.
func (c *Client) NewRequest(ctx context.Context, method string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, method, c.URL, nil)
	if err != nil {
		panic(err)
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", AcceptSSE)
	}
	c.decorate(req)
	return req
}

func (c *Client) decorate(req *http.Request) {
	if c.SessionID != "" {
		req.Header.Set(headerSessionID, c.SessionID)
	}
	if c.ProtocolVersion != "" {
		req.Header.Set(headerProtocolVersion, c.ProtocolVersion)
	}
	for k, vs := range c.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
}

// Do sends req and reads the whole answer.
func (c *Client) Do(t testing.TB, req *http.Request) Reply {
	t.Helper()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", req.Method, err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Post sends body as a POST and reads the whole answer.
func (c *Client) Post(t testing.TB, body string) Reply {
	t.Helper()
	return c.Do(t, c.NewPost(context.Background(), body))
}

// Open sends req and returns the live response, for streams; the caller closes its body.
func (c *Client) Open(t testing.TB, req *http.Request) *http.Response {
	t.Helper()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return resp
}

// Initialize runs initialize (id 0, version 2025-11-25 unless the client has a version set) and
// keeps the session id and the negotiated version. It fails the test unless the answer is a
// successful 200 JSON response.
func (c *Client) Initialize(t testing.TB) Reply {
	t.Helper()
	version := c.ProtocolVersion
	if version == "" {
		version = "2025-11-25"
	}
	c.ProtocolVersion = ""
	c.SessionID = ""
	rep := c.Post(t, Initialize(0, version))
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("initialize: status %d, Content-Type %q: %s", rep.Status, rep.Header.Get("Content-Type"), rep.Body)
	}
	w := DecodeWire(t, rep.Body)
	if w.Error != nil {
		t.Fatalf("initialize failed: %s", rep.Body)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(w.Result, &res); err != nil {
		t.Fatalf("initialize result: %v: %s", err, w.Result)
	}
	c.SessionID = rep.Header.Get(headerSessionID)
	c.ProtocolVersion = res.ProtocolVersion
	return rep
}

// Call sends a request and returns its response message (the last message of an SSE answer),
// failing the test unless the status is 200.
func (c *Client) Call(t testing.TB, id any, method string, params any) Wire {
	t.Helper()
	rep := c.Post(t, Request(id, method, params))
	if rep.Status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", method, rep.Status, rep.Body)
	}
	return rep.Message(t)
}

// ModernVersion is the protocol version of the stateless lifecycle the modern helpers speak.
const ModernVersion = "2026-07-28"

// Header names of the 2026-07-28 lifecycle that mirror the body (the helpers spell the wire
// names themselves, independently of the server packages they test).
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// Envelope returns the members of the 2026-07-28 _meta envelope: the protocol version, the
// client's capabilities (an empty object when caps is nil) and a client named "testutil".
func Envelope(version string, caps any) map[string]any {
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "testutil", "version": "1.0.0"},
	}
}

// ModernRequest returns the text of a 2026-07-28 request (id nil makes it a notification): params
// with the envelope of ModernVersion merged into params._meta, where members params already has
// in _meta win (so a test can override or add one, such as a logLevel or progressToken). params
// may be nil.
func ModernRequest(id any, method string, params map[string]any) string {
	p := map[string]any{}
	for k, v := range params {
		p[k] = rawOrValue(v)
	}
	meta := Envelope(ModernVersion, nil)
	if own, ok := params["_meta"].(map[string]any); ok {
		for k, v := range own {
			meta[k] = v
		}
	}
	p["_meta"] = meta
	return Request(id, method, p)
}

// ModernHeaders returns the headers a 2026-07-28 client sends with body: MCP-Protocol-Version
// (the body's envelope version, else ModernVersion), Mcp-Method (the body's method) and, for
// tools/call and prompts/get (params.name) and resources/read (params.uri), Mcp-Name, in the
// =?base64?...?= form when the value is not plain visible ASCII. A body that is not a JSON object
// gets MCP-Protocol-Version alone (tests of malformed bodies add what they need).
func ModernHeaders(body string) http.Header {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name   string `json:"name"`
			URI    string `json:"uri"`
			TaskID string `json:"taskId"`
			Meta   struct {
				Version any `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	h := http.Header{}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		h.Set(headerProtocolVersion, ModernVersion)
		return h
	}
	version := ModernVersion
	if v, ok := m.Params.Meta.Version.(string); ok {
		version = v
	}
	h.Set(headerProtocolVersion, version)
	if m.Method != "" {
		h.Set(headerMethod, m.Method)
	}
	target := ""
	switch m.Method {
	case "tools/call", "prompts/get":
		target = m.Params.Name
	case "resources/read":
		target = m.Params.URI
	case "tasks/get", "tasks/update", "tasks/cancel":
		target = m.Params.TaskID
	}
	if target != "" {
		h.Set(headerName, HeaderValue(target))
	}
	return h
}

// HeaderValue returns s as a 2026-07-28 client writes it in a mirrored header: verbatim when it
// is visible ASCII without surrounding spaces, otherwise =?base64?<standard base64>?=.
func HeaderValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[len(s)-1] != ' '
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain || s == "" {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// NewModernPost returns a POST of body as a 2026-07-28 client sends it: Content-Type
// application/json, the client's Accept (both media types unless set), the headers of
// ModernHeaders, then the client's extra headers (which may override them). It sends no session
// id and ignores the client's ProtocolVersion.
func (c *Client) NewModernPost(ctx context.Context, body string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	accept := c.Accept
	if accept == "" {
		accept = AcceptBoth
	}
	req.Header.Set("Accept", accept)
	for k, vs := range ModernHeaders(body) {
		req.Header[k] = vs
	}
	for k, vs := range c.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	return req
}

// PostModern sends body as a 2026-07-28 POST (see NewModernPost) and reads the whole answer.
func (c *Client) PostModern(t testing.TB, body string) Reply {
	t.Helper()
	return c.Do(t, c.NewModernPost(context.Background(), body))
}

// CallModern sends a 2026-07-28 request and returns its response message (the last message of an
// SSE answer), failing the test unless the status is 200.
func (c *Client) CallModern(t testing.TB, id any, method string, params map[string]any) Wire {
	t.Helper()
	rep := c.PostModern(t, ModernRequest(id, method, params))
	if rep.Status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", method, rep.Status, rep.Body)
	}
	return rep.Message(t)
}
