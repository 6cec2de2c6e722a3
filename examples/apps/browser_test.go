//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// driveResult is what host/drive.mjs read from the host page and the view.
type driveResult struct {
	Host struct {
		Origin, Protocol, ServerExtension, ModelTools, ToolText, AppCalls string
		Frames                                                            []string
	}
	Before struct{ Name, Count, Origin string }
	After  struct{ Count, Status string }
}

// needHostPage returns the host page's folder once its packages are installed and bundled
// (scripts/apps-host.sh), or skips (fails under MCPKIT_REQUIRE_BINARIES).
func needHostPage(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("host")
	for _, f := range []string{"dist/host.js", "node_modules/puppeteer-core/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			msg := "the host page of the browser test is not installed (" + f + "): run bash scripts/apps-host.sh (npm ci and the esbuild bundle; make test-apps runs it)"
			if os.Getenv(testutil.RequireBinariesEnv) != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}

// startExample runs the example binary over HTTP on a free loopback port, letting pages of
// origin call it, and returns its endpoint URL. It is stopped (SIGTERM, by its pid) at cleanup.
func startExample(t *testing.T, origin string) string {
	t.Helper()
	cmd := exec.Command(appsBinary(t), "-http", "127.0.0.1:0", "-origin", origin)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	url := ""
	for url == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "serving MCP at "); ok {
			url = strings.TrimSpace(after)
		}
	}
	done := make(chan struct{})
	go func() { // keep draining what the server logs, for the end of the test
		defer close(done)
		for lines.Scan() {
			t.Log("examples/apps: " + lines.Text())
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		_ = cmd.Wait()
	})
	if url == "" {
		t.Fatal("examples/apps did not report its address")
	}
	return url
}

// serveFiles serves the named files of dir at their paths, on a loopback origin of its own.
func serveFiles(t *testing.T, dir string, files ...string) string {
	t.Helper()
	mux := http.NewServeMux()
	for _, f := range files {
		mux.HandleFunc("/"+f, func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(dir, f)) })
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBrowser is the MCP Apps test that counts: the example served for real, a host page on the
// official TypeScript client and host bridge (AppBridge), in headless Chromium. The host page,
// on its own loopback origin, calls show_tally, reads its ui:// resource and renders it through a
// sandbox proxy on a second origin; the view's +1 button calls the app-only add_to_tally through
// the host, and the view shows the new count. Run in both lifecycles.
func TestBrowser(t *testing.T) {
	chromium := testutil.NeedBinary(t, "chromium", "chromium")
	node := testutil.NeedBinary(t, "node", "nodejs")
	dir := needHostPage(t)
	hostOrigin := serveFiles(t, dir, "host.html", "dist/host.js")
	sandboxOrigin := serveFiles(t, dir, "sandbox.html")
	endpoint := startExample(t, hostOrigin)
	shots := filepath.Join(os.TempDir(), "mcpkit-apps")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	count := 0 // the server's tally, which both runs change
	for _, lc := range []struct{ name, version string }{{"legacy", "2025-11-25"}, {"modern", "2026-07-28"}} {
		t.Run(lc.name, func(t *testing.T) {
			page := hostOrigin + "/host.html?lifecycle=" + lc.name + "&server=" + endpoint + "&sandbox=" + sandboxOrigin + "/sandbox.html"
			shot := filepath.Join(shots, "tally-"+lc.name+".png")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			drive := exec.CommandContext(ctx, node, filepath.Join(dir, "drive.mjs"), chromium, page, shot)
			drive.Stdout, drive.Stderr = &stdout, &stderr
			if err := drive.Run(); err != nil {
				t.Fatalf("drive.mjs: %v\n%s", err, stderr.String())
			}
			var got driveResult
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("drive.mjs printed %q: %v\n%s", stdout.String(), err, stderr.String())
			}
			t.Logf("screenshot of the host page with the view (%s): %s", lc.name, shot)
			h := got.Host
			if h.Origin != hostOrigin || h.Protocol != lc.version || !strings.Contains(h.ServerExtension, "text/html;profile=mcp-app") {
				t.Fatalf("host page: %+v", h)
			}
			if h.ModelTools != "show_tally" {
				t.Errorf("the model is offered %q, want show_tally alone (add_to_tally is app-only)", h.ModelTools)
			}
			if !strings.HasSuffix(h.ToolText, "(shown in the tally view, where the user can change it)") {
				t.Errorf("the tool did not see the host's MCP Apps support: %q", h.ToolText)
			}
			if !containsPrefix(h.Frames, sandboxOrigin+"/sandbox.html") || got.Before.Origin != "null" {
				t.Errorf("the view is not in a sandboxed frame under the sandbox origin: frames %v, view origin %q", h.Frames, got.Before.Origin)
			}
			before, _ := strconv.Atoi(got.Before.Count)
			after, _ := strconv.Atoi(got.After.Count)
			if got.Before.Name != "votes" || got.Before.Count != strconv.Itoa(count) || after != before+1 || got.After.Status != "Saved." || h.AppCalls != "1" {
				t.Fatalf("the view: before %+v, after %+v, calls from the view %s (tally was %d)", got.Before, got.After, h.AppCalls, count)
			}
			count = after
			if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
				t.Fatalf("screenshot %s: %v", shot, err)
			}
		})
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
