// Command conformance-client is the client the official MCP conformance suite drives
// (`conformance client --command ...`): it connects to the URL given as its last argument and
// plays the scenario named by MCP_CONFORMANCE_SCENARIO, in the protocol version named by
// MCP_CONFORMANCE_PROTOCOL_VERSION (2026-07-28 selects the stateless lifecycle, a dated version
// the initialize handshake). MCP_CONFORMANCE_CONTEXT may carry scenario data (the tool calls of
// http-custom-headers; the credentials, keys and tokens of the auth/* scenarios). The auth/*
// scenarios go through package client/oauth: the suite's authorization endpoint approves at
// once, so following its redirect plays the person. It exits non-zero when the scenario could
// not be played.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformance-client: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: conformance-client [flags...] SERVER_URL")
	}
	url := os.Args[len(os.Args)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, url, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"), os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		log.Fatal(err)
	}
}

// options returns the client options every scenario shares: handlers that accept elicitations
// (the client fills in schema defaults), answer sampling with a canned message, and expose one
// root.
func options(version string) *client.Options {
	o := &client.Options{
		Info: core.Implementation{Name: "mcpkit-conformance-client", Version: "1.0.0"},
		Elicitation: func(ctx context.Context, p *core.ElicitParams) (*core.ElicitResult, error) {
			return &core.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
		Sampling: func(ctx context.Context, p *core.CreateMessageParams) (*core.CreateMessageResult, error) {
			return &core.CreateMessageResult{Role: "assistant", Content: core.ContentList{core.Text("This is a test response from the client")}, Model: "test-model", StopReason: "endTurn"}, nil
		},
		Roots: func(ctx context.Context) ([]core.Root, error) {
			return []core.Root{{URI: "file:///test/root", Name: "Test Root"}}, nil
		},
	}
	switch {
	case core.IsModernVersion(version):
		o.Lifecycle = client.Modern
	case core.IsHandshakeVersion(version):
		o.Lifecycle = client.Legacy
		o.ProtocolVersion = version
	default:
		o.Lifecycle = client.Auto
	}
	return o
}

func run(ctx context.Context, url, scenario, version, scenarioContext string) error {
	c, err := connect(ctx, url, scenario, version, scenarioContext)
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := listTools(ctx, c)
	if err != nil {
		return err
	}
	switch scenario {
	case "initialize", "json-schema-ref-no-deref", "request-metadata":
		return nil // connecting and listing is the scenario
	case "tools_call":
		_, err := c.CallTool(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
		return err
	case "elicitation-sep1034-client-defaults":
		_, err := c.CallTool(ctx, "test_client_elicitation_defaults", map[string]any{})
		return err
	case "sse-retry":
		_, err := c.CallTool(ctx, "test_reconnection", map[string]any{})
		return err
	case "sep-2322-client-request-state":
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
			if _, err := c.CallTool(ctx, name, map[string]any{}); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	case "http-standard-headers":
		return everything(ctx, c, tools)
	case "http-custom-headers":
		var sc struct {
			ToolCalls []struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"toolCalls"`
		}
		if err := json.Unmarshal([]byte(scenarioContext), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		for _, tc := range sc.ToolCalls {
			if _, err := c.CallTool(ctx, tc.Name, json.RawMessage(tc.Arguments)); err != nil {
				return fmt.Errorf("%s: %w", tc.Name, err)
			}
		}
		return nil
	case "http-invalid-tool-headers":
		return callAll(ctx, c, tools)
	case "json-schema-2020-12-preservation":
		for _, t := range tools {
			if t.Name == "json_schema_2020_12_tool" {
				_, err := c.CallTool(ctx, "json_schema_echo", map[string]any{"schema": json.RawMessage(t.InputSchema)})
				return err
			}
		}
		return errors.New("the server did not list json_schema_2020_12_tool")
	}
	if strings.HasPrefix(scenario, "auth/") {
		return callAll(ctx, c, tools) // a call may need more scopes (step-up)
	}
	return nil
}

// connect connects to url, through the OAuth layer for the auth/* scenarios.
func connect(ctx context.Context, url, scenario, version, scenarioContext string) (*client.Client, error) {
	t := &client.HTTPTransport{URL: url}
	if strings.HasPrefix(scenario, "auth/") {
		a, err := authTransport(scenario, scenarioContext)
		if err != nil {
			return nil, err
		}
		t.HTTPClient = a.Client()
	}
	c, err := client.Connect(ctx, t, *options(version))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c, nil
}

// callAll calls every tool with made-up arguments.
func callAll(ctx context.Context, c *client.Client, tools []*core.Tool) error {
	for _, t := range tools {
		if _, err := c.CallTool(ctx, t.Name, sampleArguments(t.InputSchema)); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

func listTools(ctx context.Context, c *client.Client) ([]*core.Tool, error) {
	var tools []*core.Tool
	for t, err := range c.ListTools(ctx) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// everything calls every tool, reads every resource and gets every prompt.
func everything(ctx context.Context, c *client.Client, tools []*core.Tool) error {
	for _, t := range tools {
		if _, err := c.CallTool(ctx, t.Name, map[string]any{}); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	for r, err := range c.ListResources(ctx) {
		if err != nil {
			return err
		}
		if _, err := c.ReadResource(ctx, r.URI); err != nil {
			return fmt.Errorf("%s: %w", r.URI, err)
		}
	}
	for p, err := range c.ListPrompts(ctx) {
		if err != nil {
			return err
		}
		if _, err := c.GetPrompt(ctx, p.Name, nil); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return nil
}

// sampleArguments makes up a value for every required property of an input schema.
func sampleArguments(schema []byte) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	args := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return args
	}
	for _, name := range s.Required {
		switch s.Properties[name].Type {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		default:
			args[name] = "sample"
		}
	}
	return args
}
