package mcphttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Wire strings of the 2026-07-28 lifecycle the tests compare.
const (
	modernVersion    = testutil.ModernVersion
	msgAcceptBoth    = "Not Acceptable: Accept header must include application/json and text/event-stream"
	msgMethodNotAllw = "Method not allowed"
	msgEnvelopeHdr   = "Header mismatch: MCP-Protocol-Version header is missing or legacy while the body carries the modern _meta envelope"
	msgLegacyLocked  = "Invalid Request: the session already negotiated the legacy lifecycle via `initialize`"
)

// headersSchema is the input schema of the "headers" tool: three arguments mirrored in
// Mcp-Param-* headers (a string, a number and a boolean) and one that is not.
const headersSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"priority":{"type":"number","x-mcp-header":"Priority"},` +
	`"dryRun":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
	`"note":{"type":"string"}}}`

// addModernTools registers what the 2026-07-28 tests drive:
//
//   - stream: sends one progress notification (the request needs a progress token), reports
//     the request id on tl.notified, then waits for tl.release or its context (whose cause
//     goes to tl.ctxDone);
//   - flood: sends arguments.count progress notifications and reports each call's error on
//     tl.flooded;
//   - log: logs one message at debug, info, warning and error, and answers with the levels that
//     were sent, comma-separated;
//   - needs_sampling: fails with -32021 unless the client declared sampling;
//   - headers: the x-mcp-header tool (headersSchema), answering with its arguments;
//   - the custom method test/fail, which fails with the code in params.code (after one progress
//     notification when the request has a progress token);
//   - the prompt "greet", the prompt "grüße" and the resources test://doc and test://dóc.
func addModernTools(s *core.Server, tl *tools) {
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&core.Tool{Name: "stream", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if err := req.Progress(1, 2, "first"); err != nil {
			return nil, err
		}
		tl.notified <- req.ID().String()
		select {
		case <-tl.release:
			return core.TextResult("streamed"), nil
		case <-ctx.Done():
			tl.ctxDone <- context.Cause(ctx)
			return nil, ctx.Err()
		}
	})
	s.AddTool(&core.Tool{Name: "flood", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var in struct {
			Count int `json:"count"`
		}
		_ = json.Unmarshal(req.Arguments, &in)
		errs := make([]error, in.Count)
		for i := range errs {
			errs[i] = req.Progress(float64(i+1), float64(in.Count), "")
		}
		tl.flooded <- errs
		return core.TextResult("flooded"), nil
	})
	s.AddTool(&core.Tool{Name: "log", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		var sent []string
		for _, lvl := range []core.LoggingLevel{core.LevelDebug, core.LevelInfo, core.LevelWarning, core.LevelError} {
			ok, err := req.Log(lvl, "test", string(lvl))
			if err != nil {
				return nil, err
			}
			if ok {
				sent = append(sent, string(lvl))
			}
		}
		return core.TextResult(strings.Join(sent, ",")), nil
	})
	s.AddTool(&core.Tool{Name: "needs_sampling", InputSchema: obj}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if err := req.RequireClientCapability("sampling"); err != nil {
			return nil, err
		}
		return core.TextResult("sampled"), nil
	})
	s.AddTool(&core.Tool{Name: "headers", InputSchema: json.RawMessage(headersSchema)}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult(string(req.Arguments)), nil
	})
	s.HandleMethod("test/fail", func(ctx context.Context, c *core.Call) (any, error) {
		var p struct {
			Code int64 `json:"code"`
		}
		_ = json.Unmarshal(c.Params(), &p)
		_ = c.Progress(1, 0, "")
		return nil, jsonrpc.NewError(p.Code, "test failure")
	})
	for _, name := range []string{"greet", "grüße"} {
		s.AddPrompt(&core.Prompt{Name: name, Description: "Says hello."}, func(ctx context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("hello")}}}, nil
		})
	}
	for _, uri := range []string{"test://doc", "test://dóc"} {
		s.AddResource(&core.Resource{URI: uri, Name: "doc", MimeType: "text/plain"}, func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: "doc"}}}, nil
		})
	}
}

// modern sends body as a 2026-07-28 client does (testutil.NewModernPost), then applies the header
// pairs: a value replaces the header, an empty value removes it.
func (f *fixture) modern(t *testing.T, body string, hdr ...string) testutil.Reply {
	t.Helper()
	c := f.client()
	return c.Do(t, modernPost(c, body, hdr...))
}

// modernPost builds the request of fixture.modern.
func modernPost(c *testutil.Client, body string, hdr ...string) *http.Request {
	req := c.NewModernPost(context.Background(), body)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header[http.CanonicalHeaderKey(hdr[i])] = []string{hdr[i+1]}
		}
	}
	return req
}

// call is the body of a 2026-07-28 tools/call with the given arguments (nil for none).
func call(id any, tool string, args map[string]any) string {
	p := map[string]any{"name": tool}
	if args != nil {
		p["arguments"] = args
	}
	return testutil.ModernRequest(id, "tools/call", p)
}

// withMeta is a 2026-07-28 request whose _meta gets the extra members (beside the envelope).
func withMeta(id any, method string, params map[string]any, meta map[string]any) string {
	p := map[string]any{"_meta": meta}
	for k, v := range params {
		p[k] = v
	}
	return testutil.ModernRequest(id, method, p)
}

// checkModernSchema validates data against a definition of the 2026-07-28 schema.
func checkModernSchema(t *testing.T, def string, data []byte) {
	t.Helper()
	testutil.ValidateDef(t, modernVersion, def, data)
}

// wantJSONAnswer checks a 200 application/json answer with a Content-Length and returns its
// message.
func wantJSONAnswer(t *testing.T, rep testutil.Reply) testutil.Wire {
	t.Helper()
	if rep.Status != http.StatusOK || rep.ContentType() != "application/json" {
		t.Fatalf("answer %d %q, want 200 application/json: %s", rep.Status, rep.Header.Get("Content-Type"), rep.Body)
	}
	if rep.Header.Get("Content-Length") == "" {
		t.Errorf("a JSON answer without Content-Length")
	}
	return testutil.DecodeWire(t, rep.Body)
}
