package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/schema"
)

type flatIn struct {
	Text  string  `json:"text"`
	Count int8    `json:"count"`
	Ratio float64 `json:"ratio"`
	Loud  bool    `json:"loud"`
}

type flatOut struct {
	Text  string `json:"text"`
	Count int8   `json:"count,omitzero"`
	Note  string `json:"note,omitempty"`
}

// TestFlatTypedTool drives a typed tool with flat input and output (the structs the flat codec
// settles) through the whole call: arguments with escapes and every kind of member arrive
// decoded as the json package decodes them; an integer out of its field's range is refused; and
// the output reaches the client as that package encodes it.
func TestFlatTypedTool(t *testing.T) {
	srv := newServer(nil)
	got := make(chan flatIn, 1)
	core.AddTool(srv, &core.Tool{Name: "flat"}, func(_ context.Context, _ *core.ToolRequest, in flatIn) (*core.CallToolResult, flatOut, error) {
		got <- in
		return nil, flatOut{Text: in.Text + "<\u2028>", Count: in.Count}, nil
	})
	c := newClient(t, srv)
	c.initialize("2025-11-25")

	args := map[string]any{"text": "a\n\"b\"\t\u00e9\U0001F600", "count": -7, "ratio": 0.5, "loud": true}
	res := c.callTool("flat", args)
	if in, want := <-got, (flatIn{Text: "a\n\"b\"\t\u00e9\U0001F600", Count: -7, Ratio: 0.5, Loud: true}); in != want {
		t.Fatalf("the handler got %+v, want %+v", in, want)
	}
	want, err := jsonv2.Marshal(flatOut{Text: "a\n\"b\"\t\u00e9\U0001F600<\u2028>", Count: -7})
	if err != nil {
		t.Fatal(err)
	}
	if *res.IsError || string(res.StructuredContent) != string(want) || res.text() != string(want) {
		t.Fatalf("got structured %s, text %q; want %s", res.StructuredContent, res.text(), want)
	}

	res = c.callTool("flat", map[string]any{"text": "x", "count": 300})
	var probe flatIn
	perr := jsonv2.Unmarshal([]byte(`{"text":"x","count":300}`), &probe)
	if perr == nil || !*res.IsError || res.text() == "" {
		t.Fatalf("an out-of-range count: got %+v (json says %v)", res, perr)
	}
}

// TestStrictArgumentsAnswerAsTheCheck: a typed tool under the schema derived from its input
// checks its own arguments (a strict decode settles what the schema accepts, the check runs on
// what it leaves), and answers every argument text exactly as the same tool does whose schema
// (one annotation more) leaves every check to tools/call.
func TestStrictArgumentsAnswerAsTheCheck(t *testing.T) {
	derived, err := schema.For[flatIn]() // what AddTool derives
	if err != nil {
		t.Fatal(err)
	}
	commented := append([]byte(`{"$comment":"checked by tools/call",`), derived[1:]...)
	serve := func(sch []byte, opts *core.Options) (*core.Server, *client) {
		srv := newServer(opts)
		core.AddTool(srv, &core.Tool{Name: "flat", InputSchema: sch}, func(_ context.Context, _ *core.ToolRequest, in flatIn) (*core.CallToolResult, flatOut, error) {
			return nil, flatOut{Text: in.Text, Count: in.Count, Note: fmt.Sprint(in.Ratio, in.Loud)}, nil
		})
		c := newClient(t, srv)
		c.initialize("2025-11-25")
		return srv, c
	}
	// Every member valid, then each member in turn replaced by other values, dropped, repeated
	// or misspelled, and other members added: the schema requires all four.
	valid := map[string]string{"text": `"a\u00e9\n"`, "count": `-128`, "ratio": `1.5`, "loud": `true`}
	names := []string{"text", "count", "ratio", "loud"}
	values := []string{`null`, `"x"`, `"\ud800"`, `""`, `1`, `-1`, `127`, `128`, `-129`, `1.0`, `1e1`, `0.5`,
		`1e400`, `true`, `false`, `{}`, `[]`}
	object := func(members ...string) string { return "{" + strings.Join(members, ",") + "}" }
	var texts []string
	for i, name := range names {
		var others []string
		for j, n := range names {
			if j != i {
				others = append(others, `"`+n+`":`+valid[n])
			}
		}
		for _, v := range values {
			texts = append(texts, object(append([]string{`"` + name + `":` + v}, others...)...))
		}
		texts = append(texts, object(others...), // dropped
			object(append([]string{`"` + name + `":` + valid[name], `"` + name + `":` + valid[name]}, others...)...),     // repeated
			object(append([]string{`"` + strings.ToUpper(name) + `":` + valid[name]}, others...)...),                     // misspelled
			object(append([]string{`"\u00` + fmt.Sprintf("%x", name[0]) + name[1:] + `":` + valid[name]}, others...)...)) // escaped
	}
	all := []string{`"text":"a"`, `"count":1`, `"ratio":2`, `"loud":false`}
	texts = append(texts, object(all...), object(append(all, `"x":1`)...), `{}`, `null`, `[]`, `"x"`, `1`)
	for _, opts := range []*core.Options{nil, {SkipArgumentValidation: true}} {
		strictSrv, strict := serve(nil, opts)
		checkedSrv, checked := serve(commented, opts)
		if !core.ChecksOwnArguments(strictSrv, "flat") || core.ChecksOwnArguments(checkedSrv, "flat") {
			t.Fatal("the derived schema should leave the check to the tool, the commented one to tools/call")
		}
		for i, text := range texts {
			// Written by hand: the encoder would refuse the texts with a repeated name.
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flat","arguments":%s}}`, 100+i, text)
			got, want := strict.send(msg), checked.send(msg)
			if got.String() != want.String() {
				t.Errorf("%s (%+v):\n got %s\nwant %s", text, opts, got, want)
			}
		}
	}
}
