package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
)

type weatherOut struct {
	Temp int    `json:"temp"`
	Sky  string `json:"sky"`
}

// TestStructuredOutputRules: with an output schema every successful result carries conforming
// structuredContent; an error result carries none (unless the handler set it); both lifecycles
// and both tool kinds follow the same rules, checked against the official schemas.
func TestStructuredOutputRules(t *testing.T) {
	elog := newErrorLog()
	srv := newServer(&core.Options{Logger: elog.logger()})
	type in struct {
		Mode string `json:"mode"`
	}
	core.AddTool(srv, &core.Tool{Name: "weather"}, func(_ context.Context, _ *core.ToolRequest, in in) (*core.CallToolResult, *weatherOut, error) {
		switch in.Mode {
		case "error-result":
			return core.ErrorResult("city unknown"), &weatherOut{}, nil
		case "error-result-zero":
			return core.ErrorResult("city unknown"), nil, nil
		case "plain-error":
			return nil, &weatherOut{Temp: 1}, errors.New("service down")
		case "error-with-details":
			return &core.CallToolResult{IsError: true, Content: []core.Content{core.Text("partial")}, StructuredContent: map[string]any{"temp": 3, "sky": "?"}}, nil, nil
		case "nil-output":
			return nil, nil, nil
		case "nil-output-with-text":
			return core.TextResult("sunny"), nil, nil
		}
		return nil, &weatherOut{Temp: 21, Sky: "clear"}, nil
	})
	obj := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	srv.AddTool(&core.Tool{Name: "raw", OutputSchema: obj}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		switch string(req.Arguments) {
		case `{"mode":"nil"}`:
			return nil, nil
		case `{"mode":"text-only"}`:
			return core.TextResult("no structure"), nil
		case `{"mode":"error"}`:
			return core.ErrorResult("failed"), nil
		}
		return &core.CallToolResult{StructuredContent: map[string]int{"n": 1}}, nil
	})

	type want struct {
		body string // the exact result, or "" for the -32603 answer
	}
	tests := []struct {
		tool, mode string
		want       want
	}{
		{"weather", "ok", want{`{"content":[{"type":"text","text":"{\"temp\":21,\"sky\":\"clear\"}"}],"structuredContent":{"temp":21,"sky":"clear"},"isError":false}`}},
		{"weather", "error-result", want{`{"content":[{"type":"text","text":"city unknown"}],"isError":true}`}},
		{"weather", "error-result-zero", want{`{"content":[{"type":"text","text":"city unknown"}],"isError":true}`}},
		{"weather", "plain-error", want{`{"content":[{"type":"text","text":"service down"}],"isError":true}`}},
		{"weather", "error-with-details", want{`{"content":[{"type":"text","text":"partial"}],"structuredContent":{"sky":"?","temp":3},"isError":true}`}},
		{"weather", "nil-output", want{}},
		{"weather", "nil-output-with-text", want{}},
		{"raw", "ok", want{`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1},"isError":false}`}},
		{"raw", "nil", want{}},
		{"raw", "text-only", want{}},
		{"raw", "error", want{`{"content":[{"type":"text","text":"failed"}],"isError":true}`}},
	}
	legacy := newClient(t, srv)
	legacy.initialize("2025-11-25")
	modern := newClient(t, srv)
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.mode, func(t *testing.T) {
			params := map[string]any{"name": tt.tool, "arguments": map[string]any{"mode": tt.mode}}
			if tt.want.body == "" {
				wantError(t, legacy.call("tools/call", params), -32603, "Internal error", "Internal error calling tool "+tt.tool)
				wantModernError(t, modern.call("tools/call", withMeta(params, modernMeta(nil))), -32603)
				return
			}
			w := legacy.result("tools/call", params, "CallToolResult", nil)
			if got := canon(t, w.Result); got != canon(t, json.RawMessage(tt.want.body)) {
				t.Errorf("legacy result\n got %s\nwant %s", got, tt.want.body)
			}
			members := checkModernResult(t, modern.call("tools/call", withMeta(params, modernMeta(nil))), "CallToolResult")
			_, has := members["structuredContent"]
			if has != strings.Contains(tt.want.body, "structuredContent") {
				t.Errorf("modern structuredContent present = %v, want as legacy %s", has, tt.want.body)
			}
		})
	}
	if n := strings.Count(elog.String(), "declares an output schema but returned no structured content"); n != 8 {
		t.Errorf("%d log lines for missing structured content, want 8 (4 calls on each lifecycle):\n%s", n, elog)
	}
}
