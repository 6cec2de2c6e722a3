//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests in this file run the real example binary over real pipes.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// helloBinary builds the example once per test run and returns its path.
func helloBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hello-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "hello")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
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

// readmeFrames returns the frames of the README's `printf ... | go run ./examples/hello` example.
func readmeFrames(t *testing.T) []string {
	t.Helper()
	text := readme(t)
	start := strings.Index(text, "printf '%s\\n'")
	end := strings.Index(text, "| go run ./examples/hello")
	if start < 0 || end < start {
		t.Fatal("the README has no printf | go run ./examples/hello example")
	}
	var frames []string
	for _, part := range strings.Split(text[start:end], "'")[3:] { // after printf '%s\n'
		if p := strings.TrimSpace(part); strings.HasPrefix(p, "{") {
			frames = append(frames, p)
		}
	}
	if len(frames) < 2 {
		t.Fatalf("README example frames: %q", frames)
	}
	return frames
}

// The README's stdio example answers every request, in order, the same way every time, and the
// process exits 0 once its input ends.
func TestReadmeStdioExample(t *testing.T) {
	bin := helloBinary(t)
	frames := readmeFrames(t)
	var first string
	for run := range 5 {
		cmd := exec.Command(bin)
		cmd.Stdin = strings.NewReader(strings.Join(frames, "\n") + "\n")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v (stderr %q)", run, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		if len(lines) != len(frames) {
			t.Fatalf("run %d: %d answers to %d requests:\n%s", run, len(lines), len(frames), stdout.String())
		}
		for i, l := range lines {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil || m.Error != nil || m.Result == nil {
				t.Fatalf("run %d: answer %d: %s", run, i, l)
			}
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal([]byte(frames[i]), &req)
			if string(m.ID) != string(req.ID) {
				t.Fatalf("run %d: answer %d has id %s, want %s (answers out of order)", run, i, m.ID, req.ID)
			}
		}
		if !strings.Contains(lines[len(lines)-1], "Hello, Ada!") {
			t.Errorf("run %d: the greet answer: %s", run, lines[len(lines)-1])
		}
		if run == 0 {
			first = stdout.String()
		} else if stdout.String() != first {
			t.Errorf("run %d differs from run 0:\n%s\n%s", run, stdout.String(), first)
		}
	}
}

// start runs the example with its stdin and stdout on pipes the test holds; stderr collects
// what the process prints there.
func start(t *testing.T) (cmd *exec.Cmd, stdin io.WriteCloser, stdout *os.File, stderr *strings.Builder) {
	t.Helper()
	cmd = exec.Command(helloBinary(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = new(strings.Builder)
	cmd.Stdout, cmd.Stderr = outW, stderr // read only after wait, which ends the copy
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close() // the child holds its own copy
	t.Cleanup(func() {
		stdin.Close()
		outR.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stdin, outR, stderr
}

// wait waits for the process, failing the test if it does not end by itself.
func wait(t *testing.T, cmd *exec.Cmd) *os.ProcessState {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the process did not end")
	}
	return cmd.ProcessState
}

// A process whose stdout reader went away ends cleanly (exit 0) at its next write, while its
// stdin is still open, instead of dying of SIGPIPE (exit 141).
func TestVanishedStdoutReader(t *testing.T) {
	cmd, stdin, stdout, _ := start(t)
	r := bufio.NewReader(stdout)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("first answer %q: %v", line, err)
	}
	stdout.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	st := wait(t, cmd)
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the process died of %v", ws.Signal())
	}
	if st.ExitCode() != 0 {
		t.Fatalf("exit code %d, want 0", st.ExitCode())
	}
}

// SIGTERM is a normal shutdown: the process exits 0 without printing an error.
func TestShutdownSignal(t *testing.T) {
	cmd, stdin, stdout, stderr := start(t)
	r := bufio.NewReader(stdout)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("first answer %q: %v", line, err)
	}
	// The ping was answered, so the signal handler is installed.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, cmd); st.ExitCode() != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", st.ExitCode())
	}
	if stderr.Len() != 0 {
		t.Errorf("printed on stderr at shutdown: %q", stderr.String())
	}
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Errorf("written after the signal: %q", rest)
	}
}
