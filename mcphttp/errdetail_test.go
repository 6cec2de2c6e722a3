package mcphttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/stdio"
)

// The detail of an error reads the same on Streamable HTTP and on stdio (real pipes): the
// generic message of the code, and in data what is at fault, named.
func TestErrorDetailSameOnBothTransports(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "errs", Version: "1"}, core.Options{})
	s.AddPrompt(&core.Prompt{Name: "greet", Arguments: []core.PromptArgument{{Name: "who"}}},
		func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
			return &core.GetPromptResult{}, nil
		})
	s.AddTool(&core.Tool{Name: "ok"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("ok"), nil
	})
	h := mcphttp.New(s, mcphttp.Options{JSONResponse: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = h.Close() })
	c := testutil.NewClient(srv.URL, srv.Client())
	c.Initialize(t)

	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- stdio.Serve(context.Background(), s, stdio.Options{In: inR, Out: outW})
		_ = outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	stdioCall := func(frame string) testutil.Wire {
		if _, err := inW.WriteString(frame + "\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer on stdio to %s", frame)
		}
		var w testutil.Wire
		if err := json.Unmarshal(lines.Bytes(), &w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	stdioCall(testutil.Initialize(0, "2025-11-25"))

	for _, tc := range []struct{ frame, data string }{
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"nope"}}`, `"Prompt not found: nope"`},
		{`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"greet","arguments":{"who":1}}}`, `"Prompt argument \"who\" must be a string"`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`, `"Tool not found: nope"`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":1,"a":2}}`, `"Invalid JSON: duplicate member \"a\" at /params/a"`},
		{`{"jsonrpc":"2.0","id":5,`, `"Invalid JSON"`},
	} {
		rep := c.Post(t, tc.frame)
		overHTTP := rep.Message(t)
		overStdio := stdioCall(tc.frame)
		for name, w := range map[string]testutil.Wire{"HTTP": overHTTP, "stdio": overStdio} {
			if w.Error == nil || string(w.Error.Data) != tc.data {
				t.Errorf("%s: %s answered %+v, want data %s", name, tc.frame, w.Error, tc.data)
				continue
			}
			if w.Error.Message != "Parse error" && w.Error.Message != "Invalid params" {
				t.Errorf("%s: %s message %q, want the generic one of its code", name, tc.frame, w.Error.Message)
			}
		}
		if overHTTP.Error != nil && overStdio.Error != nil && (overHTTP.Error.Code != overStdio.Error.Code || overHTTP.Error.Message != overStdio.Error.Message) {
			t.Errorf("%s: HTTP %+v, stdio %+v", tc.frame, overHTTP.Error, overStdio.Error)
		}
		if rep.Status != http.StatusOK && rep.Status != http.StatusBadRequest {
			t.Errorf("%s: status %d", tc.frame, rep.Status)
		}
	}
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
