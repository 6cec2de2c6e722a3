package testutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RedisServer is a real redis-server started for tests: loopback only, on a free port,
// persistence off, its files in a temporary folder. Start one per test binary (TestMain) and
// give each test its own key prefix.
type RedisServer struct {
	// Addr is host:port of the server (127.0.0.1 and a free port).
	Addr string

	bin string
	dir string

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{}
}

// redisStartTimeout bounds how long a server may take to say it is ready.
const redisStartTimeout = 20 * time.Second

// StartRedis starts redis-server from bin (the path NeedBinary returned, or "redis-server") on
// a free loopback port and returns once it accepts connections (it reads the server's log for
// the ready line, then checks with a PING). Stop it with Stop.
func StartRedis(bin string) (*RedisServer, error) {
	dir, err := os.MkdirTemp("", "mcpkit-redis-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	r := &RedisServer{Addr: "127.0.0.1:" + strconv.Itoa(port), bin: bin, dir: dir}
	if err := r.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

// URL is the redis:// URL of the server.
func (r *RedisServer) URL() string { return "redis://" + r.Addr + "/0" }

func (r *RedisServer) start() error {
	_, port, _ := net.SplitHostPort(r.Addr)
	cmd := exec.Command(r.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--logfile", "", "--daemonize", "no", "--protected-mode", "yes")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	ready := make(chan struct{})
	var log strings.Builder
	var logMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			if log.Len() < 8192 {
				log.WriteString(line + "\n")
			}
			logMu.Unlock()
			if !signalled && strings.Contains(line, "Ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(exit)
	}()
	timer := time.NewTimer(redisStartTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case <-exit:
		logMu.Lock()
		defer logMu.Unlock()
		return fmt.Errorf("redis-server exited before it was ready:\n%s", log.String())
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exit
		return errors.New("redis-server was not ready in time")
	}
	if err := RedisPing(r.Addr); err != nil {
		_ = cmd.Process.Kill()
		<-exit
		return err
	}
	r.mu.Lock()
	r.cmd, r.exit = cmd, exit
	r.mu.Unlock()
	return nil
}

// Stop kills the server by its PID and waits for it to exit. The server can be started again on
// the same port with Restart (a test of Redis going away and coming back).
func (r *RedisServer) Stop() {
	r.mu.Lock()
	cmd, exit := r.cmd, r.exit
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exit
}

// Restart starts the server again on the same address after Stop (with an empty data set).
func (r *RedisServer) Restart() error { return r.start() }

// Close stops the server and removes its folder.
func (r *RedisServer) Close() {
	r.Stop()
	_ = os.RemoveAll(r.dir)
}

// RedisPing sends PING to a Redis server and checks for PONG.
func RedisPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("redis PING answered %q", line)
	}
	return nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago (for servers a test starts
// as separate processes).
func FreePort() (int, error) { return freePort() }
