package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// serve feeds frames to a session the way a transport does and prints each answer. The examples
// use it to show the wire; a real server hands the core to stdio.Serve or mcphttp.New instead.
func serve(s *core.Server, frames ...string) {
	ss := transport.NewSession(s, transport.SessionOptions{})
	defer ss.Close()
	for _, f := range frames {
		msg, err := transport.Core.DecodeMessage([]byte(f))
		if err != nil {
			fmt.Println("decode:", err)
			continue
		}
		if resp := transport.Core.Handle(ss, context.Background(), msg, nil); resp != nil {
			fmt.Println(string(transport.Core.EncodeResponseMessage(resp)))
		}
	}
}

// modernMetaJSON is the _meta envelope of a 2026-07-28 request from a client that can elicit.
const modernMetaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// A typed tool: the input schema comes from the Go type, the arguments are validated and decoded
// before the handler runs, and the output is sent as structuredContent (with a text copy). A
// plain error from the handler is a tool execution error the model reads (isError).
func ExampleAddTool() {
	type AddInput struct {
		A int `json:"a" jsonschema:"the first addend"`
		B int `json:"b" jsonschema:"the second addend"`
	}
	type AddOutput struct {
		Sum int `json:"sum"`
	}
	s := core.NewServer(core.Implementation{Name: "calc", Version: "1.0.0"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, req *core.ToolRequest, in AddInput) (*core.CallToolResult, AddOutput, error) {
			if in.A < 0 || in.B < 0 {
				return nil, AddOutput{}, errors.New("only natural numbers, please")
			}
			return nil, AddOutput{Sum: in.A + in.B}, nil
		})
	serve(s,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":-1,"b":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":"two"}}}`,
	)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"sum\":42}"}],"structuredContent":{"sum":42},"isError":false}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"only natural numbers, please"}],"isError":true}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Missing required arguments: b"}],"isError":true}}
}

// A tool with a hand-written input schema and a raw handler.
func ExampleServer_AddTool() {
	s := core.NewServer(core.Implementation{Name: "echo", Version: "1.0.0"}, core.Options{})
	s.AddTool(&core.Tool{
		Name:        "echo",
		InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("echo: " + string(req.Arguments)), nil
	})
	serve(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"echo: {\"text\":\"hi\"}"}],"isError":false}}
}

// A handler that needs the user's input returns NeedInput: a 2026-07-28 client gets an
// input_required result and retries with the answer; on a legacy session the server asks the
// client itself and runs the handler again. FormResponseAs reads the answer, checked against the
// form of the Go type.
func ExampleNeedInput() {
	type Confirm struct {
		OK bool `json:"ok" jsonschema:"go ahead?"`
	}
	s := core.NewServer(core.Implementation{Name: "files", Version: "1.0.0"}, core.Options{})
	s.AddTool(&core.Tool{Name: "delete"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		answer, res, err := core.FormResponseAs[Confirm](req.Call, "confirm")
		if err != nil {
			return nil, err // a wrong answer: the model reads why
		}
		if res == nil { // first round: ask
			return nil, core.NeedInput(map[string]core.InputRequest{
				"confirm": core.ElicitInput(core.ElicitParams{Message: "Delete the file?", Form: core.FormOf[Confirm]()}),
			}, "")
		}
		if res.Action != "accept" || !answer.OK {
			return core.TextResult("kept"), nil
		}
		return core.TextResult("deleted"), nil
	})
	serve(s,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete",`+modernMetaJSON+`}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},`+modernMetaJSON+`}}`,
	)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"files","version":"1.0.0"}},"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Delete the file?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean","description":"go ahead?"}},"required":["ok"]}}}}}}
	// {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"files","version":"1.0.0"}},"content":[{"type":"text","text":"deleted"}],"isError":false}}
}

// The form of a Go struct, as sent in requestedSchema.
func ExampleFormOf() {
	type Signup struct {
		Name string `json:"name" jsonschema:"your name"`
		Age  int    `json:"age,omitempty"`
	}
	f := core.FormOf[Signup]()
	content, err := f.Check(map[string]any{"name": "Ada"})
	fmt.Println(content, err)
	_, err = f.Check(map[string]any{"age": 3})
	fmt.Println(err)
	// Output:
	// map[name:Ada] <nil>
	// mcpkit: the elicitation answer does not match the requested schema: at '': missing property 'name'
}

// A hand-written form with an enumeration and a default, which fills what the user left out.
func ExampleNewForm() {
	schema := core.FormOf[struct {
		Size string `json:"size,omitempty"`
	}]().Schema()
	schema.Properties["size"].Enum = []any{"s", "m", "l"}
	schema.Properties["size"].Default = []byte(`"m"`)
	f, err := core.NewForm(schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Check(nil))
	fmt.Println(f.Check(map[string]any{"size": "xl"}))
	// Output:
	// map[size:m] <nil>
	// map[] mcpkit: the elicitation answer does not match the requested schema: at '/size': value must be one of 's', 'm', 'l'
}

// Resource templates are RFC 6570 URI templates: {+path} spans '/', {?q} is an optional query
// parameter; the handler gets the variables percent-decoded.
func ExampleServer_AddResourceTemplate() {
	s := core.NewServer(core.Implementation{Name: "docs", Version: "1.0.0"}, core.Options{})
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "docs:///{+path}{?rev}", Name: "docs", MimeType: "text/plain"},
		func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			text := "path=" + req.Vars["path"]
			if rev, ok := req.Vars["rev"]; ok {
				text += " rev=" + rev
			}
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: text}}}, nil
		})
	serve(s,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"docs:///guide/intro%20one.md?rev=7"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"docs:///"}}`,
	)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"docs:///guide/intro%20one.md?rev=7","mimeType":"text/plain","text":"path=guide/intro one.md rev=7"}]}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Resource not found: docs:///","data":{"uri":"docs:///"}}}
}

func ExampleResourceTemplate_Expand() {
	t := core.ResourceTemplate{URITemplate: "docs:///{+path}{?rev}"}
	uri, err := t.Expand(map[string]string{"path": "guide/intro one.md", "rev": "7"})
	fmt.Println(uri, err)
	// Output:
	// docs:///guide/intro%20one.md?rev=7 <nil>
}

// A prompt with an argument; prompts/get fills in the messages.
func ExampleServer_AddPrompt() {
	s := core.NewServer(core.Implementation{Name: "review", Version: "1.0.0"}, core.Options{})
	s.AddPrompt(&core.Prompt{
		Name:      "review",
		Arguments: []core.PromptArgument{{Name: "code", Required: true}},
	}, func(ctx context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Messages: []core.PromptMessage{{
			Role:    "user",
			Content: core.Text("Please review:\n" + strings.TrimSpace(req.Arguments["code"])),
		}}}, nil
	})
	serve(s, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review","arguments":{"code":"x := 1 "}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Please review:\nx := 1"}}]}}
}

// On a legacy request Call.Elicit asks the client and waits; on a 2026-07-28 request it cannot
// (there are no server-to-client requests there) and says to use NeedInput instead.
func ExampleNeedInputError() {
	s := core.NewServer(core.Implementation{Name: "ask", Version: "1.0.0"}, core.Options{})
	s.AddTool(&core.Tool{Name: "ask"}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_, err := req.Elicit(ctx, &core.ElicitParams{Message: "Name?"})
		var ni *core.NeedInputError
		if errors.As(err, &ni) {
			return core.TextResult("use NeedInput for " + ni.Method), nil
		}
		return core.TextResult("asked"), nil
	})
	serve(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",`+modernMetaJSON+`}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ask","version":"1.0.0"}},"content":[{"type":"text","text":"use NeedInput for elicitation/create"}],"isError":false}}
}
