//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// appsBinary builds the example once per test run and returns its path.
func appsBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "apps-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "apps")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building the example: %v", buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// The real binary over real pipes with -stdio: a host declaring the extension initializes, lists
// the linked tools and reads the page.
func TestStdio(t *testing.T) {
	cmd := exec.Command(appsBinary(t), "-stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"show_tally","arguments":{"name":"votes"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://tally/view.html"}}`,
	}
	if _, err := io.WriteString(in, strings.Join(frames, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	answers := map[float64]map[string]any{} // by id: requests are served concurrently
	for len(answers) < 3 {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", len(answers), err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		id, _ := m["id"].(float64)
		answers[id-1] = m
	}
	caps := answers[0]["result"].(map[string]any)["capabilities"].(map[string]any)
	if _, ok := caps["extensions"].(map[string]any)["io.modelcontextprotocol/ui"]; !ok {
		t.Fatalf("initialize: %v", answers[0])
	}
	text := answers[1]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if text != "votes: 0 (shown in the tally view, where the user can change it)" {
		t.Fatalf("show_tally: %v", answers[1])
	}
	content := answers[2]["result"].(map[string]any)["contents"].([]any)[0].(map[string]any)
	if content["mimeType"] != "text/html;profile=mcp-app" || !strings.Contains(content["text"].(string), "<title>Tally</title>") {
		t.Fatalf("resources/read: %v", answers[2])
	}
}
