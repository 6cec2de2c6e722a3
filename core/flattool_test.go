package core_test

import (
	"context"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
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
