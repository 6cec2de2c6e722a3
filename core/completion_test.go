package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
)

func TestCompletion(t *testing.T) {
	var seen *core.CompleteRequest
	srv := newServer(&core.Options{CompletionHandler: func(_ context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
		seen = req
		switch req.Argument.Name {
		case "many":
			vals := make([]string, 150)
			for i := range vals {
				vals[i] = fmt.Sprintf("v%03d", i)
			}
			return &core.CompleteResult{Completion: core.Completion{Values: vals}}, nil
		case "counted":
			total := 1000
			vals := make([]string, 101)
			for i := range vals {
				vals[i] = "x"
			}
			return &core.CompleteResult{Completion: core.Completion{Values: vals, Total: &total}}, nil
		case "none":
			return nil, nil
		case "fail":
			return nil, fmt.Errorf("hidden")
		}
		var out []string
		for _, v := range []string{"value1", "value2", "other"} {
			if strings.HasPrefix(v, req.Argument.Value) {
				out = append(out, v)
			}
		}
		return &core.CompleteResult{Completion: core.Completion{Values: out}}, nil
	}})
	srv.AddPrompt(&core.Prompt{Name: "p", Arguments: []core.PromptArgument{{Name: "arg1"}}}, okPrompt)
	srv.AddResource(&core.Resource{URI: "test://r", Name: "r"}, okResource)
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, okResource)
	c := newClient(t, srv)
	c.initialize("2025-11-25")

	type completion struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	complete := func(ref map[string]any, name, value string) completion {
		t.Helper()
		var r completion
		c.result("completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": name, "value": value}}, "CompleteResult", &r)
		return r
	}
	prompt := map[string]any{"type": "ref/prompt", "name": "p"}
	if r := complete(prompt, "arg1", "val"); sprint(r.Completion.Values) != "[value1 value2]" || r.Completion.HasMore || r.Completion.Total != nil {
		t.Errorf("prefix completion: %+v", r)
	}
	if seen.Ref.Name != "p" || seen.Argument.Value != "val" {
		t.Errorf("handler saw %+v", seen)
	}
	if r := complete(prompt, "many", ""); len(r.Completion.Values) != 100 || !r.Completion.HasMore || r.Completion.Total == nil || *r.Completion.Total != 150 || r.Completion.Values[99] != "v099" {
		t.Errorf("150 values: %d values, hasMore %v, total %v", len(r.Completion.Values), r.Completion.HasMore, r.Completion.Total)
	}
	if r := complete(prompt, "counted", ""); len(r.Completion.Values) != 100 || *r.Completion.Total != 1000 {
		t.Errorf("handler total: %+v", r)
	}
	if r := complete(prompt, "none", ""); r.Completion.Values == nil || len(r.Completion.Values) != 0 || r.Completion.HasMore {
		t.Errorf("nil result: %+v", r)
	}
	complete(map[string]any{"type": "ref/resource", "uri": "test://r"}, "x", "")
	complete(map[string]any{"type": "ref/resource", "uri": "test://t/{id}"}, "id", "")
	c.result("completion/complete", map[string]any{"ref": prompt, "argument": map[string]any{"name": "arg1", "value": ""}, "context": map[string]any{"arguments": map[string]any{"a": "b"}}}, "CompleteResult", nil)
	if seen.Context["a"] != "b" {
		t.Errorf("context arguments not passed: %+v", seen.Context)
	}

	arg := map[string]any{"name": "arg1", "value": "v"}
	for _, tt := range []struct {
		name    string
		params  any
		message string
		data    any
	}{
		{"params not an object", []any{}, "Invalid params", "Invalid params"},
		{"no params", nil, "Invalid params", "Invalid params"},
		{"ref missing", map[string]any{"argument": arg}, "Invalid params", "Missing or invalid ref"},
		{"ref without type", map[string]any{"ref": map[string]any{"name": "p"}, "argument": arg}, "Invalid params", "Missing or invalid ref"},
		{"ref not an object", map[string]any{"ref": "ref/prompt", "argument": arg}, "Invalid params", "Missing or invalid ref"},
		{"argument missing", map[string]any{"ref": prompt}, "Invalid params", "Missing argument name or value"},
		{"argument without value", map[string]any{"ref": prompt, "argument": map[string]any{"name": "arg1"}}, "Invalid params", "Missing argument name or value"},
		{"argument without name", map[string]any{"ref": prompt, "argument": map[string]any{"value": ""}}, "Invalid params", "Missing argument name or value"},
		{"unknown prompt", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "q"}, "argument": arg}, "Invalid params", "Prompt not found: q"},
		{"unknown resource", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://t/1"}, "argument": arg}, "Resource not found: test://t/1", map[string]any{"uri": "test://t/1"}},
		{"other ref type", map[string]any{"ref": map[string]any{"type": "ref/tool", "name": "x"}, "argument": arg}, "Invalid params", "Invalid ref type: ref/tool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := c.call("completion/complete", tt.params)
			wantError(t, w, -32602, tt.message, tt.data)
		})
	}
	wantError(t, c.call("completion/complete", map[string]any{"ref": prompt, "argument": map[string]any{"name": "fail", "value": ""}}), -32603, "Internal error", "Internal error handling completion/complete request")
}

// TestCompletionWithoutHandler: a server that declares completions without a handler answers with
// no values.
func TestCompletionWithoutHandler(t *testing.T) {
	srv := newServer(&core.Options{Capabilities: &core.ServerCapabilities{Completions: &struct{}{}, Prompts: &core.ListChangedCapability{}}})
	srv.AddPrompt(&core.Prompt{Name: "p"}, okPrompt)
	c := newClient(t, srv)
	w := c.result("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": ""}}, "CompleteResult", nil)
	if canon(t, w.Result) != `{"completion":{"hasMore":false,"values":[]}}` {
		t.Errorf("default completion %s", w.Result)
	}
}
