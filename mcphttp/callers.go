package mcphttp

import (
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/middleware"
)

// Defaults of the per-caller caps.
const (
	// DefaultMaxSessionsPerCaller is the most legacy sessions one caller may hold at once when
	// Options.MaxSessionsPerCaller is zero: a tenth of the default session cap.
	DefaultMaxSessionsPerCaller = 1000
	// DefaultMaxListenStreamsPerCaller is the most subscriptions/listen streams one caller may
	// hold open when ListenersOptions.MaxStreamsPerCaller is zero: a tenth of the default cap.
	DefaultMaxListenStreamsPerCaller = 100
)

// CallerKey names who a request comes from, for the per-caller caps: its principal
// (core.PrincipalFrom) when there is one, else the IP address of its remote end (without the
// port). Behind a reverse proxy every anonymous client has the proxy's address: set the
// principal there (from the authenticated user, or from the address the proxy forwards), or
// the proxy's clients share one allowance.
func CallerKey(r *http.Request) string {
	if p, ok := core.PrincipalFrom(r.Context()); ok {
		return "principal:" + p
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}

// callerCaps counts what each caller holds against one per-caller cap. The zero max means no
// cap (nothing is counted).
type callerCaps struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// newCallerCaps applies the option rule: zero takes def, negative means no cap.
func newCallerCaps(v, def int) *callerCaps {
	switch {
	case v == 0:
		v = def
	case v < 0:
		v = 0
	}
	return &callerCaps{max: v, n: map[string]int{}}
}

// acquire takes one unit for key, or reports false when key holds the cap already.
func (c *callerCaps) acquire(key string) bool {
	if c.max == 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] >= c.max {
		return false
	}
	c.n[key]++
	return true
}

// release gives back one unit of key.
func (c *callerCaps) release(key string) {
	if c.max == 0 {
		return
	}
	c.mu.Lock()
	if c.n[key] <= 1 {
		delete(c.n, key)
	} else {
		c.n[key]--
	}
	c.mu.Unlock()
}

// refuseCaller answers a request past a per-caller cap: 429, -32603 naming what and the cap.
func refuseCaller(w http.ResponseWriter, r *http.Request, id core.ID, what string, max int) {
	middleware.Refuse(w, r, http.StatusTooManyRequests, id, core.CodeInternalError,
		"Too many requests: this caller holds the maximum of "+strconv.Itoa(max)+" "+what)
}
