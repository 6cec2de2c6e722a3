package stdio_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/stdio"
)

// Serve reads newline-delimited JSON-RPC from In and writes the answers to Out, until the input
// ends or ctx is cancelled. A real server leaves In and Out nil: stdin and stdout.
func ExampleServe() {
	s := core.NewServer(core.Implementation{Name: "hello", Version: "1.0.0"}, core.Options{})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n")
	err := stdio.Serve(context.Background(), s, stdio.Options{In: in, Out: os.Stdout})
	fmt.Println("Serve:", err)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{}},"serverInfo":{"name":"hello","version":"1.0.0"}}}
	// Serve: <nil>
}
