package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// exampleServer is a server with one typed tool.
func exampleServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "greet", Description: "Greets someone."},
		func(ctx context.Context, req *core.ToolRequest, in greetIn) (*core.CallToolResult, greetOut, error) {
			return nil, greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	return s
}

// Connect to a Streamable HTTP endpoint; Auto (the default lifecycle) picks 2026-07-28 when the
// server speaks it.
func ExampleConnect() {
	srv := httptest.NewServer(mcphttp.New(exampleServer(), mcphttp.Options{}))
	defer srv.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL}, client.Options{
		Info: core.Implementation{Name: "example-client", Version: "1.0.0"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.ProtocolVersion())
	// Output: example 2026-07-28
}

// Call a tool and read its text, or decode its structured output with CallToolAs.
func ExampleClient_CallTool() {
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.InMemoryTransport{Server: exampleServer()}, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	res, err := c.CallTool(ctx, "greet", map[string]any{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)

	out, _, err := client.CallToolAs[greetOut](ctx, c, "greet", greetIn{Name: "Grace"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Greeting)
	// Output:
	// {"greeting":"Hello, Ada!"}
	// Hello, Grace!
}

// Test a server without sockets: the in-memory transport connects straight to a *core.Server,
// in either lifecycle.
func ExampleInMemoryTransport() {
	ctx := context.Background()
	s := exampleServer()
	for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
		c, err := client.Connect(ctx, &client.InMemoryTransport{Server: s}, client.Options{Lifecycle: lc})
		if err != nil {
			log.Fatal(err)
		}
		for tool, err := range c.ListTools(ctx) {
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(lc, c.ProtocolVersion(), tool.Name)
		}
		c.Close()
	}
	// Output:
	// legacy 2025-11-25 greet
	// modern 2026-07-28 greet
}
