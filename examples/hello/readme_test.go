package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// readme returns the repository's README, whose examples the tests run.
func readme(t *testing.T) string { return repoFile(t, "README.md") }

// repoFile returns a file of the repository, by its path from the root.
func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeWalkthrough returns the shell blocks of the curl walk-through (docs/server.md, linked
// from the README), in order.
func readmeWalkthrough(t *testing.T) string {
	t.Helper()
	s := repoFile(t, "docs/server.md")
	start := strings.Index(s, "## The HTTP side by hand")
	if start < 0 {
		t.Fatal("docs/server.md has no HTTP walk-through")
	}
	section := s[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var blocks []string
	for {
		i := strings.Index(section, "```sh\n")
		if i < 0 {
			break
		}
		section = section[i+len("```sh\n"):]
		j := strings.Index(section, "```")
		blocks = append(blocks, section[:j])
		section = section[j+3:]
	}
	if len(blocks) != 2 {
		t.Fatalf("want the two shell blocks of the walk-through, found %d", len(blocks))
	}
	return strings.Join(blocks, "\n")
}

// TestReadmeCurlWalkthrough runs the README's curl commands, as written, against the example
// served the way make run serves it, and checks each answer the README describes.
func TestReadmeCurlWalkthrough(t *testing.T) {
	testutil.NeedBinary(t, "curl", "curl")
	bash := testutil.NeedBinary(t, "bash", "bash")
	h := mcphttp.New(newServer(), mcphttp.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })

	script := readmeWalkthrough(t)
	const readmeURL = "MCP=http://127.0.0.1:8080/mcp"
	if !strings.Contains(script, readmeURL) {
		t.Fatalf("the walk-through does not start from the address of make run:\n%s", script)
	}
	script = strings.Replace(script, readmeURL, "MCP="+srv.URL+"/mcp", 1)
	// The GET stream stays open until Ctrl-C; here it is left after a moment.
	script = strings.Replace(script, "curl -sN $MCP", "curl -sN --max-time 1 $MCP", 1)
	cmd := exec.Command(bash, "-c", script)
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(err.Error(), "exit status 28") { // 28: curl's --max-time
		t.Fatalf("the walk-through failed: %v\n%s", err, out)
	}
	got := string(out)
	want := []string{
		"HTTP/1.1 200 OK", "Mcp-Session-Id: ", `"serverInfo":{"name":"hello"`, // initialize, JSON
		"HTTP/1.1 202 Accepted", // notifications/initialized
		"Content-Type: text/event-stream", `data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}]`,
		`{"success":true}`, "HTTP/1.1 404 Not Found", `"Session not found"`, // DELETE, then the id is gone
		`"supportedVersions":["2026-07-28"]`,                                        // server/discover
		`"resultType":"complete"`, `"structuredContent":{"greeting":"Hello, Ada!"}`, // modern tools/call
		"HTTP/1.1 400 Bad Request", `"code":-32020`, // the mismatched Mcp-Name
	}
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("the walk-through's output lacks %q (in order):\n%s", w, got)
		}
		rest = rest[i+len(w):]
	}
}
