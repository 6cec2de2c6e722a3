// Command goclients drives examples/everything with two Go MCP clients the kit's authors did not
// write, go-sdk (github.com/modelcontextprotocol/go-sdk) and mcp-go (github.com/mark3labs/mcp-go),
// in either lifecycle, over Streamable HTTP or stdio. It lives in a module of its own so the kit's
// module never depends on them. make interop runs it.
//
//	goclients gosdk legacy http http://127.0.0.1:3000/mcp
//	goclients gosdk modern stdio ./bin/everything -stdio
//	goclients mcpgo legacy stdio ./bin/everything -stdio
//
// Each check prints PASS or FAIL; the last line sums them up, and the exit status is 1 when one
// failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// The roots both clients declare: firstRoot from the start, secondRoot added by the "roots list
// changed" check.
const (
	firstRoot  = "file:///interop/first"
	secondRoot = "file:///interop/second"
)

// formAnswer fills an elicitation form the way a user would: every property of the requested
// schema gets a value of its type ("interop-<name>" for a string, the first value of an enum,
// true, 1). The fixture's input_required tools echo the values back.
func formAnswer(schema any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
	}
	b, _ := json.Marshal(schema)
	_ = json.Unmarshal(b, &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case p.Type == "boolean":
			out[name] = true
		case p.Type == "integer" || p.Type == "number":
			out[name] = 1
		case p.Type == "string":
			out[name] = "interop-" + name
		}
	}
	return out
}

// logCheck names the logging check of a lifecycle: logging/setLevel sets a legacy session's
// level; on 2026-07-28 each request carries its own in _meta.
func logCheck(modern bool) string {
	if modern {
		return "logging (logLevel in the request's _meta)"
	}
	return "logging (logging/setLevel)"
}

// textCaller calls a tool and returns the text of its result.
type textCaller func(name string, args map[string]any) (string, error)

// listChangedCheck triggers a change of each list (interop_trigger_list_changed) until seen
// reports its notifications/<list>/list_changed; seen waits one poll round for it.
func listChangedCheck(c *checker, call textCaller, seen func(list string) bool) {
	c.check("list changed (tools, prompts, resources)", func() error {
		for _, list := range []string{"tools", "prompts", "resources"} {
			if err := poll("notifications/"+list+"/list_changed", func() (bool, error) {
				if _, err := call("interop_trigger_list_changed", map[string]any{"list": list}); err != nil {
					return false, err
				}
				return seen(list), nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// textCallerOf makes a textCaller of a client's call and text helpers.
func textCallerOf[R any](call func(string, map[string]any) (R, error), text func(R) string) textCaller {
	return func(name string, args map[string]any) (string, error) {
		res, err := call(name, args)
		if err != nil {
			return "", err
		}
		return text(res), nil
	}
}

// expect is the error of a check that got got (or err) and wanted want.
func expect(got, want string, err error) error {
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("got %q, want %q", got, want)
	}
	return nil
}

// inputRequiredChecks are the checks of the fixture's input_required tools and prompt, the same
// for every client: on 2026-07-28 the client fulfils the embedded requests and retries with
// inputResponses and the echoed requestState; on the legacy lifecycle the server's shim sends
// them to the client as elicitation/create, sampling/createMessage and roots/list requests.
// prompt returns a prompt's text.
func inputRequiredChecks(c *checker, call textCaller, prompt func(name string) (string, error), sampled string, roots int) {
	c.check("input_required: elicitation", func() error {
		got, err := call("test_input_required_result_elicitation", nil)
		return expect(got, "Hello, interop-name!", err)
	})
	c.check("input_required: roots", func() error {
		got, err := call("test_input_required_result_list_roots", nil)
		return expect(got, fmt.Sprintf("Found %d root(s)", roots), err)
	})
	c.check("input_required: requestState echoed", func() error {
		got, err := call("test_input_required_result_request_state", nil)
		return expect(got, "state-ok: requestState validated", err)
	})
	c.check("input_required: two rounds, new requestState each", func() error {
		got, err := call("test_input_required_result_multi_round", nil)
		return expect(got, "Multi-round complete for interop-name who likes interop-color", err)
	})
	c.check("input_required: elicitation, sampling and roots at once", func() error {
		got, err := call("test_input_required_result_multiple_inputs", nil)
		return expect(got, fmt.Sprintf("Name: interop-name; Greeting: %s; Roots: %d", sampled, roots), err)
	})
	c.check("input_required: prompts/get", func() error {
		got, err := prompt("test_input_required_result_prompt")
		return expect(got, "Prompt with context: interop-context", err)
	})
}

// checker runs named checks and counts them.
type checker struct {
	prefix         string
	passed, failed int
}

func (c *checker) check(name string, f func() error) {
	if err := f(); err != nil {
		c.failed++
		fmt.Printf("FAIL %s %s: %v\n", c.prefix, name, err)
		return
	}
	c.passed++
	fmt.Printf("PASS %s %s\n", c.prefix, name)
}

// within waits for ch until the bound.
func within[T any](ch <-chan T, what string) (T, error) {
	select {
	case v := <-ch:
		return v, nil
	case <-time.After(10 * time.Second):
		var zero T
		return zero, fmt.Errorf("no %s within 10 s", what)
	}
}

// poll calls f until it reports done, for at most 10 s.
func poll(what string, f func() (bool, error)) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, err := f()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not happen within 10 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// legacyRequestChecks are the legacy checks of what the server asks on its own: elicitation/create
// from test_elicitation, and a roots list change: addRoot adds secondRoot and sends
// notifications/roots/list_changed, which the server counts (interop_roots_changed), and after
// which it finds both roots.
func legacyRequestChecks(c *checker, call textCaller, addRoot func() error) {
	c.check("elicitation (server-to-client request)", func() error {
		got, err := call("test_elicitation", map[string]any{"message": "Who are you?"})
		return expect(got, `User response: action=accept, content={"email":"interop-email","username":"interop-username"}`, err)
	})
	c.check("roots list changed (client-to-server notification)", func() error {
		before, err := call("interop_roots_changed", nil)
		if err != nil {
			return err
		}
		if err := addRoot(); err != nil {
			return err
		}
		if err := poll("the server to see notifications/roots/list_changed", func() (bool, error) {
			now, err := call("interop_roots_changed", nil)
			return err == nil && now != before, err
		}); err != nil {
			return err
		}
		got, err := call("test_input_required_result_list_roots", nil)
		return expect(got, "Found 2 root(s)", err)
	})
}

func main() {
	if len(os.Args) < 5 || (os.Args[3] != "http" && os.Args[3] != "stdio") {
		fmt.Fprintln(os.Stderr, "usage: goclients gosdk|mcpgo legacy|modern http URL | stdio COMMAND [ARGS...]")
		os.Exit(2)
	}
	client, lifecycle, transport, target := os.Args[1], os.Args[2], os.Args[3], os.Args[4:]
	modern := lifecycle == "modern"
	c := &checker{prefix: strings.Join([]string{client, lifecycle, transport}, "/")}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	switch client {
	case "gosdk":
		runGoSDK(ctx, c, modern, transport, target)
	case "mcpgo":
		runMCPGo(ctx, c, modern, transport, target)
	default:
		fmt.Fprintln(os.Stderr, "goclients: unknown client", client)
		os.Exit(2)
	}
	fmt.Printf("goclients %s: %d passed, %d failed\n", c.prefix, c.passed, c.failed)
	if c.failed > 0 || c.passed == 0 {
		os.Exit(1)
	}
}
