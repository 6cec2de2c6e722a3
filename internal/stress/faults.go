package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stall holds legacy GET streams that never read while tool-list changes are broadcast to them,
// and times a healthy session's calls before and during.
func stall(t *target, r *report, sz sizes) error {
	ctx := context.Background()
	healthy, err := t.session(ctx)
	if err != nil {
		return err
	}
	defer t.delete(ctx, healthy)
	calm, err := probe(t, r, healthy, sz.probes)
	if err != nil {
		return err
	}
	var conns []net.Conn
	var sessions []string
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		for _, s := range sessions {
			t.delete(ctx, s)
		}
	}()
	for range sz.stalled {
		s, err := t.session(ctx)
		if err != nil {
			return err
		}
		sessions = append(sessions, s)
		c, err := stalledGET(t, s)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	trigger, err := t.session(ctx)
	if err != nil {
		return err
	}
	defer t.delete(ctx, trigger)
	done := make(chan error, 1)
	go func() {
		for range sz.broadcasts {
			cctx, cancel := context.WithTimeout(ctx, requestTimeout)
			st, err := t.callTool(cctx, trigger, "test_trigger_tool_change")
			cancel()
			if err != nil {
				done <- err
				return
			}
			r.count("broadcast", st)
			if err := check("broadcast", st); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	during, err := probe(t, r, healthy, sz.probes)
	if err != nil {
		return err
	}
	if err := <-done; err != nil {
		return err
	}
	if s, err := t.stats(); err == nil {
		r.peak.Goroutines = max(r.peak.Goroutines, s.Goroutines)
		r.peak.HeapAlloc = max(r.peak.HeapAlloc, s.HeapAlloc)
	}
	r.p50 = [2]time.Duration{pct(calm, 0.5), pct(during, 0.5)}
	r.p99 = [2]time.Duration{pct(calm, 0.99), pct(during, 0.99)}
	return nil
}

// storm opens many request streams and GET streams and drops their connections at once.
func storm(t *target, r *report, sz sizes) error {
	ctx := context.Background()
	s, err := t.session(ctx)
	if err != nil {
		return err
	}
	defer t.delete(ctx, s)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for i := range sz.storm {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", t.addr, requestTimeout)
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			defer c.Close()
			body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(1000+i) + `,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":1}}}`
			if i%2 == 1 {
				fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n", t.addr, s)
			} else {
				fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
					t.addr, s, len(body), body)
			}
			_ = c.SetReadDeadline(time.Now().Add(requestTimeout))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				firstErr.CompareAndSwap(nil, fmt.Errorf("no answer before the drop: %w", err))
				return
			}
			f := strings.Fields(line)
			if len(f) >= 2 {
				st, _ := strconv.Atoi(f[1])
				r.count("storm", st)
				if err := check("storm", st); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
			// Dropped here, mid-stream, by the deferred Close.
		})
	}
	wg.Wait()
	if v := firstErr.Load(); v != nil {
		return v.(error)
	}
	return nil
}

// hostile sends the requests an attacker would, each on its own connection, and checks that
// each gets a 4xx (or a closed connection), never a 5xx or a hang.
func hostile(t *target, r *report, _ sizes) error {
	h := "Host: " + t.addr + "\r\n"
	json := "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	post := func(extra, body string) string {
		return "POST /mcp HTTP/1.1\r\n" + h + json + extra + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	smuggle := "0\r\n\r\nGET /mcp HTTP/1.1\r\n" + h + "\r\n"
	cases := []struct {
		name, raw string
	}{
		{"bad json", post("", `{"jsonrpc":`)},
		{"deep nesting", post("", strings.Repeat("[", 100)+strings.Repeat("]", 100))},
		{"duplicate members", post("", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`)},
		{"batch", post("", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)},
		{"not json media type", "POST /mcp HTTP/1.1\r\n" + h + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}"},
		{"too large declared", "POST /mcp HTTP/1.1\r\n" + h + json + "Content-Length: 99999999\r\n\r\n"},
		{"foreign host", "POST /mcp HTTP/1.1\r\nHost: evil.example\r\n" + json + "Content-Length: 2\r\n\r\n{}"},
		{"host after ipv6", "POST /mcp HTTP/1.1\r\nHost: [::1]evil.com\r\n" + json + "Content-Length: 2\r\n\r\n{}"},
		{"foreign origin", post("Origin: http://evil.example\r\n", `{}`)},
		{"odd origin scheme", post("Origin: evil://"+t.addr+"\r\n", `{}`)},
		{"two origins", post("Origin: http://"+t.addr+"\r\nOrigin: http://"+t.addr+"\r\n", `{}`)},
		{"two session ids", post("Mcp-Session-Id: a\r\nMcp-Session-Id: b\r\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{"unknown session", post("Mcp-Session-Id: nope\r\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{"bad version", post("MCP-Protocol-Version: 1999-01-01\r\nMcp-Session-Id: x\r\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{"modern mirror mismatch", post("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"s","version":"1"}}}}`)},
		{"huge client info (-32602 in a 200)", post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"s","version":"`+strings.Repeat("9", 1<<20)+`"}}}`)},
		{"content-length and chunked", "POST /mcp HTTP/1.1\r\n" + h + json + "Content-Length: " + strconv.Itoa(len(smuggle)) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + smuggle},
		{"unsupported method", "PUT /mcp HTTP/1.1\r\n" + h + "Content-Length: 0\r\n\r\n"},
		{"get without session", "GET /mcp HTTP/1.1\r\n" + h + "Accept: text/event-stream\r\n\r\n"},
	}
	// The JSON-RPC error a case may get inside a 200 (initialize answers its errors in the body).
	want200 := map[string]string{"huge client info (-32602 in a 200)": "MaxClientInfoBytes"}
	for _, c := range cases {
		st, body, err := rawExchange(t.addr, c.raw)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		r.count("hostile", st)
		if want := want200[c.name]; st == 200 && want != "" && bytes.Contains(body, []byte(want)) {
			continue
		}
		if st < 400 || st >= 500 {
			return fmt.Errorf("%s: answered %d %.200s, want a 4xx", c.name, st, body)
		}
	}
	return nil
}

// rawExchange writes raw on a fresh connection and returns the status and body of the first
// answer.
func rawExchange(addr, raw string) (int, []byte, error) {
	c, err := net.DialTimeout("tcp", addr, requestTimeout)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := io.WriteString(c, raw); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("no answer: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, body, nil
}
