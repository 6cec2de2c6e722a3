package core_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Tests of multi round-trip results (SEP-2322): input_required on the 2026-07-28 wire, the
// sealed requestState, the capability gate, the checks of a retry, and the legacy shim.

const badState = "Invalid or expired requestState"

// seen is what one handler run saw of a retry.
type seen struct {
	state     string
	hasState  bool
	responses map[string]string // raw JSON by key
}

// mrtrHarness serves one step function behind the three methods that may answer
// input_required (a tool, a prompt and a resource, each under two names or URIs, plus a
// template) and behind a custom method. It counts the handler runs and records what each saw.
type mrtrHarness struct {
	srv  *core.Server
	log  *errorLog
	runs atomic.Int64

	mu   sync.Mutex
	seen []seen
	step func(c *core.Call) (string, error)
}

func newMRTR(t testing.TB, opts *core.Options, step func(c *core.Call) (string, error)) *mrtrHarness {
	t.Helper()
	h := &mrtrHarness{log: newErrorLog(), step: step}
	if opts == nil {
		opts = &core.Options{}
	}
	opts.Logger = h.log.logger()
	h.srv = newServer(opts)
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{}}}`)
	for _, name := range []string{"t", "t2"} {
		h.srv.AddTool(&core.Tool{Name: name, InputSchema: schema}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			text, err := h.run(req.Call)
			if err != nil {
				return nil, err
			}
			return core.TextResult(text), nil
		})
	}
	for _, name := range []string{"p", "p2", "t"} {
		h.srv.AddPrompt(&core.Prompt{Name: name, Arguments: []core.PromptArgument{{Name: "who"}}}, func(_ context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
			text, err := h.run(req.Call)
			if err != nil {
				return nil, err
			}
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text(text)}}}, nil
		})
	}
	resource := func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		text, err := h.run(req.Call)
		if err != nil {
			return nil, err
		}
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: text}}}, nil
	}
	h.srv.AddResource(&core.Resource{URI: "test://r", Name: "r"}, resource)
	h.srv.AddResource(&core.Resource{URI: "test://r2", Name: "r2"}, resource)
	h.srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://items/{id}", Name: "items"}, resource)
	h.srv.HandleMethod("x/ask", func(_ context.Context, c *core.Call) (any, error) {
		text, err := h.run(c)
		if err != nil {
			return nil, err
		}
		return map[string]string{"text": text}, nil
	})
	return h
}

func (h *mrtrHarness) run(c *core.Call) (string, error) {
	h.runs.Add(1)
	s := seen{responses: map[string]string{}}
	s.state, s.hasState = c.RequestState()
	for k, v := range c.InputResponses() {
		s.responses[k] = string(v)
	}
	h.mu.Lock()
	h.seen = append(h.seen, s)
	step := h.step
	h.mu.Unlock()
	return step(c)
}

func (h *mrtrHarness) setStep(step func(c *core.Call) (string, error)) {
	h.mu.Lock()
	h.step = step
	h.mu.Unlock()
}

// last returns what the last handler run saw.
func (h *mrtrHarness) last(t testing.TB) seen {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) == 0 {
		t.Fatal("no handler ran")
	}
	return h.seen[len(h.seen)-1]
}

// target is a request that may answer input_required.
type target struct {
	name   string
	method string
	params map[string]any
	def    string // the definition of its complete result
}

var mrtrTargets = []target{
	{"tool", "tools/call", map[string]any{"name": "t", "arguments": map[string]any{"a": 1, "b": "x"}}, "CallToolResult"},
	{"prompt", "prompts/get", map[string]any{"name": "p", "arguments": map[string]any{"who": "ann"}}, "GetPromptResult"},
	{"resource", "resources/read", map[string]any{"uri": "test://r"}, "ReadResourceResult"},
	{"template", "resources/read", map[string]any{"uri": "test://items/7"}, "ReadResourceResult"},
}

// with returns a copy of params with the given members set (pairs of name and value).
func with(params map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(params)+len(kv)/2)
	for k, v := range params {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// allCaps declares everything an input request can need.
var allCaps = map[string]any{
	"sampling":    map[string]any{"tools": map[string]any{}},
	"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
	"roots":       map[string]any{},
}

// modernCall sends a 2026-07-28 request declaring caps (nil: none) and returns the reply.
func (c *client) modernCall(method string, params map[string]any, caps any) *wire {
	c.t.Helper()
	return c.modernCallCtx(context.Background(), method, params, caps)
}

// modernCallCtx is modernCall with the request's context (for the audience).
func (c *client) modernCallCtx(ctx context.Context, method string, params map[string]any, caps any) *wire {
	c.t.Helper()
	meta := modernMeta(nil)
	if caps != nil {
		meta[metaCaps] = caps
	}
	return c.sendCtx(ctx, body(c.t, c.ids.Add(1), method, withMeta(params, meta)))
}

// sendCtx feeds one raw request with the given context and returns the reply.
func (c *client) sendCtx(ctx context.Context, raw string) *wire {
	c.t.Helper()
	msg, derr := transport.Core.DecodeMessage([]byte(raw))
	if derr != nil {
		c.t.Fatalf("the test's request %s does not decode: %v", raw, derr)
	}
	resp := transport.Core.Handle(c.ss, ctx, msg, nil)
	if resp == nil {
		c.t.Fatalf("no reply to %s", raw)
	}
	return parseWire(c.t, transport.Core.EncodeResponseMessage(resp))
}

// inputRequired is a decoded input_required result.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState *string `json:"requestState"`
}

func (ir *inputRequired) state(t testing.TB) string {
	t.Helper()
	if ir.RequestState == nil {
		t.Fatal("input_required without requestState")
	}
	return *ir.RequestState
}

// wantInputRequired checks an input_required answer against the 2026-07-28 schema (the result
// and its response wrapper) and the rules the schema cannot say: at least one of inputRequests
// and requestState, no cache hints, the server's identity in _meta.
func wantInputRequired(t testing.TB, w *wire, def string) *inputRequired {
	t.Helper()
	if w.Error != nil || w.Result == nil {
		t.Fatalf("want an input_required result, got %s", w)
	}
	testutil.ValidateDef(t, modernVersion, "InputRequiredResult", w.Result)
	testutil.ValidateDef(t, modernVersion, def+"Response", w.raw)
	var members map[string]json.RawMessage
	if err := jsonv2.Unmarshal(w.Result, &members); err != nil {
		t.Fatalf("result %s: %v", w.Result, err)
	}
	for _, k := range []string{"ttlMs", "cacheScope", "content", "messages", "contents"} {
		if members[k] != nil {
			t.Errorf("input_required result carries %s: %s", k, w.Result)
		}
	}
	var meta map[string]json.RawMessage
	if err := jsonv2.Unmarshal(members["_meta"], &meta); err != nil || canon(t, meta[metakey.ServerInfo]) != `{"name":"test-server","version":"1.0.0"}` {
		t.Errorf("input_required result without the server's identity: %s", w.Result)
	}
	var ir inputRequired
	if err := jsonv2.Unmarshal(w.Result, &ir); err != nil {
		t.Fatalf("result %s: %v", w.Result, err)
	}
	if ir.ResultType != "input_required" {
		t.Errorf("resultType %q, want input_required", ir.ResultType)
	}
	if len(ir.InputRequests) == 0 && ir.RequestState == nil {
		t.Errorf("input_required with neither inputRequests nor requestState: %s", w.Result)
	}
	if members["inputRequests"] != nil {
		var raw map[string]json.RawMessage
		if err := jsonv2.Unmarshal(members["inputRequests"], &raw); err != nil {
			t.Fatal(err)
		}
		for k, v := range raw {
			testutil.ValidateDef(t, modernVersion, "InputRequest", v)
			if strings.Contains(string(v), `"jsonrpc"`) || strings.Contains(string(v), `"id"`) {
				t.Errorf("inputRequests[%s] is a JSON-RPC message, not an embedded request: %s", k, v)
			}
		}
	}
	return &ir
}

// complete checks a complete 2026-07-28 answer of def and returns the text it carries.
func complete(t testing.TB, w *wire, def string) string {
	t.Helper()
	checkModernResult(t, w, def)
	return resultText(t, w.Result)
}

// resultText returns the text of a tool, prompt, resource or x/ask result of the harness.
func resultText(t testing.TB, result json.RawMessage) string {
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
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
		Text string `json:"text"`
	}
	if err := jsonv2.Unmarshal(result, &r); err != nil {
		t.Fatalf("result %s: %v", result, err)
	}
	switch {
	case len(r.Content) > 0:
		return r.Content[0].Text
	case len(r.Messages) > 0:
		return r.Messages[0].Content.Text
	case len(r.Contents) > 0:
		return r.Contents[0].Text
	}
	return r.Text
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

func askName() core.InputRequest {
	return core.ElicitInput(core.ElicitParams{Message: "name?", RequestedSchema: nameSchema})
}

func askURL() core.InputRequest {
	return core.ElicitInput(core.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/login"})
}

func askModel(withTools bool) core.InputRequest {
	p := core.CreateMessageParams{
		Messages:  []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("capital of France?")}}},
		MaxTokens: 20,
	}
	if withTools {
		p.Tools = []core.Tool{{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	}
	return core.SamplingInput(p)
}

// Answers a client gives to the input requests.
const (
	elicitAccept = `{"action":"accept","content":{"name":"Ann"}}`
	sampled      = `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m1"}`
	rootsList    = `{"roots":[{"uri":"file:///work","name":"work"}]}`
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// TestInputRequiredShapes: what a handler returns is what the client reads, for each method
// and each of the three shapes; the plaintext state never leaves the server.
func TestInputRequiredShapes(t *testing.T) {
	const plaintext = "the-handlers-own-secret-state"
	shapes := []struct {
		name     string
		ir       *core.InputRequiredError
		requests map[string]string // method and canonical params by key
	}{
		{"requests only", core.NeedInput(map[string]core.InputRequest{"q": askName()}, ""), map[string]string{
			"q": `elicitation/create {"message":"name?","requestedSchema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}`,
		}},
		{"state only", core.NeedInput(nil, plaintext), nil},
		{"both", &core.InputRequiredError{Requests: map[string]core.InputRequest{
			"who":   askName(),
			"model": askModel(false),
			"roots": core.RootsInput(),
			"bare":  core.ElicitInput(core.ElicitParams{Message: "ok?"}),
			"plain": {Method: "roots/list"},
		}, State: plaintext}, map[string]string{
			"plain": `roots/list <absent>`,
			"who":   `elicitation/create {"message":"name?","requestedSchema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}`,
			"model": `sampling/createMessage {"maxTokens":20,"messages":[{"content":{"text":"capital of France?","type":"text"},"role":"user"}]}`,
			"roots": `roots/list {}`,
			"bare":  `elicitation/create {"message":"ok?","requestedSchema":{"properties":{},"type":"object"}}`,
		}},
	}
	for _, tg := range mrtrTargets {
		for _, sh := range shapes {
			t.Run(tg.name+"/"+sh.name, func(t *testing.T) {
				h := newMRTR(t, nil, func(*core.Call) (string, error) { return "", sh.ir })
				c := newClient(t, h.srv)
				ir := wantInputRequired(t, c.modernCall(tg.method, tg.params, allCaps), tg.def)
				got := map[string]string{}
				for k, r := range ir.InputRequests {
					got[k] = r.Method + " " + canon(t, r.Params)
				}
				if len(got) != len(sh.requests) {
					t.Errorf("inputRequests %v, want %v", got, sh.requests)
				}
				for k, want := range sh.requests {
					if got[k] != want {
						t.Errorf("inputRequests[%s] = %s, want %s", k, got[k], want)
					}
				}
				if sh.ir.State == "" {
					if ir.RequestState != nil {
						t.Errorf("requestState %q without a state", *ir.RequestState)
					}
				} else {
					token := ir.state(t)
					if !strings.HasPrefix(token, "v1.") || strings.Contains(token, plaintext) {
						t.Errorf("requestState %q is not a sealed token", token)
					}
				}
				if n := h.runs.Load(); n != 1 {
					t.Errorf("handler ran %d times, want 1", n)
				}
				quiet(t, c.out) // nothing is sent to a 2026-07-28 client besides the answer
			})
		}
	}
}

// TestInputRequiredRetry: a retry brings the inputResponses and the plaintext state to the
// handler, which completes.
func TestInputRequiredRetry(t *testing.T) {
	for _, tg := range mrtrTargets {
		t.Run(tg.name, func(t *testing.T) {
			h := newMRTR(t, nil, func(c *core.Call) (string, error) {
				state, ok := c.RequestState()
				name, okName := c.ElicitResponse("who")
				model, okModel := c.SamplingResponse("model")
				roots, okRoots := c.RootsResponse("roots")
				if !ok || !okName || !okModel || !okRoots {
					return "", core.NeedInput(map[string]core.InputRequest{"who": askName(), "model": askModel(false), "roots": core.RootsInput()}, "round-1")
				}
				return fmt.Sprintf("%s|%s|%v|%s|%s", state, name.Action, name.Content["name"], model.Content[0].Text, roots.Roots[0].URI), nil
			})
			c := newClient(t, h.srv)
			ir := wantInputRequired(t, c.modernCall(tg.method, tg.params, allCaps), tg.def)
			responses := map[string]any{"who": raw(elicitAccept), "model": raw(sampled), "roots": raw(rootsList)}
			w := c.modernCall(tg.method, with(tg.params, "inputResponses", responses, "requestState", ir.state(t)), allCaps)
			if got := complete(t, w, tg.def); got != "round-1|accept|Ann|Paris|file:///work" {
				t.Errorf("handler completed with %q", got)
			}
			s := h.last(t)
			if !s.hasState || s.state != "round-1" {
				t.Errorf("handler saw state %q (%v), want round-1", s.state, s.hasState)
			}
			want := map[string]string{"who": elicitAccept, "model": sampled, "roots": rootsList}
			for k, v := range want {
				if canon(t, raw(s.responses[k])) != canon(t, raw(v)) {
					t.Errorf("inputResponses[%s] = %s, want %s", k, s.responses[k], v)
				}
			}
			first := h.seen[0]
			if first.hasState || len(first.responses) != 0 {
				t.Errorf("the first run saw a retry: %+v", first)
			}
		})
	}
}

// TestInputRequiredMultiRound: a state that changes every round reaches the handler as written,
// and every token differs (even two seals of the same plaintext).
func TestInputRequiredMultiRound(t *testing.T) {
	for _, tg := range mrtrTargets {
		t.Run(tg.name, func(t *testing.T) {
			h := newMRTR(t, nil, func(c *core.Call) (string, error) {
				state, _ := c.RequestState()
				var st struct {
					Round int      `json:"round"`
					Names []string `json:"names"`
				}
				if state != "" {
					if err := jsonv2.Unmarshal([]byte(state), &st); err != nil {
						return "", err
					}
					r, ok := c.ElicitResponse(fmt.Sprint("step", st.Round))
					if !ok {
						return "", core.NeedInput(map[string]core.InputRequest{fmt.Sprint("step", st.Round): askName()}, state)
					}
					st.Names = append(st.Names, fmt.Sprint(r.Content["name"]))
				}
				if st.Round == 3 {
					return strings.Join(st.Names, ","), nil
				}
				st.Round++
				next, _ := jsonv2.Marshal(st)
				return "", core.NeedInput(map[string]core.InputRequest{fmt.Sprint("step", st.Round): askName()}, string(next))
			})
			c := newClient(t, h.srv)
			tokens := map[string]bool{}
			w := c.modernCall(tg.method, tg.params, allCaps)
			for round := 1; round <= 3; round++ {
				ir := wantInputRequired(t, w, tg.def)
				key := fmt.Sprint("step", round)
				if _, ok := ir.InputRequests[key]; !ok || len(ir.InputRequests) != 1 {
					t.Fatalf("round %d asked %v, want %s", round, ir.InputRequests, key)
				}
				token := ir.state(t)
				if tokens[token] {
					t.Fatalf("round %d reissued an earlier token", round)
				}
				tokens[token] = true
				answer := fmt.Sprintf(`{"action":"accept","content":{"name":"n%d"}}`, round)
				w = c.modernCall(tg.method, with(tg.params, "inputResponses", map[string]any{key: raw(answer)}, "requestState", token), allCaps)
				wantState := fmt.Sprintf(`{"round":%d,"names":[`, round)
				if s := h.last(t); !strings.HasPrefix(s.state, wantState) {
					t.Errorf("round %d: handler saw state %q", round, s.state)
				}
			}
			if got := complete(t, w, tg.def); got != "n1,n2,n3" {
				t.Errorf("completed with %q, want n1,n2,n3", got)
			}
			// A retry without its answer asks again, with a fresh token for the same plaintext.
			h.mu.Lock()
			h.seen = nil
			h.mu.Unlock()
			first := wantInputRequired(t, c.modernCall(tg.method, tg.params, allCaps), tg.def)
			again := wantInputRequired(t, c.modernCall(tg.method, with(tg.params, "requestState", first.state(t)), allCaps), tg.def)
			if first.state(t) == again.state(t) {
				t.Error("the same plaintext sealed twice gave the same token")
			}
			if s := h.last(t); s.state != `{"round":1,"names":[]}` {
				t.Errorf("the retry without an answer saw %q", s.state)
			}
		})
	}
}

// TestInputRequiredConstructionRules: a handler breaking the rules gets -32603 on either
// lifecycle (the detail goes to the error log), nothing is sent to the client; a custom method
// cannot answer input_required at all.
func TestInputRequiredConstructionRules(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		log  string
	}{
		{"empty", &core.InputRequiredError{}, "at least one of input requests or request state is required"},
		{"empty requests", core.NeedInput(map[string]core.InputRequest{}, ""), "at least one of"},
		{"typed nil", (*core.InputRequiredError)(nil), "nil *InputRequiredError"},
		{"tools/call as input", core.NeedInput(map[string]core.InputRequest{"x": {Method: "tools/call"}}, "s"), `method "tools/call" cannot be an input request`},
		{"ping as input", core.NeedInput(map[string]core.InputRequest{"x": {Method: "ping"}}, ""), `method "ping" cannot be an input request`},
		{"no method", core.NeedInput(map[string]core.InputRequest{"x": {}}, ""), `method "" cannot be an input request`},
		{"string params", core.NeedInput(map[string]core.InputRequest{"x": {Method: "roots/list", Params: "all"}}, ""), "params must be an object"},
		{"array params", core.NeedInput(map[string]core.InputRequest{"x": {Method: "sampling/createMessage", Params: []int{1}}}, ""), "params must be an object"},
		{"elicitation without params", core.NeedInput(map[string]core.InputRequest{"x": {Method: "elicitation/create"}}, ""), "elicitation/create needs params"},
		{"sampling with nil params", core.NeedInput(map[string]core.InputRequest{"x": {Method: "sampling/createMessage", Params: (*core.CreateMessageParams)(nil)}}, ""), "sampling/createMessage needs params"},
		{"elicitation with nil params", core.NeedInput(map[string]core.InputRequest{"x": {Method: "elicitation/create", Params: (*core.ElicitParams)(nil)}}, ""), "elicitation/create needs params"},
		{"params that do not encode", core.NeedInput(map[string]core.InputRequest{"x": {Method: "roots/list", Params: map[string]any{"c": make(chan int)}}}, ""), "encoding params"},
		{"wrapped", fmt.Errorf("ctx: %w", &core.InputRequiredError{}), "at least one of"},
	} {
		for _, tg := range mrtrTargets[:3] {
			for _, era := range []string{"modern", "legacy"} {
				t.Run(tt.name+"/"+tg.name+"/"+era, func(t *testing.T) {
					h := newMRTR(t, nil, func(*core.Call) (string, error) { return "", tt.err })
					c := newClient(t, h.srv)
					var w *wire
					if era == "modern" {
						w = c.modernCall(tg.method, tg.params, allCaps)
					} else {
						c.initWith("2025-11-25", allCaps)
						w = c.call(tg.method, tg.params)
					}
					detail := "Internal error handling " + tg.method + " request"
					wantError(t, w, -32603, "Internal error", detail)
					if !strings.Contains(h.log.String(), tt.log) {
						t.Errorf("error log %q does not explain %q", h.log, tt.log)
					}
					quiet(t, c.out)
				})
			}
		}
	}
	for _, era := range []string{"modern", "legacy"} {
		t.Run("custom method/"+era, func(t *testing.T) {
			h := newMRTR(t, nil, func(*core.Call) (string, error) {
				return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "s")
			})
			c := newClient(t, h.srv)
			var w *wire
			if era == "modern" {
				w = c.modernCall("x/ask", nil, allCaps)
			} else {
				c.initWith("2025-11-25", allCaps)
				w = c.call("x/ask", nil)
			}
			wantError(t, w, -32603, "Internal error", "input_required results are only supported for tools/call, prompts/get, resources/read")
			quiet(t, c.out)
		})
	}
	t.Run("list methods never answer input_required", func(t *testing.T) {
		h := newMRTR(t, nil, func(*core.Call) (string, error) { return "", core.NeedInput(nil, "s") })
		c := newClient(t, h.srv)
		for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
			w := c.modernCall(m, nil, allCaps)
			if bytes.Contains(w.Result, []byte("input_required")) {
				t.Errorf("%s: %s", m, w)
			}
		}
	})
}

// TestInputRequiredCapabilityGate: input requests the client did not declare are -32021 naming
// exactly the missing part of the merged requirements; nothing is sealed or sent.
func TestInputRequiredCapabilityGate(t *testing.T) {
	samplingWithChoice := core.SamplingInput(core.CreateMessageParams{
		Messages:   []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("x")}}},
		MaxTokens:  5,
		ToolChoice: map[string]any{"mode": "auto"},
	})
	urlAsMap := core.InputRequest{Method: "elicitation/create", Params: map[string]any{"mode": "url", "message": "go", "url": "https://example.com"}}
	toolsAsMap := core.InputRequest{Method: "sampling/createMessage", Params: map[string]any{"messages": []any{}, "maxTokens": 1, "tools": []any{}}}
	for _, tt := range []struct {
		name    string
		reqs    map[string]core.InputRequest
		caps    string
		missing string // "" when the gate lets the result through
	}{
		{"sampling undeclared", map[string]core.InputRequest{"m": askModel(false)}, `{}`, `{"sampling":{}}`},
		{"sampling declared", map[string]core.InputRequest{"m": askModel(false)}, `{"sampling":{}}`, ""},
		{"sampling null", map[string]core.InputRequest{"m": askModel(false)}, `{"sampling":null}`, `{"sampling":{}}`},
		{"sampling tools undeclared", map[string]core.InputRequest{"m": askModel(true)}, `{"sampling":{}}`, `{"sampling":{"tools":{}}}`},
		{"sampling tools, no sampling", map[string]core.InputRequest{"m": askModel(true)}, `{"roots":{}}`, `{"sampling":{"tools":{}}}`},
		{"sampling toolChoice", map[string]core.InputRequest{"m": samplingWithChoice}, `{"sampling":{}}`, `{"sampling":{"tools":{}}}`},
		{"sampling tools as a map", map[string]core.InputRequest{"m": toolsAsMap}, `{"sampling":{}}`, `{"sampling":{"tools":{}}}`},
		{"sampling tools declared", map[string]core.InputRequest{"m": askModel(true), "n": askModel(false)}, `{"sampling":{"tools":{}}}`, ""},
		{"plain and tools merge", map[string]core.InputRequest{"m": askModel(true), "n": askModel(false)}, `{}`, `{"sampling":{"tools":{}}}`},
		{"form undeclared", map[string]core.InputRequest{"q": askName()}, `{"sampling":{}}`, `{"elicitation":{"form":{}}}`},
		{"bare elicitation implies form", map[string]core.InputRequest{"q": askName()}, `{"elicitation":{}}`, ""},
		{"form declared", map[string]core.InputRequest{"q": askName()}, `{"elicitation":{"form":{}}}`, ""},
		{"url alone does not imply form", map[string]core.InputRequest{"q": askName()}, `{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`},
		{"url and form declared", map[string]core.InputRequest{"q": askName(), "u": askURL()}, `{"elicitation":{"url":{},"form":{}}}`, ""},
		{"url undeclared", map[string]core.InputRequest{"u": askURL()}, `{"elicitation":{}}`, `{"elicitation":{"url":{}}}`},
		{"url declared", map[string]core.InputRequest{"u": askURL()}, `{"elicitation":{"url":{}}}`, ""},
		{"url as a map", map[string]core.InputRequest{"u": urlAsMap}, `{"elicitation":{"form":{}}}`, `{"elicitation":{"url":{}}}`},
		{"url and form, url declared", map[string]core.InputRequest{"q": askName(), "u": askURL()}, `{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`},
		{"url and form, nothing declared", map[string]core.InputRequest{"q": askName(), "u": askURL()}, `{}`, `{"elicitation":{"form":{},"url":{}}}`},
		{"roots undeclared", map[string]core.InputRequest{"r": core.RootsInput()}, `{"sampling":{}}`, `{"roots":{}}`},
		{"roots declared", map[string]core.InputRequest{"r": core.RootsInput()}, `{"roots":{"listChanged":true}}`, ""},
		{"everything, partly declared", map[string]core.InputRequest{"m": askModel(true), "u": askURL(), "q": askName(), "r": core.RootsInput()},
			`{"sampling":{},"elicitation":{}}`, `{"sampling":{"tools":{}},"elicitation":{"url":{}},"roots":{}}`},
		{"everything declared", map[string]core.InputRequest{"m": askModel(true), "u": askURL(), "q": askName(), "r": core.RootsInput()},
			canonOf(t, allCaps), ""},
		{"state only needs nothing", nil, `{}`, ""},
	} {
		targets := mrtrTargets[:1]
		if tt.name == "everything, partly declared" {
			targets = mrtrTargets // every method goes through the same gate
		}
		for _, tg := range targets {
			t.Run(tt.name+"/"+tg.name, func(t *testing.T) {
				h := newMRTR(t, nil, func(*core.Call) (string, error) { return "", core.NeedInput(tt.reqs, "st") })
				c := newClient(t, h.srv)
				w := c.modernCall(tg.method, tg.params, raw(tt.caps))
				if tt.missing == "" {
					ir := wantInputRequired(t, w, tg.def)
					if len(ir.InputRequests) != len(tt.reqs) {
						t.Errorf("inputRequests %v", ir.InputRequests)
					}
					return
				}
				wantError(t, w, -32021, "Missing required client capability", "json:"+`{"requiredCapabilities":`+tt.missing+`}`)
				wantModernError(t, w, -32021)
				testutil.ValidateDef(t, modernVersion, "MissingRequiredClientCapabilityError", w.raw)
				quiet(t, c.out)
			})
		}
	}
}

// key returns a 32-byte key filled with b.
func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// as returns a context naming the principal who ("" for nobody), as a transport would.
func as(who string) context.Context {
	return core.WithPrincipal(context.Background(), who)
}

// stateEcho completes with the plaintext state when there is one, and otherwise issues one.
func stateEcho(c *core.Call) (string, error) {
	if s, ok := c.RequestState(); ok {
		return "state=" + s, nil
	}
	return "", core.NeedInput(nil, "issued")
}

// clock is a manual clock for the requestState expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(t testing.TB, srvs ...*core.Server) *clock {
	c := &clock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
	for _, s := range srvs {
		core.SetRequestStateClock(s, c.Now)
	}
	return c
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// flipByte returns token with bit 0 of byte i of its sealed bytes flipped, re-encoded.
func flipByte(t testing.TB, token string, i int) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "v1."))
	if err != nil {
		t.Fatalf("token %q: %v", token, err)
	}
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 1
	return "v1." + base64.RawURLEncoding.EncodeToString(b)
}

// TestRequestStateRejected: every state that was tampered with, expired, or issued for another
// request, principal or key is refused with the same -32602 before the handler runs.
func TestRequestStateRejected(t *testing.T) {
	opts := func(k []byte) *core.Options {
		return &core.Options{RequestState: core.RequestStateOptions{Key: k, TTL: time.Minute}}
	}
	h := newMRTR(t, opts(key(1)), stateEcho)
	other := newMRTR(t, opts(key(2)), stateEcho)
	replica := newMRTR(t, opts(key(1)), stateEcho)
	clk := newClock(t, h.srv, other.srv, replica.srv)
	toolArgs := map[string]any{"a": 1, "b": map[string]any{"x": "y", "z": []any{1, 2}}}
	tool := map[string]any{"name": "t", "arguments": toolArgs}

	// issue returns a fresh token for the request as alice.
	issue := func(t *testing.T, c *client, method string, params map[string]any) string {
		t.Helper()
		w := c.modernCallCtx(as("alice"), method, params, nil)
		return wantInputRequired(t, w, defOf(method)).state(t)
	}
	// retry sends the token back and reports the reply and whether the handler ran.
	retry := func(t *testing.T, hh *mrtrHarness, c *client, ctx context.Context, method string, params map[string]any, token any) (*wire, bool) {
		t.Helper()
		before := hh.runs.Load()
		w := c.modernCallCtx(ctx, method, with(params, "requestState", token), nil)
		return w, hh.runs.Load() != before
	}
	rejected := func(t *testing.T, w *wire, ran bool) {
		t.Helper()
		wantError(t, w, -32602, badState, badState)
		wantModernError(t, w, -32602)
		if ran {
			t.Error("the handler ran with a refused requestState")
		}
	}

	t.Run("the genuine token is accepted, more than once", func(t *testing.T) {
		c := newClient(t, h.srv)
		token := issue(t, c, "tools/call", tool)
		for range 2 {
			w, _ := retry(t, h, c, as("alice"), "tools/call", tool, token)
			if got := complete(t, w, "CallToolResult"); got != "state=issued" {
				t.Errorf("completed with %q", got)
			}
		}
		// A replica sharing the key accepts it too.
		w, _ := retry(t, replica, newClient(t, replica.srv), as("alice"), "tools/call", tool, token)
		if got := complete(t, w, "CallToolResult"); got != "state=issued" {
			t.Errorf("the replica completed with %q", got)
		}
	})

	t.Run("every changed character", func(t *testing.T) {
		c := newClient(t, h.srv)
		token := issue(t, c, "tools/call", tool)
		for i := range len(token) {
			b := []byte(token)
			switch b[i] {
			case 'A':
				b[i] = 'B'
			default:
				b[i] = 'A'
			}
			w, ran := retry(t, h, c, as("alice"), "tools/call", tool, string(b))
			if w.Error == nil {
				t.Fatalf("token with character %d changed (%q) was accepted", i, b)
			}
			rejected(t, w, ran)
		}
	})

	t.Run("tampered and malformed", func(t *testing.T) {
		c := newClient(t, h.srv)
		token := issue(t, c, "tools/call", tool)
		body := strings.TrimPrefix(token, "v1.")
		for _, tt := range []struct {
			name  string
			token any
		}{
			{"flipped nonce byte", flipByte(t, token, 0)},
			{"flipped ciphertext byte", flipByte(t, token, 20)},
			{"flipped tag byte", flipByte(t, token, -1)},
			{"truncated by one character", token[:len(token)-1]},
			{"truncated to the nonce", token[:3+16]},
			{"prefix only", "v1."},
			{"no prefix", body},
			{"another prefix", "v2." + body},
			{"upper-case prefix", "V1." + body},
			{"padded", token + "="},
			{"standard alphabet", "v1." + base64.RawStdEncoding.EncodeToString(mustDecode(t, body))},
			{"appended text", token + "-TAMPERED"},
			{"empty", ""},
			{"plaintext", "issued"},
			{"a number", 42},
			{"an object", map[string]any{"s": token}},
			{"null", nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				tok := tt.token
				if tt.token == nil {
					tok = raw("null")
				}
				w, ran := retry(t, h, c, as("alice"), "tools/call", tool, tok)
				rejected(t, w, ran)
			})
		}
	})

	t.Run("expired", func(t *testing.T) {
		c := newClient(t, h.srv)
		token := issue(t, c, "tools/call", tool)
		clk.Advance(time.Minute) // the last moment of its life
		w, _ := retry(t, h, c, as("alice"), "tools/call", tool, token)
		complete(t, w, "CallToolResult")
		clk.Advance(time.Millisecond)
		w, ran := retry(t, h, c, as("alice"), "tools/call", tool, token)
		rejected(t, w, ran)
	})

	t.Run("issued for another request", func(t *testing.T) {
		c := newClient(t, h.srv)
		for _, tt := range []struct {
			name           string
			method         string
			params         map[string]any
			retryMethod    string
			retryParams    map[string]any
			retryAudience  string
			retryOnAnother bool
		}{
			{"other arguments", "tools/call", tool, "tools/call", with(tool, "arguments", map[string]any{"a": 2, "b": toolArgs["b"]}), "alice", false},
			{"an extra argument", "tools/call", tool, "tools/call", with(tool, "arguments", map[string]any{"a": 1, "b": toolArgs["b"], "c": true}), "alice", false},
			{"a nested change", "tools/call", tool, "tools/call", with(tool, "arguments", map[string]any{"a": 1, "b": map[string]any{"x": "y", "z": []any{2, 1}}}), "alice", false},
			{"no arguments", "tools/call", tool, "tools/call", map[string]any{"name": "t"}, "alice", false},
			{"another tool", "tools/call", tool, "tools/call", with(tool, "name", "t2"), "alice", false},
			{"a prompt of the same name", "tools/call", map[string]any{"name": "t"}, "prompts/get", map[string]any{"name": "t"}, "alice", false},
			{"another prompt", "prompts/get", map[string]any{"name": "p"}, "prompts/get", map[string]any{"name": "p2"}, "alice", false},
			{"other prompt arguments", "prompts/get", map[string]any{"name": "p", "arguments": map[string]any{"who": "ann"}}, "prompts/get", map[string]any{"name": "p", "arguments": map[string]any{"who": "bob"}}, "alice", false},
			{"another resource", "resources/read", map[string]any{"uri": "test://r"}, "resources/read", map[string]any{"uri": "test://r2"}, "alice", false},
			{"another template URI", "resources/read", map[string]any{"uri": "test://items/1"}, "resources/read", map[string]any{"uri": "test://items/2"}, "alice", false},
			{"a resource with a decoy name", "resources/read", map[string]any{"uri": "test://r", "name": "decoy"}, "resources/read", map[string]any{"uri": "test://r2", "name": "decoy"}, "alice", false},
			{"a tool of the resource's URI", "resources/read", map[string]any{"uri": "test://r"}, "tools/call", map[string]any{"name": "t"}, "alice", false},
			{"another audience", "tools/call", tool, "tools/call", tool, "bob", false},
			{"no audience", "tools/call", tool, "tools/call", tool, "", false},
			{"another server key", "tools/call", tool, "tools/call", tool, "alice", true},
		} {
			t.Run(tt.name, func(t *testing.T) {
				token := issue(t, c, tt.method, tt.params)
				hh, cc := h, c
				if tt.retryOnAnother {
					hh, cc = other, newClient(t, other.srv)
				}
				w, ran := retry(t, hh, cc, as(tt.retryAudience), tt.retryMethod, tt.retryParams, token)
				rejected(t, w, ran)
				// The same token is still good for the request it was issued for.
				w, _ = retry(t, h, c, as("alice"), tt.method, tt.params, token)
				complete(t, w, defOf(tt.method))
			})
		}
	})

	t.Run("issued to a 2026-07-28 request, presented on a legacy session", func(t *testing.T) {
		token := issue(t, newClient(t, h.srv), "tools/call", tool)
		legacy := newClient(t, h.srv)
		legacy.initialize("2025-11-25")
		before := h.runs.Load()
		w := legacy.sendCtx(as("alice"), body(t, "legacy", "tools/call", with(tool, "requestState", token)))
		wantError(t, w, -32602, badState, badState)
		if h.runs.Load() != before {
			t.Error("the handler ran with a requestState of the other lifecycle")
		}
	})

	t.Run("the same arguments written differently", func(t *testing.T) {
		c := newClient(t, h.srv)
		token := issue(t, c, "tools/call", tool) // sent with sorted members: {"a":1,"b":{"x":"y","z":[1,2]}}
		meta := canonOf(t, modernMeta(nil))
		for _, args := range []string{
			`{"b":{"z":[1,2],"x":"y"},"a":1}`,
			`{ "a" : 1.0 , "b" : { "x" : "y" , "z" : [ 1e0 , 2 ] } }`,
			`{"b":{"x":"\u0079","z":[10e-1,2.00]},"a":100e-2}`,
		} {
			before := h.runs.Load()
			w := c.sendCtx(as("alice"), `{"jsonrpc":"2.0","id":"ko","method":"tools/call","params":{"requestState":"`+token+
				`","arguments":`+args+`,"_meta":`+meta+`,"name":"t"}}`)
			if got := complete(t, w, "CallToolResult"); got != "state=issued" {
				t.Errorf("arguments %s: completed with %q", args, got)
			}
			if h.runs.Load() != before+1 {
				t.Errorf("arguments %s: the handler did not run once", args)
			}
		}
		// What the envelope says is not part of the binding.
		meta2 := modernMeta(map[string]any{metaInfo: map[string]any{"name": "other", "version": "9"}, metaLevel: "debug"})
		w := c.sendCtx(as("alice"), body(t, "ko2", "tools/call", with(tool, "requestState", token, "_meta", meta2)))
		complete(t, w, "CallToolResult")
	})
}

func mustDecode(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func defOf(method string) string {
	switch method {
	case "prompts/get":
		return "GetPromptResult"
	case "resources/read":
		return "ReadResourceResult"
	}
	return "CallToolResult"
}

// TestRequestStateDefaults: the default TTL is five minutes, the default key is random per
// server (a token of one server is refused by another), and the legacy lifecycle verifies a
// requestState just the same.
func TestRequestStateDefaults(t *testing.T) {
	h := newMRTR(t, nil, stateEcho)
	h2 := newMRTR(t, nil, stateEcho)
	clk := newClock(t, h.srv)
	c := newClient(t, h.srv)
	tool := mrtrTargets[0]
	token := wantInputRequired(t, c.modernCall(tool.method, tool.params, nil), tool.def).state(t)

	clk.Advance(core.DefaultRequestStateTTL)
	complete(t, c.modernCall(tool.method, with(tool.params, "requestState", token), nil), tool.def)

	w := newClient(t, h2.srv).modernCall(tool.method, with(tool.params, "requestState", token), nil)
	wantError(t, w, -32602, badState, badState)

	clk.Advance(time.Millisecond)
	w = c.modernCall(tool.method, with(tool.params, "requestState", token), nil)
	wantError(t, w, -32602, badState, badState)

	// On the legacy lifecycle a requestState is verified too (the shim never issues one).
	lc := newClient(t, h.srv)
	lc.initWith("2025-11-25", map[string]any{})
	before := h.runs.Load()
	wantError(t, lc.call(tool.method, with(tool.params, "requestState", "forged")), -32602, badState, badState)
	if h.runs.Load() != before {
		t.Error("the handler ran with a forged legacy requestState")
	}
}

// TestRequestStateDisabled: with Disable the handler's state goes out and comes back as it is.
func TestRequestStateDisabled(t *testing.T) {
	h := newMRTR(t, &core.Options{RequestState: core.RequestStateOptions{Disable: true}}, stateEcho)
	c := newClient(t, h.srv)
	for _, tg := range mrtrTargets {
		ir := wantInputRequired(t, c.modernCall(tg.method, tg.params, nil), tg.def)
		if got := ir.state(t); got != "issued" {
			t.Errorf("%s: requestState %q, want the plaintext", tg.name, got)
		}
		for _, s := range []string{"issued", "anything the client likes", ""} {
			w := c.modernCall(tg.method, with(tg.params, "requestState", s), nil)
			if got := complete(t, w, tg.def); got != "state="+s {
				t.Errorf("%s: completed with %q, want the state passed through", tg.name, got)
			}
		}
		// Still a string.
		wantError(t, c.modernCall(tg.method, with(tg.params, "requestState", 5), nil), -32602, badState, badState)
	}
}

// TestRequestStateOptions: a key of the wrong length or a negative TTL is a programming error.
func TestRequestStateOptions(t *testing.T) {
	for _, tt := range []struct {
		name  string
		opts  core.RequestStateOptions
		panic string
	}{
		{"16-byte key", core.RequestStateOptions{Key: make([]byte, 16)}, "RequestState.Key must be 32 bytes, not 16"},
		{"33-byte key", core.RequestStateOptions{Key: make([]byte, 33)}, "RequestState.Key must be 32 bytes, not 33"},
		{"empty key", core.RequestStateOptions{Key: []byte{}}, "RequestState.Key must be 32 bytes, not 0"},
		{"bad key with Disable", core.RequestStateOptions{Key: make([]byte, 31), Disable: true}, "RequestState.Key must be 32 bytes, not 31"},
		{"negative TTL", core.RequestStateOptions{TTL: -time.Second}, "RequestState.TTL must not be negative"},
		{"32-byte key", core.RequestStateOptions{Key: key(9), TTL: time.Second}, ""},
		{"zero value", core.RequestStateOptions{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			func() {
				defer func() {
					if v := recover(); v != nil {
						got = fmt.Sprint(v)
					}
				}()
				newServer(&core.Options{RequestState: tt.opts})
			}()
			if tt.panic == "" && got != "" {
				t.Fatalf("NewServer panicked: %s", got)
			}
			if tt.panic != "" && !strings.Contains(got, tt.panic) {
				t.Fatalf("NewServer panic %q, want %q", got, tt.panic)
			}
		})
	}
}

// TestInputResponsesChecked: inputResponses that are not an object of results are refused with
// -32602 before the handler runs; unknown keys with results are ignored; a missing answer makes
// the handler ask again.
func TestInputResponsesChecked(t *testing.T) {
	greet := func(c *core.Call) (string, error) {
		if r, ok := c.ElicitResponse("who"); ok && r.Action == "accept" {
			return fmt.Sprint("Hello, ", r.Content["name"], "!"), nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"who": askName()}, "")
	}
	for _, tg := range mrtrTargets[:3] {
		t.Run(tg.name, func(t *testing.T) {
			h := newMRTR(t, nil, greet)
			c := newClient(t, h.srv)
			for _, bad := range []string{
				`5`, `"who"`, `[]`, `[{"action":"accept"}]`, `null`, `true`,
				`{"who":12345}`, `{"who":null}`, `{"who":"accept"}`, `{"who":[]}`, `{"who":{}}`,
				`{"who":{"foo":1}}`, `{"who":{"action":"maybe"}}`, `{"who":{"action":5}}`,
				`{"who":{"role":"assistant","model":"m"}}`, `{"who":{"roots":{}}}`,
				`{"who":` + elicitAccept + `,"extra":17}`,
			} {
				before := h.runs.Load()
				w := c.modernCall(tg.method, with(tg.params, "inputResponses", raw(bad)), allCaps)
				if w.Error == nil {
					t.Errorf("inputResponses %s: got a result %s", bad, w.Result)
					continue
				}
				if w.Error.Code != -32602 || !strings.HasPrefix(w.Error.Message, "Invalid params: inputResponses") {
					t.Errorf("inputResponses %s: error %d %q", bad, w.Error.Code, w.Error.Message)
				}
				wantModernError(t, w, -32602)
				if h.runs.Load() != before {
					t.Errorf("inputResponses %s: the handler ran", bad)
				}
			}
			// Every result shape is accepted, under any key; unknown keys are ignored.
			for _, good := range []string{
				`{"who":` + elicitAccept + `}`,
				`{"who":` + elicitAccept + `,"extra":` + sampled + `,"more":` + rootsList + `}`,
				`{"who":` + elicitAccept + `,"x":{"action":"decline"},"y":{"action":"cancel"}}`,
				`{"who":` + elicitAccept + `,"z":{"role":"user","content":[{"type":"text","text":"a"}],"model":"m","stopReason":"endTurn"}}`,
			} {
				w := c.modernCall(tg.method, with(tg.params, "inputResponses", raw(good)), allCaps)
				if got := complete(t, w, tg.def); got != "Hello, Ann!" {
					t.Errorf("inputResponses %s: completed with %q", good, got)
				}
			}
			// Answers that do not complete the handler make it ask again.
			for _, missing := range []string{
				`{}`, `{"wrong_key":` + elicitAccept + `}`, `{"who":{"action":"decline"}}`, `{"who":` + sampled + `}`, `{"who":` + rootsList + `}`,
			} {
				w := c.modernCall(tg.method, with(tg.params, "inputResponses", raw(missing)), allCaps)
				ir := wantInputRequired(t, w, tg.def)
				if _, ok := ir.InputRequests["who"]; !ok {
					t.Errorf("inputResponses %s: asked %v", missing, ir.InputRequests)
				}
			}
		})
	}
	t.Run("typed accessors", func(t *testing.T) {
		var got []string
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			_, e := c.ElicitResponse("s")
			_, s := c.SamplingResponse("e")
			_, r := c.RootsResponse("e")
			roots, emptyRoots := c.RootsResponse("r")
			var v struct {
				Roots []core.Root `json:"roots"`
			}
			got = append(got, fmt.Sprint(e, s, r, emptyRoots, roots != nil && len(roots.Roots) == 0, c.InputResponse("r", &v), c.InputResponse("nope", &v)))
			return "ok", nil
		})
		c := newClient(t, h.srv)
		tg := mrtrTargets[0]
		complete(t, c.modernCall(tg.method, with(tg.params, "inputResponses", raw(`{"s":`+sampled+`,"e":`+elicitAccept+`,"r":{"roots":[]}}`)), nil), tg.def)
		// A response of another kind is not taken for the one asked; an empty roots list is a
		// valid answer.
		if want := "false false false true true true false"; len(got) != 1 || got[0] != want {
			t.Errorf("accessors %v, want %s", got, want)
		}
	})
}

// ---- The legacy shim ----

// fulfil serves the server-to-client requests that arrive on path, answering each with
// answer (a JSON-RPC member list such as `"result":{...}`; "" leaves it unanswered), until the
// reply to the originating request arrives. It returns the reply, the requests in order and
// the notifications sent meanwhile.
func fulfil(t testing.TB, ss *core.Session, path *sink, reply <-chan *wire, answerWith func(req *wire) string) (*wire, []*wire, []*wire) {
	t.Helper()
	var reqs, notes []*wire
	take := func(b []byte) {
		w := parseWire(t, b)
		if w.ID == nil {
			notes = append(notes, w)
			return
		}
		reqs = append(reqs, w)
		testSchema(t, "JSONRPCRequest", w.raw)
		if members := answerWith(w); members != "" {
			answer(t, ss, w.ID, members)
		}
	}
	for {
		select {
		case b := <-path.ch:
			take(b)
		case r := <-reply:
			// Whatever the call sent went out before its reply.
			for {
				select {
				case b := <-path.ch:
					take(b)
					continue
				default:
				}
				return r, reqs, notes
			}
		case <-time.After(failsafe):
			t.Fatal("the call never answered")
			return nil, nil, nil
		}
	}
}

// clientAnswers answers each request the way a client that supports everything does.
func clientAnswers(req *wire) string {
	switch req.Method {
	case "elicitation/create":
		return `"result":` + elicitAccept
	case "sampling/createMessage":
		return `"result":` + sampled
	case "roots/list":
		return `"result":` + rootsList
	}
	return `"error":{"code":-32601,"message":"Method not found"}`
}

// legacyDef is the 2025-11-25 definition of a server-to-client request.
var legacyDef = map[string]string{
	"elicitation/create":     "ElicitRequest",
	"sampling/createMessage": "CreateMessageRequest",
	"roots/list":             "ListRootsRequest",
}

// legacyCall sends one legacy request on its own path and serves the shim's requests.
func (c *client) legacyCall(method string, params map[string]any, answerWith func(*wire) string) (*wire, []*wire, []*wire) {
	c.t.Helper()
	id := c.ids.Add(1)
	path, reply := c.callAsync(id, method, params)
	w, reqs, notes := fulfil(c.t, c.ss, path, reply, answerWith)
	if w == nil {
		c.t.Fatalf("%s: no reply", method)
	}
	if string(w.ID) != fmt.Sprint(id) {
		c.t.Fatalf("reply id %s, want %d", w.ID, id)
	}
	for _, r := range reqs {
		if def := legacyDef[r.Method]; def != "" {
			testSchema(c.t, def, r.raw)
		}
	}
	quiet(c.t, c.out) // everything rode the request's own path
	return w, reqs, notes
}

// legacyComplete checks a complete legacy answer (no resultType, no _meta stamping) and returns
// its text.
func legacyComplete(t testing.TB, w *wire, def string) string {
	t.Helper()
	if w.Error != nil || w.Result == nil {
		t.Fatalf("want a result, got %s", w)
	}
	testSchema(t, def, w.Result)
	testSchema(t, "JSONRPCResultResponse", w.raw)
	var members map[string]json.RawMessage
	if err := jsonv2.Unmarshal(w.Result, &members); err != nil {
		t.Fatal(err)
	}
	if members["resultType"] != nil || members["inputRequests"] != nil || members["requestState"] != nil {
		t.Errorf("a legacy client got an input_required result: %s", w.Result)
	}
	return resultText(t, w.Result)
}

// TestLegacyShim: on the legacy lifecycle the server fulfils the input requests itself, on the
// request's own path, then runs the handler again with the answers and the plaintext state.
func TestLegacyShim(t *testing.T) {
	t.Run("one round", func(t *testing.T) {
		for _, tg := range mrtrTargets {
			t.Run(tg.name, func(t *testing.T) {
				h := newMRTR(t, nil, func(c *core.Call) (string, error) {
					state, ok := c.RequestState()
					who, okWho := c.ElicitResponse("who")
					m, okM := c.SamplingResponse("model")
					r, okR := c.RootsResponse("roots")
					if !ok || !okWho || !okM || !okR {
						return "", core.NeedInput(map[string]core.InputRequest{"who": askName(), "model": askModel(false), "roots": core.RootsInput()}, "plain")
					}
					return fmt.Sprintf("%s|%v|%s|%s", state, who.Content["name"], m.Content[0].Text, r.Roots[0].Name), nil
				})
				c := newClient(t, h.srv)
				c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}})
				w, reqs, _ := c.legacyCall(tg.method, tg.params, clientAnswers)
				if got := legacyComplete(t, w, tg.def); got != "plain|Ann|Paris|work" {
					t.Errorf("completed with %q", got)
				}
				// The legs go out in key order, with the params the handler wrote.
				var methods []string
				for _, r := range reqs {
					methods = append(methods, r.Method)
				}
				if got := strings.Join(methods, ","); got != "sampling/createMessage,roots/list,elicitation/create" {
					t.Errorf("legs %s, want model, roots, who in key order", got)
				}
				if got := canon(t, reqs[2].Params); got != `{"message":"name?","requestedSchema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}` {
					t.Errorf("elicitation params %s", got)
				}
				if n := h.runs.Load(); n != 2 {
					t.Errorf("handler ran %d times, want 2", n)
				}
				if s := h.last(t); !s.hasState || s.state != "plain" || canon(t, raw(s.responses["who"])) != canon(t, raw(elicitAccept)) {
					t.Errorf("the rerun saw %+v", s)
				}
			})
		}
	})

	t.Run("several rounds with changing state", func(t *testing.T) {
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			state, _ := c.RequestState()
			n := len(state)
			if n == 3 {
				return "done " + state, nil
			}
			if n > 0 {
				if _, ok := c.ElicitResponse(fmt.Sprint("q", n)); !ok {
					return "", fmt.Errorf("round %d without its answer", n)
				}
			}
			return "", core.NeedInput(map[string]core.InputRequest{fmt.Sprint("q", n+1): askName()}, state+"x")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-06-18", map[string]any{"elicitation": map[string]any{}})
		w, reqs, _ := c.legacyCall("tools/call", mrtrTargets[0].params, clientAnswers)
		if got := legacyComplete(t, w, "CallToolResult"); got != "done xxx" {
			t.Errorf("completed with %q", got)
		}
		if len(reqs) != 3 || h.runs.Load() != 4 {
			t.Errorf("%d legs and %d runs, want 3 and 4", len(reqs), h.runs.Load())
		}
	})

	t.Run("state only", func(t *testing.T) {
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			if s, ok := c.RequestState(); ok {
				if c.InputResponses() != nil {
					return "", fmt.Errorf("responses without requests")
				}
				return "state=" + s, nil
			}
			return "", core.NeedInput(nil, "only")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{})
		w, reqs, _ := c.legacyCall("prompts/get", mrtrTargets[1].params, clientAnswers)
		if got := legacyComplete(t, w, "GetPromptResult"); got != "state=only" || len(reqs) != 0 {
			t.Errorf("completed with %q after %d legs", got, len(reqs))
		}
	})

	t.Run("the round limit", func(t *testing.T) {
		for _, tt := range []struct {
			name     string
			complete int64 // the run that completes (0: never)
		}{
			{"completes on the last allowed run", core.MaxLegacyInputRounds + 1},
			{"never completes", 0},
		} {
			t.Run(tt.name, func(t *testing.T) {
				h := newMRTR(t, nil, nil)
				h.setStep(func(c *core.Call) (string, error) {
					if h.runs.Load() == tt.complete {
						return "finally", nil
					}
					return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, fmt.Sprint("run", h.runs.Load()))
				})
				c := newClient(t, h.srv)
				c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{}})
				w, reqs, _ := c.legacyCall("tools/call", mrtrTargets[0].params, clientAnswers)
				if len(reqs) != core.MaxLegacyInputRounds || h.runs.Load() != core.MaxLegacyInputRounds+1 {
					t.Errorf("%d legs and %d runs, want %d and %d", len(reqs), h.runs.Load(), core.MaxLegacyInputRounds, core.MaxLegacyInputRounds+1)
				}
				if tt.complete != 0 {
					if got := legacyComplete(t, w, "CallToolResult"); got != "finally" {
						t.Errorf("completed with %q", got)
					}
					return
				}
				msg := "Handler still returned `input_required` after 8 legacy shim rounds (SEP-2322)"
				wantError(t, w, -32603, msg, msg)
			})
		}
	})

	t.Run("a client error on a leg", func(t *testing.T) {
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			if c.InputResponses() != nil {
				return "", fmt.Errorf("rerun after a failed leg")
			}
			return "", core.NeedInput(map[string]core.InputRequest{"a": askName(), "b": core.RootsInput()}, "s")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{}})
		w, reqs, _ := c.legacyCall("resources/read", mrtrTargets[2].params, func(*wire) string {
			return `"error":{"code":-1,"message":"the user walked away"}`
		})
		wantError(t, w, -32603, "Internal error", "Internal error handling resources/read request")
		if len(reqs) != 1 || h.runs.Load() != 1 {
			t.Errorf("%d legs and %d runs after the failed first leg, want 1 and 1", len(reqs), h.runs.Load())
		}
		if !strings.Contains(h.log.String(), "the user walked away") {
			t.Errorf("error log %q", h.log)
		}
	})

	t.Run("a leg times out", func(t *testing.T) {
		h := newMRTR(t, &core.Options{ServerToClientRequestTimeout: 30 * time.Millisecond}, func(c *core.Call) (string, error) {
			return "", core.NeedInput(map[string]core.InputRequest{"m": askModel(false)}, "")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{"sampling": map[string]any{}})
		w, reqs, notes := c.legacyCall("tools/call", mrtrTargets[0].params, func(*wire) string { return "" })
		msg := "sampling/createMessage request timed out after 0.03 seconds"
		wantError(t, w, -32001, msg, msg)
		if len(reqs) != 1 || len(notes) != 1 || notes[0].Method != "notifications/cancelled" {
			t.Fatalf("legs %v, notifications %v", reqs, notes)
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		jsonv2.Unmarshal(notes[0].Params, &p)
		if string(p.RequestID) != string(reqs[0].ID) {
			t.Errorf("cancelled %s, want the timed-out leg %s", p.RequestID, reqs[0].ID)
		}
	})

	t.Run("URL elicitation gets an elicitationId", func(t *testing.T) {
		mine := core.ElicitInput(core.ElicitParams{Mode: "url", Message: "pay", URL: "https://example.com/pay", ElicitationID: "mine-1"})
		typed := core.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/login"}
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			if len(c.InputResponses()) == 4 {
				return "ok", nil
			}
			return "", core.NeedInput(map[string]core.InputRequest{
				"a": askURL(),
				"b": {Method: "elicitation/create", Params: map[string]any{"mode": "url", "message": "go", "url": "https://example.com/go"}},
				"c": mine,
				"d": {Method: "elicitation/create", Params: &typed},
			}, "")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
		w, reqs, _ := c.legacyCall("tools/call", mrtrTargets[0].params, func(*wire) string { return `"result":{"action":"accept"}` })
		legacyComplete(t, w, "CallToolResult")
		if len(reqs) != 4 {
			t.Fatalf("%d legs, want 4", len(reqs))
		}
		ids := map[string]bool{}
		for i, r := range reqs {
			var p struct {
				Mode          string `json:"mode"`
				ElicitationID string `json:"elicitationId"`
			}
			jsonv2.Unmarshal(r.Params, &p)
			if p.Mode != "url" || p.ElicitationID == "" {
				t.Errorf("leg %d without an elicitationId: %s", i, r.Params)
			}
			ids[p.ElicitationID] = true
		}
		if !ids["mine-1"] || len(ids) != 4 {
			t.Errorf("elicitationIds %v: the handler's own must be kept, the others fresh", ids)
		}
		if typed.ElicitationID != "" {
			t.Error("the handler's params were changed")
		}
	})

	t.Run("capabilities are checked every round", func(t *testing.T) {
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			if c.InputResponses() == nil {
				return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "")
			}
			return "", core.NeedInput(map[string]core.InputRequest{"m": askModel(true), "r": core.RootsInput(), "u": askURL()}, "")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}})
		w, reqs, _ := c.legacyCall("tools/call", mrtrTargets[0].params, clientAnswers)
		msg := `input_required requires client capabilities the client did not declare: {"elicitation":{"url":{}},"roots":{},"sampling":{"tools":{}}}`
		wantError(t, w, -32603, msg, msg)
		if len(reqs) != 1 || h.runs.Load() != 2 {
			t.Errorf("%d legs and %d runs, want 1 and 2", len(reqs), h.runs.Load())
		}
	})

	t.Run("missing capabilities on the first round", func(t *testing.T) {
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
		w, reqs, _ := c.legacyCall("prompts/get", mrtrTargets[1].params, clientAnswers)
		msg := `input_required requires client capabilities the client did not declare: {"elicitation":{"form":{}}}`
		wantError(t, w, -32603, msg, msg)
		if len(reqs) != 0 {
			t.Errorf("%d legs sent", len(reqs))
		}
	})

	t.Run("no fulfilment possible", func(t *testing.T) {
		needs := func(*core.Call) (string, error) {
			return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "s")
		}
		const detail = "input_required results require the 2026-07-28 stateless lifecycle (SEP-2322)"
		check := func(t *testing.T, h *mrtrHarness, ss *core.Session, path transport.Sender, out *sink) {
			t.Helper()
			for _, tg := range mrtrTargets[:3] {
				w := parseWire(t, replyOn(ss, body(t, 1, tg.method, tg.params), path))
				wantError(t, w, -32603, "Internal error", detail)
			}
			if h.runs.Load() != 3 {
				t.Errorf("handler ran %d times, want once per request", h.runs.Load())
			}
			quiet(t, out)
		}
		t.Run("DisableInputShim", func(t *testing.T) {
			h := newMRTR(t, &core.Options{DisableInputShim: true}, needs)
			c := newClient(t, h.srv)
			c.initWith("2025-11-25", allCaps)
			check(t, h, c.ss, nil, c.out)
		})
		t.Run("ephemeral session", func(t *testing.T) {
			h := newMRTR(t, nil, needs)
			out := newSink()
			ss := transport.NewSession(h.srv, transport.SessionOptions{Ephemeral: true, Out: out})
			t.Cleanup(ss.Close)
			check(t, h, ss, nil, out)
		})
		t.Run("a path that refuses requests", func(t *testing.T) {
			h := newMRTR(t, nil, needs)
			c := newClient(t, h.srv)
			c.initWith("2025-11-25", allCaps)
			check(t, h, c.ss, refusingPath{c.out}, c.out)
		})
	})

	t.Run("cancelled while a leg is pending", func(t *testing.T) {
		h := newMRTR(t, nil, func(c *core.Call) (string, error) {
			return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "")
		})
		c := newClient(t, h.srv)
		c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{}})
		path, reply := c.callAsync(41, "tools/call", mrtrTargets[0].params)
		leg := nextRequest(t, path, "elicitation/create", "ElicitRequest")
		if b := c.reply(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"changed my mind"}}`); b != nil {
			t.Fatalf("a notification was answered: %s", b)
		}
		if w := await(t, reply, "the cancelled call"); w != nil {
			t.Errorf("a cancelled call was answered: %s", w)
		}
		wantCancelled(t, path, leg.ID, "The originating request was cancelled")
		if h.runs.Load() != 1 {
			t.Errorf("handler ran %d times", h.runs.Load())
		}
	})
}

// refusingPath is a request path that cannot carry server-to-client requests (like a JSON
// response).
type refusingPath struct{ *sink }

func (refusingPath) RefuseRequests() error {
	return fmt.Errorf("JSON response mode does not support server-to-client requests")
}

// TestRequestStateBoundToServer: a state sealed by one server is refused by another sharing its
// key under another name, and a state sealed for one resource URI (WithResource) is refused for
// another one or for none. Before, both were accepted for the same tool name and arguments.
func TestRequestStateBoundToServer(t *testing.T) {
	opts := &core.Options{RequestState: core.RequestStateOptions{Key: key(1)}}
	h := newMRTR(t, opts, stateEcho)
	billing := core.NewServer(core.Implementation{Name: "billing", Version: "1"}, core.Options{
		Logger: quietLog, RequestState: core.RequestStateOptions{Key: key(1)}})
	billing.AddTool(&core.Tool{Name: "t"}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		text, err := stateEcho(req.Call)
		if err != nil {
			return nil, err
		}
		return core.TextResult(text), nil
	})
	tool := map[string]any{"name": "t", "arguments": map[string]any{"a": 1}}
	c := newClient(t, h.srv)
	token := wantInputRequired(t, c.modernCallCtx(as("alice"), "tools/call", tool, nil), "CallToolResult").state(t)
	w := newClient(t, billing).modernCallCtx(as("alice"), "tools/call", with(tool, "requestState", token), nil)
	wantError(t, w, -32602, badState, badState)

	res := func(uri string) context.Context { return transport.Core.WithResource(as("alice"), uri) }
	token = wantInputRequired(t, c.modernCallCtx(res("https://a.example/mcp"), "tools/call", tool, nil), "CallToolResult").state(t)
	for _, ctx := range []context.Context{res("https://b.example/mcp"), as("alice")} {
		w := c.modernCallCtx(ctx, "tools/call", with(tool, "requestState", token), nil)
		wantError(t, w, -32602, badState, badState)
	}
	w = c.modernCallCtx(res("https://a.example/mcp"), "tools/call", with(tool, "requestState", token), nil)
	if got := complete(t, w, "CallToolResult"); got != "state=issued" {
		t.Errorf("the same resource completed with %q", got)
	}
}
