// Command hello is a small MCP server: one typed tool, one prompt and one resource. It serves
// stdio by default, or Streamable HTTP with -http.
//
//	go run ./examples/hello                       # stdio
//	go run ./examples/hello -http 127.0.0.1:8080  # HTTP, endpoint /mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/stdio"
)

// GreetInput is the greet tool's arguments; the input schema is derived from it.
type GreetInput struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// GreetOutput is the greet tool's structured output.
type GreetOutput struct {
	Greeting string `json:"greeting"`
}

// newServer builds the example server.
func newServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "hello", Version: "1.0.0"}, core.Options{
		Instructions: "Say hello with the greet tool.",
	})
	core.AddTool(s, &core.Tool{Name: "greet", Description: "Greets someone by name."},
		func(ctx context.Context, req *core.ToolRequest, in GreetInput) (*core.CallToolResult, GreetOutput, error) {
			return nil, GreetOutput{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	s.AddPrompt(&core.Prompt{
		Name:        "review",
		Description: "Asks for a review of a piece of code.",
		Arguments:   []core.PromptArgument{{Name: "code", Description: "The code to review", Required: true}},
	}, func(ctx context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Messages: []core.PromptMessage{{
			Role:    "user",
			Content: core.Text("Please review this code:\n\n" + req.Arguments["code"]),
		}}}, nil
	})
	s.AddResource(&core.Resource{URI: "hello://readme", Name: "readme", MimeType: "text/plain", Description: "About this server."},
		func(ctx context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{
				URI: req.URI, MimeType: "text/plain", Text: "hello: an example server built with mcpkit.",
			}}}, nil
		})
	return s
}

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP on this address (endpoint /mcp) instead of stdio")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer()
	if *httpAddr != "" {
		if err := serveHTTP(ctx, s, *httpAddr); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := stdio.Serve(ctx, s, stdio.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
