package apps_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// serve serves s over Streamable HTTP on loopback for the test.
func serve(t *testing.T, s *core.Server) string {
	t.Helper()
	h := mcphttp.New(s, mcphttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	return srv.URL
}

// connect opens a client of lifecycle lc, declaring MCP Apps when withApps is set.
func connect(t *testing.T, url string, lc client.Lifecycle, withApps bool) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: url}, client.Options{Lifecycle: lc, Apps: withApps})
	if err != nil {
		t.Fatalf("connect (%v): %v", lc, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var lifecycles = []struct {
	name string
	lc   client.Lifecycle
}{{"legacy", client.Legacy}, {"2026-07-28", client.Modern}}

// schemaFile is where the extension's published JSON schema lands once the browser test's host
// page is installed (npm ci in examples/apps/host).
const (
	schemaFile = "../../examples/apps/host/node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json"
	// hostPackage pins the packages (a checkout without it has nothing to install).
	hostPackage = "../../examples/apps/host/package.json"
)

var (
	schemaMu sync.Mutex
	schemas  = map[string]*jsonschema.Schema{}
)

// extSchema compiles one definition of the extension's published schema, or returns nil when
// the package is not installed (TestPublishedSchema says so).
func extSchema(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if sch, ok := schemas[def]; ok {
		return sch
	}
	f, err := os.Open(schemaFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///ext-apps/schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("file:///ext-apps/schema.json#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	schemas[def] = sch
	return sch
}

// validateExt checks v, as JSON, against a definition of the extension's schema.
func validateExt(t *testing.T, def string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	sch := extSchema(t, def)
	if sch == nil {
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("%s does not conform to %s of @modelcontextprotocol/ext-apps: %v", b, def, err)
	}
}

// The shapes are checked against the extension's published schema when it is installed; this
// test says when it is not (and fails under MCPKIT_REQUIRE_BINARIES, which CI sets after
// installing it, when the checkout pins the package).
func TestPublishedSchema(t *testing.T) {
	if _, err := os.Stat(schemaFile); err != nil {
		msg := fmt.Sprintf("the JSON schema of @modelcontextprotocol/ext-apps is not installed (%v): run bash scripts/apps-host.sh (npm ci in examples/apps/host; make test-apps runs it)", err)
		if _, pinned := os.Stat(hostPackage); pinned == nil && os.Getenv(testutil.RequireBinariesEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, def := range []string{"McpUiResourceMeta", "McpUiToolMeta", "McpUiClientCapabilities"} {
		if extSchema(t, def) == nil {
			t.Fatalf("%s is not in the schema", def)
		}
	}
	// The schema is strict: a field the SEP does not define is refused, so the checks can fail.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"resourceUri":"ui://a","csp":{}}`))
	if extSchema(t, "McpUiToolMeta").Validate(bad) == nil {
		t.Fatal("the tool schema accepted csp on a tool")
	}
}
