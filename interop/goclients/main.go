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
	"fmt"
	"os"
	"strings"
	"time"
)

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
