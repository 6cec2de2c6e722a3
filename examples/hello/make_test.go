package main

import (
	"bufio"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestMakeRunStopsWithMake runs `make run` as the README says, waits until the server answers,
// then sends SIGTERM to make alone (not its process group, as a supervisor or `kill <pid>` does):
// when make has exited, the server must be gone too and its port free.
func TestMakeRunStopsWithMake(t *testing.T) {
	makeTool := testutil.NeedBinary(t, "make", "make")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	cmd := exec.Command(makeTool, "-s", "-C", "../..", "run", "ADDR="+addr)
	// A group of its own, so the cleanup can stop whatever make left behind (it is ours).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })

	serving, logged := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		closed := false
		for sc.Scan() {
			t.Log(sc.Text())
			if !closed && strings.Contains(sc.Text(), "serving MCP at http://"+addr+"/mcp") {
				close(serving)
				closed = true
			}
		}
	}()
	select {
	case <-serving:
	case <-time.After(2 * time.Minute): // the build may be slow on a busy machine
		t.Fatal("make run did not start serving")
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("the server logged that it serves, but %s refuses connections: %v", addr, err)
	}
	_ = conn.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // make reports the signal; it exits once its child has
	<-logged       // Wait closed the pipe
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("make exited but the server still holds %s: %v", addr, err)
	}
	_ = ln.Close()
}
