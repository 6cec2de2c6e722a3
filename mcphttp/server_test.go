package mcphttp_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp"
)

func TestNewHTTPServerSettings(t *testing.T) {
	srv := mcphttp.NewHTTPServer("127.0.0.1:0", http.NotFoundHandler(), mcphttp.HTTPServerOptions{})
	if srv.ReadHeaderTimeout != mcphttp.DefaultReadHeaderTimeout || srv.IdleTimeout != mcphttp.DefaultIdleTimeout ||
		srv.MaxHeaderBytes != mcphttp.DefaultMaxHeaderBytes {
		t.Errorf("defaults: header %v idle %v max header %d", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v / WriteTimeout %v would cut SSE streams", srv.ReadTimeout, srv.WriteTimeout)
	}
	if srv.ConnContext == nil {
		t.Error("no ConnContext: the decode layer cannot see the framing guard")
	}
	off := mcphttp.NewHTTPServer("", http.NotFoundHandler(), mcphttp.HTTPServerOptions{ReadHeaderTimeout: -1, IdleTimeout: -1})
	if off.ReadHeaderTimeout != 0 || off.IdleTimeout != 0 {
		t.Errorf("negative options: header %v idle %v, want both off", off.ReadHeaderTimeout, off.IdleTimeout)
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "MaxHeaderBytes") {
			t.Errorf("negative MaxHeaderBytes: recovered %v, want a panic naming the option", v)
		}
	}()
	mcphttp.NewHTTPServer("", http.NotFoundHandler(), mcphttp.HTTPServerOptions{MaxHeaderBytes: -1})
}

// serveHTTPServer serves the default stack with NewHTTPServer on a loopback listener.
func serveHTTPServer(t *testing.T, opts mcphttp.HTTPServerOptions) string {
	t.Helper()
	h := mcphttp.New(newServer(newTools()), mcphttp.Options{})
	srv := mcphttp.NewHTTPServer("", h, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = h.Close()
		_ = srv.Close()
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func TestHTTPServerRefusesSmuggling(t *testing.T) {
	addr := serveHTTPServer(t, mcphttp.HTTPServerOptions{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(bound))
	hidden := "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
	body := "0\r\n\r\n" + hidden
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: "+strconv.Itoa(len(body))+
		"\r\nTransfer-Encoding: chunked\r\n\r\n"+body)
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the connection stayed open: %v (read %q)", err, all)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(all))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || strings.Count(string(all), "HTTP/1.1 ") != 1 {
		t.Errorf("want one 400 and a closed connection, got:\n%s", all)
	}
}

func TestHTTPServerClosesIdleConnections(t *testing.T) {
	addr := serveHTTPServer(t, mcphttp.HTTPServerOptions{IdleTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(bound))
	_, _ = io.WriteString(c, "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.Close {
		t.Fatal("the first answer already closed the connection; nothing left to test")
	}
	// The server closes the idle keep-alive connection by itself, well before our deadline.
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: read returned %v, want EOF from the server's close", err)
	}
}
