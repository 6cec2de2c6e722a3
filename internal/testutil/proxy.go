package testutil

import (
	"io"
	"net"
	"sync"
	"testing"
)

// RoundRobin is a TCP proxy on loopback that sends every new connection to the next of its
// backends in turn, as a per-connection load balancer does: with keep-alive off on the client,
// consecutive requests of one session land on different backends. Close stops it and cuts every
// connection it carries.
type RoundRobin struct {
	// Addr is the proxy's host:port.
	Addr string

	ln       net.Listener
	backends []string

	mu    sync.Mutex
	next  int
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewRoundRobin starts a proxy over the backends (host:port), stopped with the test.
func NewRoundRobin(t testing.TB, backends ...string) *RoundRobin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &RoundRobin{Addr: ln.Addr().String(), ln: ln, backends: backends, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// URL returns http://Addr.
func (p *RoundRobin) URL() string { return "http://" + p.Addr }

func (p *RoundRobin) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		backend := p.backends[p.next%len(p.backends)]
		p.next++
		p.mu.Unlock()
		p.wg.Add(1)
		go p.carry(c, backend)
	}
}

// carry copies both ways between a client connection and a new one to backend.
func (p *RoundRobin) carry(c net.Conn, backend string) {
	defer p.wg.Done()
	b, err := net.Dial("tcp", backend)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, b) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(b, c)
	go pipe(c, b)
	<-done
	<-done
	p.untrack(c, b)
}

func (p *RoundRobin) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *RoundRobin) untrack(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		delete(p.conns, c)
		_ = c.Close()
	}
	p.mu.Unlock()
}

// Close stops accepting, cuts every connection and waits for the copies to end.
func (p *RoundRobin) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
