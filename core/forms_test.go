package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpkit/mcpkit/core"
)

type signup struct {
	Name  string   `json:"name" jsonschema:"your name"`
	Age   int      `json:"age,omitempty"`
	Score float64  `json:"score,omitzero"`
	News  bool     `json:"news"`
	Email *string  `json:"email,omitempty"`
	Skip  string   `json:"-"`
	_     struct{} // unexported: not a property
}

func TestFormOf(t *testing.T) {
	got, err := json.Marshal(core.FormOf[signup]().Schema())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","required":["name","news"],"properties":{"age":{"type":"integer"},"email":{"type":"string"},"name":{"type":"string","description":"your name"},"news":{"type":"boolean"},"score":{"type":"number"}}}`
	if canon(t, got) != canon(t, json.RawMessage(want)) {
		t.Errorf("FormOf[signup]\n got %s\nwant %s", got, want)
	}
	if first, again := core.FormOf[signup](), core.FormOf[signup](); first != again {
		t.Error("the form of a type is derived once")
	}
	for name, f := range map[string]func(){
		"not a struct":  func() { core.FormOf[string]() },
		"nested struct": func() { core.FormOf[struct{ In signup }]() },
		"map field":     func() { core.FormOf[struct{ M map[string]string }]() },
		"plain list":    func() { core.FormOf[struct{ L []string }]() }, // a multi-select needs its options
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(sprint(v), "FormOf[") {
					t.Errorf("panic %v, want one naming FormOf", v)
				}
			}()
			f()
		})
	}
}

func TestNewFormRefuses(t *testing.T) {
	for name, schema := range map[string]string{
		"not an object":      `{"type":"string"}`,
		"nested object":      `{"type":"object","properties":{"a":{"type":"object","properties":{}}}}`,
		"reference":          `{"type":"object","properties":{"a":{"$ref":"#/x"}}}`,
		"combinator":         `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}]}}}`,
		"unknown keyword":    `{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}`,
		"format not allowed": `{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`,
		"list of anything":   `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`,
		"top keyword":        `{"type":"object","properties":{},"additionalProperties":false}`,
		"required unknown":   `{"type":"object","properties":{},"required":["a"]}`,
		"bad default":        `{"type":"object","properties":{"a":{"type":"integer","default":"x"}}}`,
		"default not option": `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"default":"y"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(schema), &s); err != nil {
				t.Fatal(err)
			}
			if _, err := core.NewForm(&s); err == nil {
				t.Errorf("accepted %s", schema)
			}
		})
	}
}

// TestFormCheck: defaults fill what is absent, then the content is validated; each wrong answer
// is an *ElicitAnswerError saying what is wrong.
func TestFormCheck(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(enumSchema), &s); err != nil {
		t.Fatal(err)
	}
	s.Properties["mail"] = &jsonschema.Schema{Type: "string", Format: "email"}
	f, err := core.NewForm(&s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Check(map[string]any{"color": "r", "age": 3.0})
	if err != nil {
		t.Fatal(err)
	}
	if sprint(got) != "map[age:3 color:r name:anon ok:true size:m tags:[x]]" {
		t.Errorf("checked %v", got)
	}
	if _, err := core.FormOf[contact]().Check(map[string]any{"mail": "a@b.c"}); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("a missing required member: %v", err)
	}
	for name, tt := range map[string]struct {
		content map[string]any
		reason  string
	}{
		"not an option": {map[string]any{"color": "blue"}, "/color"},
		"wrong type":    {map[string]any{"color": "r", "age": "old"}, "/age"},
		"below minimum": {map[string]any{"color": "r", "age": -1.0}, "/age"},
		"bad email":     {map[string]any{"color": "r", "mail": "not-an-address"}, "/mail"},
		"too few":       {map[string]any{"color": "r", "tags": []any{}}, "/tags"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.Check(tt.content)
			var ae *core.ElicitAnswerError
			if !errors.As(err, &ae) || !strings.Contains(ae.Reason, tt.reason) {
				t.Errorf("error %v, want an *ElicitAnswerError about %s", err, tt.reason)
			}
		})
	}
}

type contact struct {
	Name string `json:"name"`
	Mail string `json:"mail,omitempty"`
	Size string `json:"size,omitempty"`
}

// contactForm has a default, to see it applied on every path.
func contactForm(t testing.TB) *core.Form {
	s := core.FormOf[contact]().Schema()
	s.Properties["size"].Enum = []any{"s", "m"}
	s.Properties["size"].Default = json.RawMessage(`"m"`)
	f, err := core.NewForm(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestElicitFormLegacy: Call.Elicit with a Form sends its schema, checks the answer and applies
// the defaults; ElicitAs decodes into the Go type; a wrong answer is an error to the handler.
func TestElicitFormLegacy(t *testing.T) {
	form := contactForm(t)
	type outcomeT struct {
		res *core.ElicitResult
		v   contact
		err error
	}
	got := make(chan outcomeT, 4)
	srv := newServer(nil)
	srv.AddTool(&core.Tool{Name: "form"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		res, err := req.Elicit(ctx, &core.ElicitParams{Message: "Who?", Form: form})
		got <- outcomeT{res: res, err: err}
		return core.TextResult("ok"), nil
	})
	core.AddTool(srv, &core.Tool{Name: "typed"}, func(ctx context.Context, req *core.ToolRequest, _ struct{}) (*core.CallToolResult, any, error) {
		v, res, err := core.ElicitAs[contact](ctx, req.Call, "Who?")
		got <- outcomeT{res: res, v: v, err: err}
		return core.TextResult("ok"), nil, nil
	})
	srv.AddTool(&core.Tool{Name: "both"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_, err := req.Elicit(ctx, &core.ElicitParams{Message: "?", Form: form, RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
		got <- outcomeT{err: err}
		return core.TextResult("ok"), nil
	})
	srv.AddTool(&core.Tool{Name: "nested"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_, err := req.Elicit(ctx, &core.ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object"}}}`)})
		got <- outcomeT{err: err}
		return core.TextResult("ok"), nil
	})
	c := newClient(t, srv)
	c.initWith("2025-11-25", map[string]any{"elicitation": map[string]any{}})

	ask := func(tool, answerWith string) outcomeT {
		t.Helper()
		path, reply := c.callAsync(c.ids.Add(1), "tools/call", map[string]any{"name": tool})
		req := nextRequest(t, path, "elicitation/create", "ElicitRequest")
		if p := string(req.Params); tool == "form" && (!strings.Contains(p, `"default":"m"`) || !strings.Contains(p, `"enum":["s","m"]`)) {
			t.Errorf("the form's schema was not sent: %s", req.Params)
		}
		answer(t, c.ss, req.ID, `"result":`+answerWith)
		o := await(t, got, "the elicitation")
		await(t, reply, "the reply")
		return o
	}

	o := ask("form", `{"action":"accept","content":{"name":"Ada"}}`)
	if o.err != nil || o.res.Content["size"] != "m" || o.res.Content["name"] != "Ada" {
		t.Errorf("accepted: %+v %v", o.res, o.err)
	}
	o = ask("form", `{"action":"accept","content":{"name":"Ada","size":"xl"}}`)
	var ae *core.ElicitAnswerError
	if !errors.As(o.err, &ae) || ae.Result == nil || ae.Result.Content["size"] != "xl" || !strings.Contains(o.err.Error(), "/size") {
		t.Errorf("a wrong answer: %+v %v", o.res, o.err)
	}
	if o = ask("form", `{"action":"decline"}`); o.err != nil || o.res.Action != "decline" {
		t.Errorf("declined: %+v %v", o.res, o.err)
	}
	o = ask("typed", `{"action":"accept","content":{"name":"Bob","mail":"bob@example.com"}}`)
	if o.err != nil || o.v != (contact{Name: "Bob", Mail: "bob@example.com"}) {
		t.Errorf("typed: %+v %v", o.v, o.err)
	}
	if o = ask("typed", `{"action":"accept","content":{}}`); !errors.As(o.err, &ae) {
		t.Errorf("typed, required member missing: %+v %v", o.v, o.err)
	}

	// A schema outside the subset, or two at once, fails before anything is sent.
	for _, tool := range []string{"both", "nested"} {
		path, reply := c.callAsync(c.ids.Add(1), "tools/call", map[string]any{"name": tool})
		if o := await(t, got, tool); o.err == nil {
			t.Errorf("%s: no error", tool)
		}
		await(t, reply, "the reply")
		quiet(t, path)
	}
}

// TestFormInputRounds: the same handler asks with ElicitInput(Form) and reads FormResponseAs,
// on a 2026-07-28 retry and through the legacy shim; defaults are applied and a wrong answer
// reaches the handler as an *ElicitAnswerError.
func TestFormInputRounds(t *testing.T) {
	type result struct {
		v   contact
		err error
	}
	seen := make(chan result, 8)
	srv := newServer(nil)
	form := contactForm(t)
	srv.AddTool(&core.Tool{Name: "who"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		res, err := req.FormResponse("who", form)
		if res == nil && err == nil {
			return nil, core.NeedInput(map[string]core.InputRequest{"who": core.ElicitInput(core.ElicitParams{Message: "Who?", Form: form})}, "")
		}
		var v contact
		if err == nil {
			b, _ := json.Marshal(res.Content)
			_ = json.Unmarshal(b, &v)
		}
		seen <- result{v, err}
		if err != nil {
			return core.ErrorResult(err.Error()), nil
		}
		return core.TextResult("hello " + v.Name + " size " + v.Size), nil
	})
	core.AddTool(srv, &core.Tool{Name: "typed"}, func(ctx context.Context, req *core.ToolRequest, _ struct{}) (*core.CallToolResult, any, error) {
		v, res, err := core.FormResponseAs[contact](req.Call, "who")
		if res == nil && err == nil {
			return nil, nil, core.NeedInput(map[string]core.InputRequest{"who": core.ElicitInput(core.ElicitParams{Message: "Who?", Form: core.FormOf[contact]()})}, "")
		}
		seen <- result{v, err}
		return core.TextResult("hi " + v.Name), nil, err
	})
	caps := map[string]any{"elicitation": map[string]any{}}

	// 2026-07-28: input_required, then the retry with the answer.
	c := newClient(t, srv)
	for _, tt := range []struct {
		tool, content, text string
		bad                 bool
	}{
		{"who", `{"name":"Ada"}`, "hello Ada size m", false},
		{"who", `{"name":"Ada","size":"xl"}`, "", true},
		{"typed", `{"name":"Bob"}`, "hi Bob", false},
		{"typed", `{"size":"s"}`, "", true},
	} {
		ir := wantInputRequired(t, c.modernCall("tools/call", map[string]any{"name": tt.tool}, caps), "CallToolResult")
		if p := string(ir.InputRequests["who"].Params); !strings.Contains(p, `"requestedSchema":{"type":"object"`) || !strings.Contains(p, `"mail":{"type":"string"}`) {
			t.Errorf("the form was not sent: %s", ir.InputRequests["who"].Params)
		}
		w := c.modernCall("tools/call", map[string]any{"name": tt.tool, "inputResponses": map[string]any{
			"who": raw(`{"action":"accept","content":` + tt.content + `}`),
		}}, caps)
		r := await(t, seen, "the handler")
		var ae *core.ElicitAnswerError
		if tt.bad != errors.As(r.err, &ae) {
			t.Errorf("%s %s: handler got %v", tt.tool, tt.content, r.err)
		}
		if !tt.bad {
			if text := complete(t, w, "CallToolResult"); text != tt.text {
				t.Errorf("%s %s: %q, want %q", tt.tool, tt.content, text, tt.text)
			}
		}
	}

	// Legacy: the shim asks the client and runs the handler again with the answer.
	lc := newClient(t, srv)
	lc.initWith("2025-11-25", caps)
	w, reqs, _ := lc.legacyCall("tools/call", map[string]any{"name": "who"}, func(req *wire) string {
		return `"result":{"action":"accept","content":{"name":"Cy"}}`
	})
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Params), `"default":"m"`) {
		t.Errorf("shim requests %v", reqs)
	}
	if r := await(t, seen, "the shim's rerun"); r.err != nil || r.v.Size != "m" {
		t.Errorf("shim: %+v", r)
	}
	var res toolResult
	if err := json.Unmarshal(w.Result, &res); err != nil || res.text() != "hello Cy size m" {
		t.Errorf("shim result %s", w)
	}
}

// TestElicitInputFormRefused: a handler that asks with a schema outside the subset gets -32603,
// and the reason is logged.
func TestElicitInputFormRefused(t *testing.T) {
	elog := newErrorLog()
	srv := newServer(&core.Options{Logger: elog.logger()})
	srv.AddTool(&core.Tool{Name: "bad"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return nil, core.NeedInput(map[string]core.InputRequest{"x": core.ElicitInput(core.ElicitParams{
			Message: "?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"deep":{"type":"object"}}}`),
		})}, "")
	})
	c := newClient(t, srv)
	wantModernError(t, c.modernCall("tools/call", map[string]any{"name": "bad"}, map[string]any{"elicitation": map[string]any{}}), -32603)
	if !strings.Contains(elog.String(), "flat object of primitive properties") {
		t.Errorf("log %s", elog)
	}
}
