package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// quiet is a silent logger for runs that are expected to log.
func quiet() *zerolog.Logger { l := zerolog.Nop(); return &l }

// specVersion is the protocol version the fixture tests speak.
const specVersion = "2025-11-25"

// message is a JSON-RPC message as the tests read it.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// client is a minimal Streamable HTTP client of one session.
type client struct {
	t      *testing.T
	url    string
	http   *http.Client
	sid    string
	nextID int

	// answer, when set, answers the server-to-client requests that arrive on a response stream.
	answer func(req message) (result any, err *wireError)
	// requests are the server-to-client requests received so far.
	requests []message
}

// harnessCapabilities are the client capabilities the conformance suite declares.
var harnessCapabilities = map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}}

// newClient starts the fixture behind an httptest server on 127.0.0.1 and opens a session on it
// with the suite's client capabilities: initialize, then notifications/initialized. It returns
// the client and the initialize result.
func newClient(t *testing.T) (*client, json.RawMessage) {
	t.Helper()
	return newClientWith(t, harnessCapabilities)
}

// newClientWith is newClient with the given client capabilities.
func newClientWith(t *testing.T, capabilities map[string]any) (*client, json.RawMessage) {
	t.Helper()
	handler, h := newHandler(newServer())
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	c := &client{t: t, url: srv.URL + "/mcp", http: srv.Client()}

	init := c.request("initialize", map[string]any{
		"protocolVersion": specVersion,
		"capabilities":    capabilities,
		"clientInfo":      map[string]any{"name": "everything-test", "version": "1.0.0"},
	})
	resp := c.post(init)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	if c.sid == "" {
		t.Fatalf("initialize: no Mcp-Session-Id in the response")
	}
	msgs := c.readMessages(resp)
	res := c.resultOf(msgs, init, "initialize")
	testutil.ValidateDef(t, specVersion, "InitializeResult", res)

	note := c.post(mustJSON(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}))
	_ = note.Body.Close()
	if note.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d, want 202", note.StatusCode)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", specVersion)
		if resp, err := c.http.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	})
	return c, res
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request encodes a request with the next id.
func (c *client) request(method string, params any) []byte {
	c.nextID++
	m := map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method}
	if params != nil {
		m["params"] = params
	}
	return mustJSON(c.t, m)
}

// post sends one message and returns the response; the caller reads and closes its body.
func (c *client) post(body []byte) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", specVersion)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", body, err)
	}
	return resp
}

// readMessages reads the messages of a response to a request: one JSON object, or the events of
// an SSE stream up to and including the response. Every message is checked against the schema.
func (c *client) readMessages(resp *http.Response) []message {
	c.t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("status %d, want 200; body %s", resp.StatusCode, b)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var raws [][]byte
	switch mt {
	case "application/json":
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			c.t.Fatal(err)
		}
		raws = append(raws, b)
	case "text/event-stream":
		sr := testutil.NewSSEReader(resp.Body)
		resumed := 0
		for {
			ev, err := sr.NextMessage()
			if errors.Is(err, io.EOF) && sr.LastEventID() != "" && resumed < 3 {
				// The server closed the connection before the response (test_reconnection does):
				// resume the stream as a client does, with a GET carrying Last-Event-ID.
				resumed++
				sr = testutil.NewSSEReader(c.resume(sr.LastEventID()))
				continue
			}
			if err != nil {
				c.t.Fatalf("SSE stream ended before the response: %v", err)
			}
			if ev.Data == "" {
				continue // the priming event of a resumable stream: an id and no message
			}
			raws = append(raws, []byte(ev.Data))
			var m message
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
				c.t.Fatalf("bad message %s: %v", ev.Data, err)
			}
			if m.ID != nil && m.Method == "" {
				break
			}
			if m.ID != nil {
				c.reply(m)
			}
		}
	default:
		c.t.Fatalf("unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
	msgs := make([]message, len(raws))
	for i, raw := range raws {
		testutil.ValidateDef(c.t, specVersion, "JSONRPCMessage", raw)
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			c.t.Fatalf("bad message %s: %v", raw, err)
		}
	}
	return msgs
}

// resume reopens a request's stream after its connection closed: a GET with the session id and
// Last-Event-ID. It returns the body of the new event stream; the caller of readMessages closes
// only the first body, so this one is closed when the test ends.
func (c *client) resume(lastEventID string) io.Reader {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.url, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", specVersion)
	req.Header.Set("Last-Event-ID", lastEventID)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("GET with Last-Event-ID %s: %v", lastEventID, err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("GET with Last-Event-ID %s: status %d, body %s", lastEventID, resp.StatusCode, b)
	}
	return resp.Body
}

// reply answers a server-to-client request with c.answer (method not found without it).
func (c *client) reply(req message) {
	c.t.Helper()
	c.requests = append(c.requests, req)
	out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	var result any
	werr := &wireError{Code: -32601, Message: "Method not found"}
	if c.answer != nil {
		result, werr = c.answer(req)
	}
	if werr != nil {
		out["error"] = werr
	} else {
		out["result"] = result
	}
	resp := c.post(mustJSON(c.t, out))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Errorf("answer to %s: status %d, want 202", req.Method, resp.StatusCode)
	}
}

// resultOf returns the result of the response to req among msgs; it fails the test on an error.
func (c *client) resultOf(msgs []message, req []byte, method string) json.RawMessage {
	c.t.Helper()
	resp := c.responseTo(msgs, req)
	if resp.Error != nil {
		c.t.Fatalf("%s: error %d %q %s", method, resp.Error.Code, resp.Error.Message, resp.Error.Data)
	}
	return resp.Result
}

func (c *client) responseTo(msgs []message, req []byte) message {
	c.t.Helper()
	var sent message
	if err := json.Unmarshal(req, &sent); err != nil {
		c.t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Method == "" && bytes.Equal(m.ID, sent.ID) {
			return m
		}
	}
	c.t.Fatalf("no response to %s", req)
	return message{}
}

// call sends a request and returns its result (validated against def of the schema) and the
// notifications that came before the response.
func (c *client) call(method string, params any, def string) (json.RawMessage, []message) {
	c.t.Helper()
	req := c.request(method, params)
	msgs := c.readMessages(c.post(req))
	res := c.resultOf(msgs, req, method)
	testutil.ValidateDef(c.t, specVersion, def, res)
	var notes []message
	for _, m := range msgs {
		if m.Method != "" && m.ID == nil {
			notes = append(notes, m)
		}
	}
	return res, notes
}

// callError sends a request that must fail and returns the error.
func (c *client) callError(method string, params any) *wireError {
	c.t.Helper()
	req := c.request(method, params)
	resp := c.responseTo(c.readMessages(c.post(req)), req)
	if resp.Error == nil {
		c.t.Fatalf("%s: got result %s, want an error", method, resp.Result)
	}
	return resp.Error
}

// sameJSON fails the test unless got and want are the same JSON value.
func sameJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

const (
	testPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	testWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func TestInitialize(t *testing.T) {
	_, res := newClient(t)
	var got struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	if got.ProtocolVersion != specVersion {
		t.Errorf("protocolVersion %q, want %q", got.ProtocolVersion, specVersion)
	}
	sameJSON(t, "serverInfo", got.ServerInfo, `{"name":"mcpkit-everything","version":"1.0.0"}`)
	sameJSON(t, "capabilities", got.Capabilities, `{
		"tools": {"listChanged": true},
		"prompts": {"listChanged": true},
		"resources": {"subscribe": true, "listChanged": true},
		"logging": {},
		"completions": {},
		"extensions": {"io.modelcontextprotocol/skills": {"directoryRead": true}}
	}`)
}

func TestToolsList(t *testing.T) {
	c, _ := newClient(t)
	res, _ := c.call("tools/list", nil, "ListToolsResult")
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		if tool.Name == "json_schema_2020_12_tool" {
			sameJSON(t, "json_schema_2020_12_tool inputSchema", tool.InputSchema, `{
				"$schema": "https://json-schema.org/draft/2020-12/schema",
				"type": "object",
				"$defs": {"address": {"$anchor": "addressDef", "type": "object",
					"properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
				"properties": {
					"name": {"type": "string"},
					"address": {"$ref": "#/$defs/address"},
					"contactMethod": {"type": "string", "enum": ["phone", "email"]},
					"phone": {"type": "string"},
					"email": {"type": "string"}
				},
				"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
				"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
				"then": {"required": ["phone"]},
				"else": {"required": ["email"]},
				"additionalProperties": false
			}`)
			if tool.Description != "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)" {
				t.Errorf("json_schema_2020_12_tool description %q", tool.Description)
			}
			continue
		}
		switch tool.Name {
		case "test_sampling":
			requires(t, tool.Name, tool.InputSchema, "prompt")
		case "test_elicitation":
			requires(t, tool.Name, tool.InputSchema, "message")
		case "greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task":
			// the tasks extension's tools (tasks.go): typed, tested by tasks_test.go
		case "interop_slow", "interop_trigger_list_changed", "interop_trigger_resource_updated":
			// the interop tools (interop.go): typed, tested by interop_test.go
		case "test_custom_headers": // arguments mirrored in Mcp-Param-* headers (headers.go)
			if !bytes.Contains(tool.InputSchema, []byte(`"x-mcp-header":"Region"`)) {
				t.Errorf("test_custom_headers inputSchema %s has no x-mcp-header", tool.InputSchema)
			}
		default:
			sameJSON(t, tool.Name+" inputSchema", tool.InputSchema, `{"type":"object","properties":{}}`)
		}
	}
	want := []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress",
		"test_error_handling", "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
		"test_elicitation_sep1330_enums", "json_schema_2020_12_tool", "test_reconnection",
	}
	if len(names) == 0 || names[0] != "test_simple_text" {
		t.Errorf("first tool %v, want test_simple_text first", names)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("tool %s is not listed (have %v)", n, names)
		}
	}
	// The listing order is deterministic.
	again, _ := c.call("tools/list", nil, "ListToolsResult")
	if !bytes.Equal(res, again) {
		t.Errorf("tools/list changed between two calls:\n%s\n%s", res, again)
	}
}

// requires checks that an input schema has exactly one property, a required string.
func requires(t *testing.T, tool string, schema json.RawMessage, name string) {
	t.Helper()
	var sch struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &sch); err != nil {
		t.Fatal(err)
	}
	if sch.Type != "object" || len(sch.Properties) != 1 || sch.Properties[name].Type != "string" ||
		!reflect.DeepEqual(sch.Required, []string{name}) {
		t.Errorf("%s inputSchema %s, want one required string %q", tool, schema, name)
	}
}

func TestToolCalls(t *testing.T) {
	c, _ := newClient(t)
	tests := []struct {
		name    string
		content string
		isError bool
	}{
		{"test_simple_text", `[{"type":"text","text":"This is a simple text response for testing."}]`, false},
		{"test_image_content", `[{"type":"image","data":"` + testPNG + `","mimeType":"image/png"}]`, false},
		{"test_audio_content", `[{"type":"audio","data":"` + testWAV + `","mimeType":"audio/wav"}]`, false},
		{"test_embedded_resource", `[{"type":"resource","resource":{"uri":"test://embedded-resource",` +
			`"mimeType":"text/plain","text":"This is an embedded resource content."}}]`, false},
		{"test_multiple_content_types", `[{"type":"text","text":"Multiple content types test:"},` +
			`{"type":"image","data":"` + testPNG + `","mimeType":"image/png"},` +
			`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json",` +
			`"text":"{\"test\":\"data\",\"value\":123}"}}]`, false},
		{"test_error_handling", `[{"type":"text","text":"This tool intentionally returns an error for testing"}]`, true},
		{"test_reconnection", `[{"type":"text","text":"Reconnection test completed successfully. If you received this, ` +
			`the client properly reconnected after stream closure."}]`, false},
	}
	defer func() { c.t = t }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			// No "arguments" key, as the suite calls them.
			res, _ := c.call("tools/call", map[string]any{"name": tt.name}, "CallToolResult")
			var got struct {
				Content json.RawMessage `json:"content"`
				IsError bool            `json:"isError"`
			}
			if err := json.Unmarshal(res, &got); err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "content", got.Content, tt.content)
			if got.IsError != tt.isError {
				t.Errorf("isError %v, want %v", got.IsError, tt.isError)
			}
		})
	}
}

// TestReconnection follows the suite's server-sse-polling scenario: test_reconnection's stream
// opens with a priming event (an id, empty data, a retry field), closes before the response, and
// a GET with the session id and Last-Event-ID delivers the response, once, then ends.
func TestReconnection(t *testing.T) {
	c, _ := newClient(t)
	req := c.request("tools/call", map[string]any{"name": "test_reconnection", "arguments": map[string]any{}})
	resp := c.post(req)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	sr := testutil.NewSSEReader(resp.Body)
	first, err := sr.NextMessage()
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || first.Data != "" || first.Retry == "" {
		t.Fatalf("first event %+v, want a priming event with an id, empty data and a retry field", first)
	}
	if ev, err := sr.NextMessage(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the priming event: %+v, %v; want the stream closed before the response", ev, err)
	}
	gr := testutil.NewSSEReader(c.resume(first.ID))
	var responses int
	for {
		ev, err := gr.NextMessage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs := []message{{}}
		if err := json.Unmarshal([]byte(ev.Data), &msgs[0]); err != nil {
			t.Fatalf("bad message %q: %v", ev.Data, err)
		}
		res := c.resultOf(msgs, req, "tools/call")
		testutil.ValidateDef(t, specVersion, "CallToolResult", res)
		if !strings.Contains(string(res), "the client properly reconnected") {
			t.Fatalf("result %s", res)
		}
		responses++
	}
	if responses != 1 {
		t.Fatalf("%d responses on the resumed stream, want 1", responses)
	}
}

func TestToolWithLogging(t *testing.T) {
	c, _ := newClient(t)
	res, _ := c.call("logging/setLevel", map[string]any{"level": "debug"}, "EmptyResult")
	sameJSON(t, "logging/setLevel result", res, `{}`)

	res, notes := c.call("tools/call", map[string]any{"name": "test_tool_with_logging"}, "CallToolResult")
	sameJSON(t, "content", contentOf(t, res), `[{"type":"text","text":"Tool with logging executed successfully"}]`)
	var data []string
	for _, n := range notes {
		if n.Method != "notifications/message" {
			continue
		}
		testutil.ValidateDef(t, specVersion, "LoggingMessageNotification", mustJSON(t, n))
		var p struct {
			Level string `json:"level"`
			Data  string `json:"data"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Level != "info" {
			t.Errorf("log level %q, want info", p.Level)
		}
		data = append(data, p.Data)
	}
	want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("log messages %q, want %q", data, want)
	}
}

func TestToolWithProgress(t *testing.T) {
	c, _ := newClient(t)
	tests := []struct {
		name     string
		token    any
		wantText string
	}{
		{"string token", "progress-test-1", "progress-test-1"},
		{"number token", 42, "42"},
	}
	defer func() { c.t = t }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			res, notes := c.call("tools/call", map[string]any{
				"name":  "test_tool_with_progress",
				"_meta": map[string]any{"progressToken": tt.token},
			}, "CallToolResult")
			sameJSON(t, "content", contentOf(t, res), `[{"type":"text","text":`+strconv.Quote(tt.wantText)+`}]`)
			var steps []float64
			for _, n := range notes {
				if n.Method != "notifications/progress" {
					continue
				}
				testutil.ValidateDef(t, specVersion, "ProgressNotification", mustJSON(t, n))
				var p struct {
					ProgressToken json.RawMessage `json:"progressToken"`
					Progress      float64         `json:"progress"`
					Total         float64         `json:"total"`
					Message       string          `json:"message"`
				}
				if err := json.Unmarshal(n.Params, &p); err != nil {
					t.Fatal(err)
				}
				sameJSON(t, "progressToken", p.ProgressToken, string(mustJSON(t, tt.token)))
				if p.Total != 100 {
					t.Errorf("total %v, want 100", p.Total)
				}
				if want := "Completed step " + strconv.FormatFloat(p.Progress, 'f', -1, 64) + " of 100"; p.Message != want {
					t.Errorf("message %q, want %q", p.Message, want)
				}
				steps = append(steps, p.Progress)
			}
			if want := []float64{0, 50, 100}; !reflect.DeepEqual(steps, want) {
				t.Errorf("progress %v, want %v", steps, want)
			}
		})
	}
}

func contentOf(t *testing.T, res json.RawMessage) json.RawMessage {
	t.Helper()
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	return r.Content
}

func TestResources(t *testing.T) {
	c, _ := newClient(t)
	res, _ := c.call("resources/list", nil, "ListResourcesResult")
	res = withoutSkills(t, res) // the skill's files: skills_test.go
	sameJSON(t, "resources/list", res, `{"resources":[
		{"uri":"test://static-text","name":"static-text","title":"Static Text Resource",
		 "description":"A static text resource for testing","mimeType":"text/plain"},
		{"uri":"test://static-binary","name":"static-binary","title":"Static Binary Resource",
		 "description":"A static binary resource (a 1x1 PNG) for testing","mimeType":"image/png"},
		{"uri":"test://watched-resource","name":"watched-resource","title":"Watched Resource",
		 "description":"A resource clients may subscribe to","mimeType":"text/plain"}
	]}`)

	res, _ = c.call("resources/templates/list", nil, "ListResourceTemplatesResult")
	sameJSON(t, "resources/templates/list", res, `{"resourceTemplates":[
		{"uriTemplate":"test://template/{id}/data","name":"template","title":"Template Resource",
		 "description":"A JSON document for any id","mimeType":"application/json"}
	]}`)

	reads := []struct{ uri, want string }{
		{"test://static-text", `{"contents":[{"uri":"test://static-text","mimeType":"text/plain",` +
			`"text":"This is the content of the static text resource."}]}`},
		{"test://static-binary", `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + testPNG + `"}]}`},
		{"test://watched-resource", `{"contents":[{"uri":"test://watched-resource","mimeType":"text/plain",` +
			`"text":"Watched resource content"}]}`},
		{"test://template/123/data", `{"contents":[{"uri":"test://template/123/data","mimeType":"application/json",` +
			`"text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]}`},
	}
	for _, r := range reads {
		res, _ := c.call("resources/read", map[string]any{"uri": r.uri}, "ReadResourceResult")
		sameJSON(t, "resources/read "+r.uri, res, r.want)
	}

	const unknown = "test://nonexistent-resource-for-conformance-testing"
	e := c.callError("resources/read", map[string]any{"uri": unknown})
	if e.Code != -32602 {
		t.Errorf("unknown resource: code %d, want -32602", e.Code)
	}
	sameJSON(t, "unknown resource error data", e.Data, `{"uri":"`+unknown+`"}`)

	for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		res, _ := c.call(m, map[string]any{"uri": "test://watched-resource"}, "EmptyResult")
		sameJSON(t, m, res, `{}`)
	}
}

func TestPrompts(t *testing.T) {
	c, _ := newClient(t)
	res, _ := c.call("prompts/list", nil, "ListPromptsResult")
	var list struct {
		Prompts []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Arguments   json.RawMessage `json:"arguments"`
		} `json:"prompts"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
		if p.Name == "test_prompt_with_arguments" {
			sameJSON(t, "arguments", p.Arguments, `[
				{"name":"arg1","description":"First test argument","required":true},
				{"name":"arg2","description":"Second test argument","required":true}]`)
		}
	}
	want := []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image", "test_input_required_result_prompt"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("prompts %v, want %v", names, want)
	}

	gets := []struct {
		name string
		args map[string]string
		want string
	}{
		{"test_simple_prompt", nil,
			`[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]`},
		{"test_prompt_with_arguments", map[string]string{"arg1": "testValue1", "arg2": "testValue2"},
			`[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]`},
		{"test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"},
			`[{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource",` +
				`"mimeType":"text/plain","text":"Embedded resource content for testing."}}},` +
				`{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]`},
		{"test_prompt_with_image", nil,
			`[{"role":"user","content":{"type":"image","data":"` + testPNG + `","mimeType":"image/png"}},` +
				`{"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]`},
	}
	for _, g := range gets {
		params := map[string]any{"name": g.name}
		if g.args != nil {
			params["arguments"] = g.args
		}
		res, _ := c.call("prompts/get", params, "GetPromptResult")
		var got struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "prompts/get "+g.name, got.Messages, g.want)
	}
}

func TestCompletion(t *testing.T) {
	c, _ := newClient(t)
	tests := []struct {
		prompt, arg, value string
		want               []string
	}{
		{"test_prompt_with_arguments", "arg1", "test", nil}, // what the suite sends
		{"test_prompt_with_arguments", "arg1", "", []string{"value1", "value2", "value3"}},
		{"test_prompt_with_arguments", "arg1", "value2", []string{"value2"}},
		{"test_prompt_with_arguments", "arg2", "opt", []string{"optionA", "optionB", "optionC"}},
		{"test_prompt_with_arguments", "arg2", "optionC", []string{"optionC"}},
		{"test_prompt_with_arguments", "arg3", "", nil},
		{"test_simple_prompt", "arg1", "", nil},
	}
	for _, tt := range tests {
		res, _ := c.call("completion/complete", map[string]any{
			"ref":      map[string]any{"type": "ref/prompt", "name": tt.prompt},
			"argument": map[string]any{"name": tt.arg, "value": tt.value},
		}, "CompleteResult")
		values := tt.want
		if values == nil {
			values = []string{}
		}
		want := map[string]any{"completion": map[string]any{"values": values, "total": len(values), "hasMore": false}}
		sameJSON(t, "completion of "+tt.prompt+"."+tt.arg+" = "+strconv.Quote(tt.value), res, string(mustJSON(t, want)))
	}

	// A resource reference completes to nothing.
	res, _ := c.call("completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"},
		"argument": map[string]any{"name": "id", "value": "1"},
	}, "CompleteResult")
	sameJSON(t, "resource completion", res, `{"completion":{"values":[],"total":0,"hasMore":false}}`)
}

func TestPing(t *testing.T) {
	c, _ := newClient(t)
	res, _ := c.call("ping", nil, "EmptyResult")
	sameJSON(t, "ping", res, `{}`)
}

// TestStdio drives the fixture over stdio through real pipes: initialize, a tool call, then the
// end of input, after which Serve returns.
func TestStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- stdio.Serve(ctx, newServer(), stdio.Options{In: inR, Out: outW, Logger: quiet()})
		_ = outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)

	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() message {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("stdout ended: %v", lines.Err())
		}
		testutil.ValidateDef(t, specVersion, "JSONRPCMessage", lines.Bytes())
		var m message
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("bad frame %s: %v", lines.Bytes(), err)
		}
		return m
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + specVersion +
		`","capabilities":{},"clientInfo":{"name":"everything-test","version":"1.0.0"}}}`)
	m := recv()
	if m.Error != nil {
		t.Fatalf("initialize: %+v", m.Error)
	}
	testutil.ValidateDef(t, specVersion, "InitializeResult", m.Result)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}`)
	m = recv()
	if string(m.ID) != "2" || m.Error != nil {
		t.Fatalf("tools/call: %+v", m)
	}
	testutil.ValidateDef(t, specVersion, "CallToolResult", m.Result)
	sameJSON(t, "content", contentOf(t, m.Result), `[{"type":"text","text":"This is a simple text response for testing."}]`)

	_ = inW.Close()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the end of input")
	}
}

// harnessAnswer answers server-to-client requests the way the conformance suite does.
func harnessAnswer(req message) (any, *wireError) {
	switch req.Method {
	case "sampling/createMessage":
		return map[string]any{
			"role":       "assistant",
			"content":    map[string]any{"type": "text", "text": "This is a test response from the client"},
			"model":      "test-model",
			"stopReason": "endTurn",
		}, nil
	case "elicitation/create":
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(req.Params, &p)
		switch p.Message {
		case "Please review and update the form fields with defaults":
			return map[string]any{"action": "accept", "content": map[string]any{
				"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false}}, nil
		case "Please select options from the enum fields":
			return map[string]any{"action": "accept", "content": map[string]any{
				"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
				"untitledMulti": []string{"option1", "option2"}, "titledMulti": []string{"value1", "value2"}}}, nil
		}
		return map[string]any{"action": "accept", "content": map[string]any{
			"username": "testuser", "email": "test@example.com"}}, nil
	}
	return nil, &wireError{Code: -32601, Message: "Method not found"}
}

func TestServerToClientTools(t *testing.T) {
	c, _ := newClient(t)
	c.answer = harnessAnswer
	tests := []struct {
		tool       string
		args       map[string]any
		method     string // of the server-to-client request
		wantParams string // the request's params, when checked exactly
		wantDef    string
		wantText   string
	}{
		{
			tool:       "test_sampling",
			args:       map[string]any{"prompt": "What is 2+2?"},
			method:     "sampling/createMessage",
			wantParams: `{"messages":[{"role":"user","content":{"type":"text","text":"What is 2+2?"}}],"maxTokens":100}`,
			wantDef:    "CreateMessageRequest",
			wantText:   "LLM response: This is a test response from the client",
		},
		{
			tool:     "test_elicitation",
			args:     map[string]any{"message": "Please provide your information"},
			method:   "elicitation/create",
			wantDef:  "ElicitRequest",
			wantText: `User response: action=accept, content={"email":"test@example.com","username":"testuser"}`,
		},
		{
			tool:   "test_elicitation_sep1034_defaults",
			method: "elicitation/create",
			wantParams: `{"mode":"form","message":"Please review and update the form fields with defaults","requestedSchema":{
				"type":"object","required":[],"properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}}}}`,
			wantDef:  "ElicitRequest",
			wantText: `Elicitation completed: action=accept, content={"age":25,"name":"Jane Smith","score":88,"status":"inactive","verified":false}`,
		},
		{
			tool:   "test_elicitation_sep1330_enums",
			method: "elicitation/create",
			wantParams: `{"mode":"form","message":"Please select options from the enum fields","requestedSchema":{
				"type":"object","required":[],"properties":{
				"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[
					{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},
					{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],
					"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,
					"items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,
					"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},
					{"const":"value3","title":"Third Choice"}]}}}}}`,
			wantDef: "ElicitRequest",
			wantText: `Elicitation completed: action=accept, content={"legacyEnum":"opt1","titledMulti":["value1","value2"],` +
				`"titledSingle":"value1","untitledMulti":["option1","option2"],"untitledSingle":"option1"}`,
		},
	}
	defer func() { c.t = t }()
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			c.t = t
			c.requests = nil
			params := map[string]any{"name": tt.tool}
			if tt.args != nil {
				params["arguments"] = tt.args
			}
			res, _ := c.call("tools/call", params, "CallToolResult")
			sameJSON(t, "content", contentOf(t, res), `[{"type":"text","text":`+strconv.Quote(tt.wantText)+`}]`)
			if len(c.requests) != 1 {
				t.Fatalf("got %d server-to-client requests, want 1", len(c.requests))
			}
			req := c.requests[0]
			if req.Method != tt.method {
				t.Errorf("server-to-client request %s, want %s", req.Method, tt.method)
			}
			testutil.ValidateDef(t, specVersion, tt.wantDef, mustJSON(t, req))
			if tt.wantParams != "" {
				sameJSON(t, tt.method+" params", req.Params, tt.wantParams)
			}
		})
	}
}

func TestServerToClientWithoutCapabilities(t *testing.T) {
	c, _ := newClientWith(t, map[string]any{})
	for _, tool := range []string{"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults"} {
		args := map[string]any{"prompt": "hi", "message": "hi"}
		switch tool {
		case "test_sampling":
			delete(args, "message")
		case "test_elicitation":
			delete(args, "prompt")
		default:
			args = nil
		}
		params := map[string]any{"name": tool}
		if args != nil {
			params["arguments"] = args
		}
		res, _ := c.call("tools/call", params, "CallToolResult")
		var got struct {
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		if !got.IsError {
			t.Errorf("%s without the client capability: %s, want an isError result", tool, res)
		}
	}
	if len(c.requests) != 0 {
		t.Errorf("the server sent %d requests to a client without the capabilities", len(c.requests))
	}
}
