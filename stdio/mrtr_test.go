package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// Multi round-trip results over stdio: on a legacy process the server fulfils a handler's
// input requests as real requests on stdout and reruns it (the legacy shim); on a 2026-07-28
// process the client does, with the sealed requestState.

// servePipes runs stdio.Serve over two OS pipes, as a child process would see them.
func servePipes(t *testing.T, srv *core.Server) *peer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, in: inW, lines: make(chan string, 1000), done: make(chan error, 1), errLog: &lockedBuffer{}}
	go func() {
		err := stdio.Serve(context.Background(), srv, stdio.Options{In: inR, Out: outW, Logger: logTo(p.errLog)})
		outW.Close()
		inR.Close()
		p.done <- err
	}()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		outR.Close()
		close(p.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.done:
		case <-time.After(failsafe):
			t.Error("Serve did not return after EOF")
		}
		<-readerDone
	})
	return p
}

// exchange sends a request and serves what the server asks meanwhile, answering each request
// with answer (JSON-RPC members such as `"result":{}`; "" leaves it unanswered). It returns the
// response to the request, the requests the server sent and its notifications.
func (p *peer) exchange(line string, answer func(req msg) string) (msg, []msg, []msg) {
	p.t.Helper()
	var sent struct {
		ID json.RawMessage `json:"id"`
	}
	if err := jsonv2.Unmarshal([]byte(line), &sent); err != nil {
		p.t.Fatal(err)
	}
	p.write(line)
	var reqs, notes []msg
	for {
		m := p.next()
		testutil.ValidateDef(p.t, "2025-11-25", "JSONRPCMessage", []byte(m.raw))
		switch {
		case m.Method != "" && m.ID != nil:
			reqs = append(reqs, m)
			if def := map[string]string{"elicitation/create": "ElicitRequest", "sampling/createMessage": "CreateMessageRequest", "roots/list": "ListRootsRequest"}[m.Method]; def != "" {
				testutil.ValidateDef(p.t, "2025-11-25", def, []byte(m.raw))
			}
			if members := answer(m); members != "" {
				p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + members + "}\n")
			}
		case m.Method != "":
			notes = append(notes, m)
		case string(m.ID) == string(sent.ID):
			return m, reqs, notes
		default:
			p.t.Fatalf("unexpected frame %s", m.raw)
		}
	}
}

// answers is a client that supports everything.
func answers(req msg) string {
	switch req.Method {
	case "elicitation/create":
		return `"result":{"action":"accept","content":{"name":"Ann"}}`
	case "sampling/createMessage":
		return `"result":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`
	case "roots/list":
		return `"result":{"roots":[{"uri":"file:///w"}]}`
	}
	return `"error":{"code":-32601,"message":"Method not found"}`
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

func askName() core.InputRequest {
	return core.ElicitInput(core.ElicitParams{Message: "name?", RequestedSchema: nameSchema})
}

func askModel() core.InputRequest {
	return core.SamplingInput(core.CreateMessageParams{
		Messages:  []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("capital?")}}},
		MaxTokens: 10,
	})
}

// mrtrServer has the tools of the shim scenarios:
//   - all: elicitation, sampling and roots in one round, with state;
//   - rounds: three rounds of elicitation, the state growing each round;
//   - forever: asks again every time;
//   - url: a URL elicitation;
//   - escalate: elicitation, then roots in the second round.
func mrtrServer(opts *core.Options) *core.Server {
	if opts == nil {
		opts = &core.Options{}
	}
	opts.Logger = logTo(io.Discard)
	srv := core.NewServer(core.Implementation{Name: "stdio-test", Version: "1"}, optionsOf(opts))
	add := func(name string, h func(req *core.ToolRequest) (string, error)) {
		srv.AddTool(&core.Tool{Name: name}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			text, err := h(req)
			if err != nil {
				return nil, err
			}
			return core.TextResult(text), nil
		})
	}
	add("all", func(req *core.ToolRequest) (string, error) {
		state, _ := req.RequestState()
		who, ok1 := req.ElicitResponse("who")
		m, ok2 := req.SamplingResponse("model")
		r, ok3 := req.RootsResponse("roots")
		if !ok1 || !ok2 || !ok3 {
			return "", core.NeedInput(map[string]core.InputRequest{"who": askName(), "model": askModel(), "roots": core.RootsInput()}, "st")
		}
		return fmt.Sprintf("%s %v %s %s", state, who.Content["name"], m.Content[0].Text, r.Roots[0].URI), nil
	})
	add("rounds", func(req *core.ToolRequest) (string, error) {
		state, _ := req.RequestState()
		if len(state) == 3 {
			return "rounds " + state, nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, state+"r")
	})
	add("forever", func(req *core.ToolRequest) (string, error) {
		return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "again")
	})
	add("url", func(req *core.ToolRequest) (string, error) {
		if r, ok := req.ElicitResponse("u"); ok {
			return "url " + r.Action, nil
		}
		return "", core.NeedInput(map[string]core.InputRequest{"u": core.ElicitInput(core.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/a"})}, "")
	})
	add("escalate", func(req *core.ToolRequest) (string, error) {
		if req.InputResponses() == nil {
			return "", core.NeedInput(map[string]core.InputRequest{"q": askName()}, "")
		}
		return "", core.NeedInput(map[string]core.InputRequest{"r": core.RootsInput()}, "")
	})
	return srv
}

func initWith(caps string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps +
		`,"clientInfo":{"name":"c","version":"1"}}}` + "\n"
}

func callTool(id int, name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`+"\n", id, name)
}

// toolText returns the text of a tools/call result, checked against the 2025-11-25 schema.
func toolText(t *testing.T, m msg) string {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("want a result, got %s", m.raw)
	}
	testutil.ValidateDef(t, "2025-11-25", "CallToolResult", m.Result)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := jsonv2.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("result %s", m.Result)
	}
	if strings.Contains(string(m.Result), "resultType") {
		t.Errorf("a legacy result carries resultType: %s", m.Result)
	}
	return r.Content[0].Text
}

func TestLegacyShimOverStdio(t *testing.T) {
	const everything = `{"elicitation":{"url":{}, "form":{}},"sampling":{},"roots":{}}`
	t.Run("one round", func(t *testing.T) {
		p := servePipes(t, mrtrServer(nil))
		p.write(initWith(everything))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "all"), answers)
		if got := toolText(t, m); got != "st Ann Paris file:///w" {
			t.Errorf("completed with %q", got)
		}
		if len(reqs) != 3 {
			t.Errorf("%d legs, want 3", len(reqs))
		}
		// The process keeps serving: the same call again works the same way.
		m, _, _ = p.exchange(callTool(2, "all"), answers)
		toolText(t, m)
	})
	t.Run("several rounds", func(t *testing.T) {
		p := servePipes(t, mrtrServer(nil))
		p.write(initWith(everything))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "rounds"), answers)
		if got := toolText(t, m); got != "rounds rrr" || len(reqs) != 3 {
			t.Errorf("completed with %q after %d legs", got, len(reqs))
		}
	})
	t.Run("the round limit", func(t *testing.T) {
		p := servePipes(t, mrtrServer(nil))
		p.write(initWith(everything))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "forever"), answers)
		wantErr(t, m, "1", -32603, "Handler still returned `input_required` after 8 legacy shim rounds (SEP-2322)")
		if m.Error.Message != "Handler still returned `input_required` after 8 legacy shim rounds (SEP-2322)" || len(reqs) != 8 {
			t.Errorf("message %q after %d legs", m.Error.Message, len(reqs))
		}
	})
	t.Run("a client error on a leg", func(t *testing.T) {
		p := servePipes(t, mrtrServer(nil))
		p.write(initWith(everything))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "all"), func(req msg) string {
			if req.Method == "roots/list" {
				return `"error":{"code":-32000,"message":"no roots today"}`
			}
			return answers(req)
		})
		wantErr(t, m, "1", -32603, "Internal error handling tools/call request")
		if len(reqs) != 2 { // model, roots (key order); who never went out
			t.Errorf("%d legs, want 2", len(reqs))
		}
	})
	t.Run("a leg times out", func(t *testing.T) {
		p := servePipes(t, mrtrServer(&core.Options{ServerToClientRequestTimeout: 20 * time.Millisecond}))
		p.write(initWith(everything))
		p.next()
		m, reqs, notes := p.exchange(callTool(1, "all"), func(msg) string { return "" })
		wantErr(t, m, "1", -32001, "sampling/createMessage request timed out after 0.02 seconds")
		if len(reqs) != 1 || len(notes) != 1 || notes[0].Method != "notifications/cancelled" {
			t.Errorf("legs %d, notifications %v", len(reqs), notes)
		}
	})
	t.Run("URL elicitation gets an elicitationId", func(t *testing.T) {
		p := servePipes(t, mrtrServer(nil))
		p.write(initWith(everything))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "url"), func(msg) string { return `"result":{"action":"accept"}` })
		if got := toolText(t, m); got != "url accept" || len(reqs) != 1 {
			t.Fatalf("completed with %q after %d legs", got, len(reqs))
		}
		var params struct {
			Mode          string `json:"mode"`
			ElicitationID string `json:"elicitationId"`
		}
		jsonv2.Unmarshal(reqs[0].Params, &params)
		if params.Mode != "url" || len(params.ElicitationID) != 36 {
			t.Errorf("URL elicitation params %s", reqs[0].Params)
		}
	})
	t.Run("capabilities are checked every round", func(t *testing.T) {
		p := servePipes(t, mrtrServer(nil))
		p.write(initWith(`{"elicitation":{}}`))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "escalate"), answers)
		msg := `input_required requires client capabilities the client did not declare: {"roots":{}}`
		wantErr(t, m, "1", -32603, "")
		if m.Error.Message != msg || len(reqs) != 1 {
			t.Errorf("message %q after %d legs", m.Error.Message, len(reqs))
		}
		m, reqs, _ = p.exchange(callTool(2, "url"), answers)
		wantErr(t, m, "2", -32603, "")
		if m.Error.Message != `input_required requires client capabilities the client did not declare: {"elicitation":{"url":{}}}` || len(reqs) != 0 {
			t.Errorf("%d legs sent for an undeclared capability", len(reqs))
		}
	})
	t.Run("DisableInputShim", func(t *testing.T) {
		p := servePipes(t, mrtrServer(&core.Options{DisableInputShim: true}))
		p.write(initWith(everything))
		p.next()
		m, reqs, _ := p.exchange(callTool(1, "all"), answers)
		wantErr(t, m, "1", -32603, "input_required results require the 2026-07-28 stateless lifecycle (SEP-2322)")
		if len(reqs) != 0 {
			t.Errorf("%d legs sent with the shim off", len(reqs))
		}
	})
}

// TestInputRequiredOverModernStdio: a 2026-07-28 process gets the input_required result itself
// and retries with the answers and the sealed state; nothing is ever sent to it as a request.
func TestInputRequiredOverModernStdio(t *testing.T) {
	p := servePipes(t, mrtrServer(nil))
	meta := envelope("2026-07-28")
	meta[metakey.ClientCapabilities] = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
	p.write(frame(t, 1, "tools/call", map[string]any{"name": "all"}, meta))
	m := p.next()
	if m.Error != nil || string(m.ID) != "1" {
		t.Fatalf("round 1: %s", m.raw)
	}
	testutil.ValidateDef(t, "2026-07-28", "CallToolResultResponse", []byte(m.raw))
	testutil.ValidateDef(t, "2026-07-28", "InputRequiredResult", m.Result)
	var ir struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if err := jsonv2.Unmarshal(m.Result, &ir); err != nil || ir.ResultType != "input_required" || len(ir.InputRequests) != 3 || !strings.HasPrefix(ir.RequestState, "v1.") {
		t.Fatalf("round 1 result %s", m.Result)
	}
	// The client fulfils them itself and retries with a new id.
	p.write(frame(t, 2, "tools/call", map[string]any{"name": "all", "requestState": ir.RequestState, "inputResponses": map[string]any{
		"who":   map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}},
		"model": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"},
		"roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///w"}}},
	}}, meta))
	m = p.next()
	if m.Error != nil || string(m.ID) != "2" {
		t.Fatalf("retry: %s", m.raw)
	}
	testutil.ValidateDef(t, "2026-07-28", "CallToolResultResponse", []byte(m.raw))
	if !strings.Contains(string(m.Result), `"text":"st Ann Paris file:///w"`) || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
		t.Errorf("retry result %s", m.Result)
	}
	// A tampered state is refused.
	p.write(frame(t, 3, "tools/call", map[string]any{"name": "all", "requestState": ir.RequestState + "-TAMPERED"}, meta))
	wantErr(t, p.next(), "3", -32602, "Invalid or expired requestState")
	// Without the capabilities, -32021 and nothing else.
	meta[metakey.ClientCapabilities] = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
	p.write(frame(t, 4, "tools/call", map[string]any{"name": "all"}, meta))
	m = p.next()
	if m.Error == nil || m.Error.Code != -32021 {
		t.Fatalf("want -32021, got %s", m.raw)
	}
	var data struct {
		Required map[string]any `json:"requiredCapabilities"`
	}
	jsonv2.Unmarshal(m.Error.Data, &data)
	if got, _ := jsonv2.Marshal(data.Required, jsonv2.Deterministic(true)); string(got) != `{"elicitation":{"form":{}},"roots":{},"sampling":{}}` {
		t.Errorf("requiredCapabilities %s", got)
	}
	p.in.Close()
	if err := p.wait(); err != nil && !errors.Is(err, os.ErrClosed) {
		t.Errorf("Serve = %v", err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("unexpected frames %v", rest)
	}
}

// optionsOf lets the test helpers take nil for the default options.
func optionsOf(opts *core.Options) core.Options {
	if opts == nil {
		return core.Options{}
	}
	return *opts
}
