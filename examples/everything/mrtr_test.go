package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// Multi round-trip results (SEP-2322) over real HTTP: the fixture's input_required tools and
// prompt on the 2026-07-28 wire (the client fulfils and retries) and on the legacy wire (the
// server fulfils them itself on the POST's SSE stream), and the legacy shim's failure modes.

const mrtrVersion = "2026-07-28"

// mrtrAnswer answers the fixture's input requests the way the conformance harness does.
func mrtrAnswer(method string, params json.RawMessage) (any, *wireError) {
	switch method {
	case "sampling/createMessage":
		var p struct {
			Messages []struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(params, &p)
		text := "The capital of France is Paris."
		if len(p.Messages) > 0 && p.Messages[0].Content.Text == "Generate a greeting" {
			text = "Hello there!"
		}
		return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": text}, "model": "test-model"}, nil
	case "roots/list":
		return map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}}, nil
	case "elicitation/create":
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(params, &p)
		content := map[string]any{}
		switch p.Message {
		case "What is your name?", "Step 1: What is your name?":
			content["name"] = "Alice"
		case "Step 2: What is your favorite color?":
			content["color"] = "blue"
		case "Please confirm":
			content["ok"] = true
		case "Please provide a value":
			content["value"] = "v"
		case "What context should the prompt use?":
			content["context"] = "the context"
		}
		return map[string]any{"action": "accept", "content": content}, nil
	}
	return nil, &wireError{Code: -32601, Message: "Method not found"}
}

// mrtrCases are the fixture's input_required entries and what they complete with.
var mrtrCases = []struct {
	method, name string
	want         string
	legs         int // input requests the fixture makes in total
}{
	{"tools/call", "test_input_required_result_elicitation", "Hello, Alice!", 1},
	{"tools/call", "test_input_required_result_sampling", "Sampling result: The capital of France is Paris.", 1},
	{"tools/call", "test_input_required_result_list_roots", "Found 1 root(s)", 1},
	{"tools/call", "test_input_required_result_request_state", "state-ok: requestState validated", 1},
	{"tools/call", "test_input_required_result_multiple_inputs", "Name: Alice; Greeting: Hello there!; Roots: 1", 3},
	{"tools/call", "test_input_required_result_multi_round", "Multi-round complete for Alice who likes blue", 2},
	{"tools/call", "test_input_required_result_tampered_state", "integrity-ok: state verified", 1},
	{"tools/call", "test_input_required_result_capabilities", "capabilities-ok: received elicit_input, sample_input", 2},
	{"prompts/get", "test_input_required_result_prompt", "Prompt with context: the context", 1},
}

// mrtrText returns the text of a tools/call or prompts/get result.
func mrtrText(t *testing.T, result json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("result %s: %v", result, err)
	}
	switch {
	case len(r.Content) > 0:
		return r.Content[0].Text
	case len(r.Messages) > 0:
		return r.Messages[0].Content.Text
	}
	t.Fatalf("result without text: %s", result)
	return ""
}

func mrtrDef(method string) string {
	if method == "prompts/get" {
		return "GetPromptResult"
	}
	return "CallToolResult"
}

// mrtrS2CDef is the 2025-11-25 definition of a server-to-client request.
var mrtrS2CDef = map[string]string{
	"elicitation/create":     "ElicitRequest",
	"sampling/createMessage": "CreateMessageRequest",
	"roots/list":             "ListRootsRequest",
}

// TestInputRequiredLegacyHTTP: a legacy client calls the fixture's input_required entries and
// sees ordinary server-to-client requests on the POST's stream, then the complete result.
func TestInputRequiredLegacyHTTP(t *testing.T) {
	c, _ := newClientWith(t, map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}, "roots": map[string]any{}})
	c.answer = func(req message) (any, *wireError) { return mrtrAnswer(req.Method, req.Params) }
	defer func() { c.t = t }()
	for _, tt := range mrtrCases {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.requests = nil
			res, _ := c.call(tt.method, map[string]any{"name": tt.name}, mrtrDef(tt.method))
			if got := mrtrText(t, res); got != tt.want {
				t.Errorf("completed with %q, want %q", got, tt.want)
			}
			if strings.Contains(string(res), "resultType") {
				t.Errorf("a legacy result carries resultType: %s", res)
			}
			if len(c.requests) != tt.legs {
				t.Errorf("%d server-to-client requests, want %d", len(c.requests), tt.legs)
			}
			for _, r := range c.requests {
				testutil.ValidateDef(t, specVersion, mrtrS2CDef[r.Method], mustJSON(t, r))
			}
		})
	}
}

// mrtrClient speaks the 2026-07-28 lifecycle to an endpoint: no session, the envelope in
// every request, the mirror headers.
type mrtrClient struct {
	t    *testing.T
	url  string
	http *http.Client
	id   int
}

func newMRTRClient(t *testing.T, s *core.Server) *mrtrClient {
	t.Helper()
	handler, h := newHandler(s)
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	return &mrtrClient{t: t, url: srv.URL + "/mcp", http: srv.Client()}
}

// call sends one request declaring caps and returns the HTTP status and the response message.
func (m *mrtrClient) call(method string, params map[string]any, caps any) (int, message, []byte) {
	m.t.Helper()
	m.id++
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if caps == nil {
		caps = map[string]any{}
	}
	p["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mrtrVersion,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "everything-test", "version": "1.0.0"},
	}
	body := mustJSON(m.t, map[string]any{"jsonrpc": "2.0", "id": m.id, "method": method, "params": p})
	req, err := http.NewRequest(http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mrtrVersion)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := m.http.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		m.t.Fatal(err)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		sr := testutil.NewSSEReader(bytes.NewReader(raw))
		var last []byte
		for {
			ev, err := sr.NextMessage()
			if err != nil {
				break
			}
			last = []byte(ev.Data)
		}
		raw = last
	}
	var msg message
	if err := json.Unmarshal(raw, &msg); err != nil {
		m.t.Fatalf("%s: status %d, body %q: %v", method, resp.StatusCode, raw, err)
	}
	if string(msg.ID) != fmt.Sprint(m.id) {
		m.t.Fatalf("response id %s, want %d: %s", msg.ID, m.id, raw)
	}
	return resp.StatusCode, msg, raw
}

// mrtrResult is a decoded input_required result.
type mrtrResult struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState *string `json:"requestState"`
}

var mrtrCaps = map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}, "roots": map[string]any{}}

// TestInputRequiredModernHTTP: a 2026-07-28 client gets input_required from the fixture, fulfils
// the requests itself and retries with a new id, the answers and the echoed state, until the
// result is complete; every answer follows the 2026-07-28 schema.
func TestInputRequiredModernHTTP(t *testing.T) {
	m := newMRTRClient(t, newServer())
	for _, tt := range mrtrCases {
		t.Run(tt.name, func(t *testing.T) {
			m.t = t
			params := map[string]any{"name": tt.name}
			var states []string
			legs := 0
			for round := 1; ; round++ {
				status, msg, raw := m.call(tt.method, params, mrtrCaps)
				if status != http.StatusOK || msg.Error != nil {
					t.Fatalf("round %d: status %d: %s", round, status, raw)
				}
				testutil.ValidateDef(t, mrtrVersion, mrtrDef(tt.method)+"Response", raw)
				var ir mrtrResult
				if err := json.Unmarshal(msg.Result, &ir); err != nil {
					t.Fatal(err)
				}
				if ir.ResultType == "complete" {
					testutil.ValidateDef(t, mrtrVersion, mrtrDef(tt.method), msg.Result)
					if got := mrtrText(t, msg.Result); got != tt.want {
						t.Errorf("completed with %q, want %q", got, tt.want)
					}
					break
				}
				if ir.ResultType != "input_required" || round > 5 {
					t.Fatalf("round %d: %s", round, msg.Result)
				}
				testutil.ValidateDef(t, mrtrVersion, "InputRequiredResult", msg.Result)
				responses := map[string]any{}
				for k, r := range ir.InputRequests {
					legs++
					res, werr := mrtrAnswer(r.Method, r.Params)
					if werr != nil {
						t.Fatalf("cannot answer %s", r.Method)
					}
					responses[k] = res
				}
				params = map[string]any{"name": tt.name, "inputResponses": responses}
				if ir.RequestState != nil {
					for _, s := range states {
						if s == *ir.RequestState {
							t.Errorf("round %d reissued a state", round)
						}
					}
					states = append(states, *ir.RequestState)
					params["requestState"] = *ir.RequestState
				}
			}
			if legs != tt.legs {
				t.Errorf("%d input requests, want %d", legs, tt.legs)
			}
		})
	}
	m.t = t

	t.Run("tampered state", func(t *testing.T) {
		m.t = t
		name := "test_input_required_result_tampered_state"
		_, msg, _ := m.call("tools/call", map[string]any{"name": name}, mrtrCaps)
		var ir mrtrResult
		json.Unmarshal(msg.Result, &ir)
		if ir.RequestState == nil {
			t.Fatalf("no requestState: %s", msg.Result)
		}
		confirm, _ := mrtrAnswer("elicitation/create", json.RawMessage(`{"message":"Please confirm"}`))
		_, msg, raw := m.call("tools/call", map[string]any{"name": name, "requestState": *ir.RequestState + "-TAMPERED",
			"inputResponses": map[string]any{"confirm": confirm}}, mrtrCaps)
		if msg.Error == nil || msg.Error.Code != -32602 || msg.Error.Message != "Invalid or expired requestState" {
			t.Errorf("tampered state: %s", raw)
		}
		testutil.ValidateDef(t, mrtrVersion, "JSONRPCErrorResponse", raw)
	})

	t.Run("validate input", func(t *testing.T) {
		m.t = t
		for _, responses := range []any{nil, map[string]any{"user_name": 12345}} {
			_, msg, raw := m.call("tools/call", map[string]any{"name": "test_input_required_result_elicitation", "inputResponses": responses}, mrtrCaps)
			if msg.Error == nil || msg.Error.Code != -32602 {
				t.Errorf("inputResponses %v: %s", responses, raw)
			}
		}
	})

	t.Run("capabilities decide what is asked", func(t *testing.T) {
		m.t = t
		for _, tt := range []struct {
			caps any
			keys string // the keys asked, or the text of a complete result
		}{
			{map[string]any{"sampling": map[string]any{}}, "sample_input"},
			{map[string]any{"elicitation": map[string]any{}}, "elicit_input"},
			{map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "sampling": map[string]any{}}, "elicit_input,sample_input"},
			{map[string]any{"elicitation": map[string]any{"url": map[string]any{}}, "sampling": map[string]any{}}, "sample_input"},
			{map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, "No supported capabilities declared"},
			{map[string]any{}, "No supported capabilities declared"},
		} {
			status, msg, raw := m.call("tools/call", map[string]any{"name": "test_input_required_result_capabilities"}, tt.caps)
			if status != http.StatusOK || msg.Error != nil {
				t.Errorf("caps %v: status %d %s", tt.caps, status, raw)
				continue
			}
			var ir mrtrResult
			json.Unmarshal(msg.Result, &ir)
			got := ""
			if ir.ResultType == "complete" {
				got = mrtrText(t, msg.Result)
			} else {
				var keys []string
				for k := range ir.InputRequests {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				got = strings.Join(keys, ",")
			}
			if got != tt.keys {
				t.Errorf("caps %v: got %q, want %q", tt.caps, got, tt.keys)
			}
		}
	})

	t.Run("missing capability", func(t *testing.T) {
		m.t = t
		status, msg, raw := m.call("tools/call", map[string]any{"name": "test_input_required_result_multiple_inputs"}, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
		if status != http.StatusBadRequest || msg.Error == nil || msg.Error.Code != -32021 {
			t.Fatalf("status %d: %s", status, raw)
		}
		sameJSON(t, "error data", msg.Error.Data, `{"requiredCapabilities":{"elicitation":{"form":{}},"sampling":{},"roots":{}}}`)
		testutil.ValidateDef(t, mrtrVersion, "MissingRequiredClientCapabilityError", raw)
	})
}

// ---- The legacy shim's failure modes over HTTP ----

// mrtrShimServer has the tools of the shim scenarios: once (one elicitation), rounds (four
// rounds, the state growing), forever (asks every time), model (one sampling), url (a URL
// elicitation), escalate (an elicitation, then roots and sampling).
func mrtrShimServer(opts core.Options) *core.Server {
	opts.Logger = quiet()
	s := core.NewServer(core.Implementation{Name: "shim-test", Version: "1.0.0"}, opts)
	add := func(name string, h func(req *core.ToolRequest) (string, error)) {
		s.AddTool(&core.Tool{Name: name, InputSchema: noArgs}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			text, err := h(req)
			if err != nil {
				return nil, err
			}
			return core.TextResult(text), nil
		})
	}
	ask := func(msg string) core.InputRequest { return askName(msg) }
	add("once", func(req *core.ToolRequest) (string, error) {
		if name, ok := field(elicited(req, "q"), "name"); ok {
			return "hello " + name, nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"q": ask("What is your name?")}, "")
	})
	add("rounds", func(req *core.ToolRequest) (string, error) {
		state, _ := req.RequestState()
		if len(state) == 4 {
			return "rounds " + state, nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"q": ask("What is your name?")}, state+"r")
	})
	add("forever", func(req *core.ToolRequest) (string, error) {
		return "", core.NeedInput(map[string]core.InputRequest{"q": ask("What is your name?")}, "")
	})
	add("model", func(req *core.ToolRequest) (string, error) {
		if r, ok := req.SamplingResponse("m"); ok {
			return sampledText(r), nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"m": sample("hi", 5)}, "")
	})
	add("url", func(req *core.ToolRequest) (string, error) {
		if r, ok := req.ElicitResponse("u"); ok {
			return "url " + r.Action, nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"u": core.ElicitInput(core.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/login"})}, "")
	})
	add("escalate", func(req *core.ToolRequest) (string, error) {
		if req.InputResponses() == nil {
			return "", core.NeedInput(map[string]core.InputRequest{"q": ask("What is your name?")}, "")
		}
		return "", core.NeedInput(map[string]core.InputRequest{"r": core.RootsInput(), "m": sample("hi", 5)}, "")
	})
	return s
}

// mrtrShimClient is a legacy client of an endpoint serving s with opts.
func mrtrShimClient(t *testing.T, s *core.Server, opts mcphttp.Options, caps map[string]any) *client {
	t.Helper()
	h := mcphttp.New(s, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	c := &client{t: t, url: srv.URL, http: srv.Client()}
	init := c.request("initialize", map[string]any{
		"protocolVersion": specVersion,
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "shim-test", "version": "1.0.0"},
	})
	resp := c.post(init)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	if c.sid == "" && !opts.Stateless {
		t.Fatal("initialize: no session id")
	}
	c.resultOf(c.readMessages(resp), init, "initialize")
	return c
}

// mrtrExchange posts a request and reads its SSE stream (or JSON answer), answering each
// server-to-client request with answer by POSTing the response with the session id
// (nil: leave it unanswered). It returns the response, the requests and the notifications.
func (c *client) mrtrExchange(method string, params any, answer func(req message) (any, *wireError, bool)) (message, []message, []message) {
	c.t.Helper()
	body := c.request(method, params)
	resp := c.post(body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var reqs, notes []message
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/json" {
		b, _ := io.ReadAll(resp.Body)
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatal(err)
		}
		testutil.ValidateDef(c.t, specVersion, "JSONRPCMessage", b)
		return m, nil, nil
	}
	sr := testutil.NewSSEReader(resp.Body)
	for {
		ev, err := sr.NextMessage()
		if err != nil {
			c.t.Fatalf("the stream ended before the response: %v", err)
		}
		if ev.Data == "" {
			continue // the priming event of a resumable stream
		}
		testutil.ValidateDef(c.t, specVersion, "JSONRPCMessage", []byte(ev.Data))
		var m message
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			c.t.Fatal(err)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			reqs = append(reqs, m)
			if def := mrtrS2CDef[m.Method]; def != "" {
				testutil.ValidateDef(c.t, specVersion, def, []byte(ev.Data))
			}
			result, werr, ok := answer(m)
			if !ok {
				continue
			}
			out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
			if werr != nil {
				out["error"] = werr
			} else {
				out["result"] = result
			}
			r := c.post(mustJSON(c.t, out))
			r.Body.Close()
			if r.StatusCode != http.StatusAccepted {
				c.t.Errorf("answer to %s: status %d", m.Method, r.StatusCode)
			}
		case m.Method != "":
			notes = append(notes, m)
		default:
			return m, reqs, notes
		}
	}
}

func mrtrAnswerAll(req message) (any, *wireError, bool) {
	res, werr := mrtrAnswer(req.Method, req.Params)
	return res, werr, true
}

func mrtrWantError(t *testing.T, m message, code int, message string, data string) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code || m.Error.Message != message {
		t.Fatalf("want error %d %q, got %+v (result %s)", code, message, m.Error, m.Result)
	}
	if data != "" {
		var got string
		if err := json.Unmarshal(m.Error.Data, &got); err != nil || got != data {
			t.Errorf("error data %s, want %q", m.Error.Data, data)
		}
	}
}

// TestLegacyShimHTTP: the shim's rounds and failures over a real legacy SSE session.
func TestLegacyShimHTTP(t *testing.T) {
	call := func(c *client, name string, answer func(message) (any, *wireError, bool)) (message, []message, []message) {
		return c.mrtrExchange("tools/call", map[string]any{"name": name}, answer)
	}
	t.Run("one round", func(t *testing.T) {
		c := mrtrShimClient(t, mrtrShimServer(core.Options{}), mcphttp.Options{}, mrtrCaps)
		m, reqs, _ := call(c, "once", mrtrAnswerAll)
		if m.Error != nil || mrtrText(t, m.Result) != "hello Alice" || len(reqs) != 1 {
			t.Errorf("%+v %s after %d legs", m.Error, m.Result, len(reqs))
		}
		testutil.ValidateDef(t, specVersion, "CallToolResult", m.Result)
	})
	t.Run("several rounds", func(t *testing.T) {
		c := mrtrShimClient(t, mrtrShimServer(core.Options{}), mcphttp.Options{}, mrtrCaps)
		m, reqs, _ := call(c, "rounds", mrtrAnswerAll)
		if m.Error != nil || mrtrText(t, m.Result) != "rounds rrrr" || len(reqs) != 4 {
			t.Errorf("%+v %s after %d legs", m.Error, m.Result, len(reqs))
		}
	})
	t.Run("the round limit", func(t *testing.T) {
		c := mrtrShimClient(t, mrtrShimServer(core.Options{}), mcphttp.Options{}, mrtrCaps)
		m, reqs, _ := call(c, "forever", mrtrAnswerAll)
		msg := "Handler still returned `input_required` after 8 legacy shim rounds (SEP-2322)"
		mrtrWantError(t, m, -32603, msg, msg)
		if len(reqs) != 8 {
			t.Errorf("%d legs, want 8", len(reqs))
		}
	})
	t.Run("a client error on a leg", func(t *testing.T) {
		c := mrtrShimClient(t, mrtrShimServer(core.Options{}), mcphttp.Options{}, mrtrCaps)
		m, reqs, _ := call(c, "model", func(message) (any, *wireError, bool) {
			return nil, &wireError{Code: -1, Message: "declined"}, true
		})
		mrtrWantError(t, m, -32603, "Internal error", "Internal error handling tools/call request")
		if len(reqs) != 1 {
			t.Errorf("%d legs", len(reqs))
		}
	})
	t.Run("a leg times out", func(t *testing.T) {
		c := mrtrShimClient(t, mrtrShimServer(core.Options{ServerToClientRequestTimeout: 50 * time.Millisecond}), mcphttp.Options{}, mrtrCaps)
		m, reqs, notes := call(c, "model", func(message) (any, *wireError, bool) { return nil, nil, false })
		msg := "sampling/createMessage request timed out after 0.05 seconds"
		mrtrWantError(t, m, -32001, msg, msg)
		if len(reqs) != 1 || len(notes) != 1 || notes[0].Method != "notifications/cancelled" {
			t.Errorf("legs %d, notifications %+v", len(reqs), notes)
		}
	})
	t.Run("URL elicitation gets an elicitationId", func(t *testing.T) {
		caps := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
		c := mrtrShimClient(t, mrtrShimServer(core.Options{}), mcphttp.Options{}, caps)
		m, reqs, _ := call(c, "url", func(message) (any, *wireError, bool) { return map[string]any{"action": "accept"}, nil, true })
		if m.Error != nil || mrtrText(t, m.Result) != "url accept" || len(reqs) != 1 {
			t.Fatalf("%+v %s after %d legs", m.Error, m.Result, len(reqs))
		}
		var p struct {
			Mode          string `json:"mode"`
			URL           string `json:"url"`
			ElicitationID string `json:"elicitationId"`
		}
		json.Unmarshal(reqs[0].Params, &p)
		if p.Mode != "url" || p.URL != "https://example.com/login" || len(p.ElicitationID) != 36 {
			t.Errorf("URL elicitation params %s", reqs[0].Params)
		}
	})
	t.Run("capabilities are checked every round", func(t *testing.T) {
		c := mrtrShimClient(t, mrtrShimServer(core.Options{}), mcphttp.Options{}, map[string]any{"elicitation": map[string]any{}})
		m, reqs, _ := call(c, "escalate", mrtrAnswerAll)
		msg := `input_required requires client capabilities the client did not declare: {"roots":{},"sampling":{}}`
		mrtrWantError(t, m, -32603, msg, msg)
		if len(reqs) != 1 {
			t.Errorf("%d legs, want the first round's only", len(reqs))
		}
	})
	const needsModern = "input_required results require the 2026-07-28 stateless lifecycle (SEP-2322)"
	for _, tt := range []struct {
		name string
		srv  core.Options
		http mcphttp.Options
	}{
		{"JSON response mode", core.Options{}, mcphttp.Options{JSONResponse: true}},
		{"stateless mode", core.Options{}, mcphttp.Options{Stateless: true}},
		{"DisableInputShim", core.Options{DisableInputShim: true}, mcphttp.Options{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mrtrShimClient(t, mrtrShimServer(tt.srv), tt.http, mrtrCaps)
			m, reqs, _ := call(c, "once", mrtrAnswerAll)
			mrtrWantError(t, m, -32603, "Internal error", needsModern)
			if len(reqs) != 0 {
				t.Errorf("%d legs sent", len(reqs))
			}
		})
	}
}

// TestRequestStateAudienceHTTP: with mcphttp.Options.Principal naming the user, a state issued
// to one user is refused for another and for nobody, and one issued to nobody is refused for a
// user, over the real 2026-07-28 wire.
func TestRequestStateAudienceHTTP(t *testing.T) {
	s := mrtrShimServer(core.Options{RequestState: core.RequestStateOptions{Key: bytes.Repeat([]byte{7}, 32)}})
	s.AddTool(&core.Tool{Name: "whoami", InputSchema: noArgs}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if state, ok := req.RequestState(); ok {
			return core.TextResult("state " + state), nil
		}
		return nil, core.NeedInput(nil, "issued")
	})
	h := mcphttp.New(s, mcphttp.Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		srv.Close()
	})
	m := &mrtrClient{t: t, url: srv.URL, http: srv.Client()}
	as := func(user string) {
		m.http = &http.Client{Transport: mrtrUserTransport{user: user, next: srv.Client().Transport}}
	}
	as("alice")
	_, msg, raw := m.call("tools/call", map[string]any{"name": "whoami"}, nil)
	var ir mrtrResult
	if err := json.Unmarshal(msg.Result, &ir); err != nil || ir.RequestState == nil {
		t.Fatalf("no requestState: %s", raw)
	}
	retry := map[string]any{"name": "whoami", "requestState": *ir.RequestState}
	for _, user := range []string{"bob", ""} {
		as(user)
		status, msg, raw := m.call("tools/call", retry, nil)
		if msg.Error == nil || msg.Error.Code != -32602 || msg.Error.Message != "Invalid or expired requestState" {
			t.Errorf("as %q: status %d %s", user, status, raw)
		}
	}
	as("alice")
	_, msg, raw = m.call("tools/call", retry, nil)
	if msg.Error != nil || mrtrText(t, msg.Result) != "state issued" {
		t.Errorf("as alice: %s", raw)
	}
	// A state issued to nobody opens for nobody (two anonymous callers cannot be told apart),
	// never for a user.
	as("")
	_, msg, raw = m.call("tools/call", map[string]any{"name": "whoami"}, nil)
	if err := json.Unmarshal(msg.Result, &ir); err != nil || ir.RequestState == nil {
		t.Fatalf("no requestState for nobody: %s", raw)
	}
	retry = map[string]any{"name": "whoami", "requestState": *ir.RequestState}
	as("alice")
	if _, msg, raw := m.call("tools/call", retry, nil); msg.Error == nil || msg.Error.Code != -32602 {
		t.Errorf("nobody's state as alice: %s", raw)
	}
	as("")
	if _, msg, raw := m.call("tools/call", retry, nil); msg.Error != nil || mrtrText(t, msg.Result) != "state issued" {
		t.Errorf("nobody's state as nobody: %s", raw)
	}
}

// mrtrUserTransport names the user on every request, as an authenticating proxy would.
type mrtrUserTransport struct {
	user string
	next http.RoundTripper
}

func (h mrtrUserTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-User", h.user)
	return h.next.RoundTrip(r)
}
