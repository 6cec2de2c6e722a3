package main

import (
	"context"
	"fmt"
	"io"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/core"
)

// runClient is the client mode (-connect): it connects to the MCP server at mcpURL with only
// that URL, authorizing through login (the person opens the printed URL), calls whoami, then
// add_note (which needs notes:write: the client steps up, asking the person once more), and
// prints what the server answered to out.
func runClient(ctx context.Context, mcpURL string, login oauth.Authorizer, out io.Writer) error {
	auth := oauth.New(oauth.Options{Authorizer: login, ClientName: "mcpkit oauth example", Scopes: []string{scopeRead}})
	c, err := mcpclient.Connect(ctx, &mcpclient.HTTPTransport{URL: mcpURL, HTTPClient: auth.Client()}, mcpclient.Options{
		Info: core.Implementation{Name: "oauth-example-client", Version: "1.0.0"},
	})
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", mcpURL, err)
	}
	defer c.Close()
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"whoami", nil}, {"add_note", map[string]any{"text": "written by the example client"}}} {
		res, err := c.CallTool(ctx, call.tool, call.args)
		if err != nil {
			return fmt.Errorf("%s: %w", call.tool, err)
		}
		for _, ct := range res.Content {
			fmt.Fprintf(out, "%s: %s\n", call.tool, ct.Text)
		}
	}
	return nil
}
