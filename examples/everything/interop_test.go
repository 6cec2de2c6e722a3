package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/stdio"
)

// stdioPeer drives the fixture over stdio on in-memory pipes.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
}

func serveFixtureStdio(t *testing.T) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(context.Background(), newServer(), stdio.Options{In: inR, Out: outW})
		outW.Close()
	}()
	p := &stdioPeer{t: t, in: inW, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { inW.Close(); <-done })
	return p
}

func (p *stdioPeer) send(frame string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, frame+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next frame whose text contains want.
func (p *stdioPeer) next(want string) string {
	p.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout closed while waiting for %s", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			p.t.Fatalf("no frame with %s", want)
		}
	}
}

// The interop tools over the legacy lifecycle: a resource update and a list change reach the
// session, and a cancelled slow call is seen by the server.
func TestInteropToolsLegacy(t *testing.T) {
	p := serveFixtureStdio(t)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.next(`"id":1`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`)
	p.next(`"id":2`)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"interop_trigger_resource_updated","arguments":{}}}`)
	p.next(`"method":"notifications/resources/updated","params":{"uri":"test://watched-resource"}`)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"interop_trigger_list_changed","arguments":{"list":"prompts"}}}`)
	p.next(`"method":"notifications/prompts/list_changed"`)

	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"interop_slow","arguments":{"seconds":60}}}`)
	for {
		p.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"interop_last_cancellation","arguments":{}}}`)
		if strings.Contains(p.next(`"id":6`), `"text":"running"`) {
			break
		}
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"enough"}}`)
	for {
		p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"interop_last_cancellation","arguments":{}}}`)
		l := p.next(`"id":7`)
		var m struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m.Result.Content) == 0 {
			t.Fatalf("interop_last_cancellation: %s", l)
		}
		if got := m.Result.Content[0].Text; got == "cancelled by the client" {
			break
		} else if got != "running" {
			t.Fatalf("the slow call ended as %q, want cancelled by the client", got)
		}
	}
}

// The same triggers reach a 2026-07-28 client through subscriptions/listen over stdio.
func TestInteropToolsModern(t *testing.T) {
	p := serveFixtureStdio(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	p.send(`{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://watched-resource"]},` + meta + `}}`)
	p.next(`"method":"notifications/subscriptions/acknowledged"`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"interop_trigger_list_changed","arguments":{"list":"tools"},` + meta + `}}`)
	p.next(`"method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen:0"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"interop_trigger_resource_updated","arguments":{},` + meta + `}}`)
	p.next(`"method":"notifications/resources/updated","params":{"uri":"test://watched-resource","_meta":{"io.modelcontextprotocol/subscriptionId":"listen:0"}}`)
}

// interop_roots_changed counts the notifications/roots/list_changed the server received.
func TestInteropRootsChanged(t *testing.T) {
	p := serveFixtureStdio(t)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"1"}}}`)
	p.next(`"id":1`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"interop_roots_changed","arguments":{}}}`)
	if l := p.next(`"id":2`); !strings.Contains(l, `"text":"0"`) {
		t.Fatalf("before any notification: %s", l)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	// stdio handles one connection's notifications in order, before the request after them.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"interop_roots_changed","arguments":{}}}`)
	if l := p.next(`"id":3`); !strings.Contains(l, `"text":"2"`) {
		t.Fatalf("after two notifications: %s", l)
	}
}
