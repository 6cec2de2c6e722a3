package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// childEnv makes the test binary a stdio server (see TestMain): "serve" serves the fixture,
// "stubborn" also ignores SIGTERM and keeps running after its input ends.
const childEnv = "MCPKIT_CLIENT_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "child: stubborn")
		_ = stdio.Serve(context.Background(), childServer(), stdio.Options{})
		select {} // never exits by itself
	default:
		fmt.Fprintln(os.Stderr, "child: serving")
		_ = stdio.Serve(context.Background(), childServer(), stdio.Options{})
		os.Exit(0)
	}
}

func childServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "child", Version: "1"}, core.Options{})
	s.AddTool(&core.Tool{Name: "exit", Description: "Exits the process.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&core.Tool{Name: "echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult(string(req.Arguments)), nil
		})
	return s
}

func child(t *testing.T, mode string) (*exec.Cmd, *testutil.SyncBuffer) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd, &testutil.SyncBuffer{}
}

func TestCommandTransport(t *testing.T) {
	for _, lc := range []client.Lifecycle{client.Legacy, client.Modern, client.Auto} {
		t.Run(lc.String(), func(t *testing.T) {
			cmd, stderr := child(t, "serve")
			c, err := client.Connect(context.Background(), &client.CommandTransport{Command: cmd, Stderr: stderr}, client.Options{Lifecycle: lc})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(context.Background(), "echo", map[string]any{"x": 1})
			if err != nil || res.Content[0].Text != `{"x":1}` {
				t.Fatalf("echo: %+v, %v", res, err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if cmd.ProcessState == nil || !cmd.ProcessState.Exited() || cmd.ProcessState.ExitCode() != 0 {
				t.Errorf("the child did not exit cleanly on close: %v", cmd.ProcessState)
			}
			if !strings.Contains(stderr.String(), "child: serving") {
				t.Errorf("stderr not passed through: %q", stderr.String())
			}
		})
	}
}

func TestCommandTransportKillsStubbornChild(t *testing.T) {
	cmd, stderr := child(t, "stubborn")
	c, err := client.Connect(context.Background(), &client.CommandTransport{Command: cmd, Stderr: stderr, ShutdownTimeout: 100 * time.Millisecond}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Close: %v", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the child is still running")
	}
}

// TestDeadServerFailsCalls: a server that dies mid-call fails the call at once, and later calls
// too, instead of leaving them to their deadlines.
func TestDeadServerFailsCalls(t *testing.T) {
	cmd, stderr := child(t, "serve")
	c, err := client.Connect(context.Background(), &client.CommandTransport{Command: cmd, Stderr: stderr}, client.Options{Lifecycle: client.Legacy, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.CallTool(context.Background(), "exit", nil)
	if !errors.Is(err, client.ErrClosed) {
		t.Errorf("call to a dying server: %v", err)
	}
	if _, err := c.CallTool(context.Background(), "echo", nil); !errors.Is(err, client.ErrClosed) {
		t.Errorf("call after the server died: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestIOTransportOverlongLine: a line past MaxMessageBytes ends the connection.
func TestIOTransportOverlongLine(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go func() {
		buf := make([]byte, 4096)
		_, _ = sr.Read(buf) // the initialize request
		_, _ = sw.Write(append(bytes.Repeat([]byte("x"), 300), '\n'))
	}()
	defer sw.Close()
	defer sr.Close()
	_, err := client.Connect(context.Background(), &client.IOTransport{Reader: cr, Writer: cw, MaxMessageBytes: 100}, client.Options{Lifecycle: client.Legacy})
	if !errors.Is(err, client.ErrClosed) || !strings.Contains(err.Error(), "longer than 100 bytes") {
		t.Errorf("Connect: %v", err)
	}
}

// scripted is a legacy stdio server played by hand: discover gets answer (or nothing when it
// is empty), initialize the handshake.
func scripted(t *testing.T, discover string) client.Transport {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go func() {
		defer sw.Close()
		dec := json.NewDecoder(sr)
		for {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if dec.Decode(&m) != nil {
				return
			}
			var out string
			switch m.Method {
			case "server/discover":
				if discover != "" {
					out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, discover)
				}
			case "initialize":
				out = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"0"}}}`, m.ID)
			}
			if out != "" {
				if _, err := io.WriteString(sw, out+"\n"); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(func() { sr.Close() })
	return &client.IOTransport{Reader: cr, Writer: cw}
}

// TestAutoFallback follows the stdio probe rules: a legacy server that ignores server/discover
// or answers it with any non-modern error gets initialize; a modern error is not a fallback.
func TestAutoFallback(t *testing.T) {
	for name, tc := range map[string]struct {
		discover string
		legacy   bool
	}{
		"silent":           {"", true},
		"method not found": {`"error":{"code":-32601,"message":"Method not found"}`, true},
		"invalid params":   {`"error":{"code":-32602,"message":"bad"}`, true},
		"modern error":     {`"error":{"code":-32021,"message":"Missing required client capability"}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := client.Connect(context.Background(), scripted(t, tc.discover), client.Options{DiscoverTimeout: 50 * time.Millisecond})
			if !tc.legacy {
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeMissingRequiredClientCapability {
					t.Errorf("Connect: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Modern() || c.ProtocolVersion() != "2025-06-18" || c.ServerInfo().Name != "old" {
				t.Errorf("modern %v, version %s, server %+v", c.Modern(), c.ProtocolVersion(), c.ServerInfo())
			}
		})
	}
}
