package mcphttp

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
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

// CallerCounter keeps the counts of per-caller caps (sessions and listen streams per caller) in
// a store that several replicas share, so that a caller's share holds
// across them instead of per process (redisstore.Caps is one). Acquire takes one unit of key
// unless key holds max units already, and reports whether it took one; Release gives one back.
// Keys name the cap and the caller (see CallerKey). A request whose Acquire fails is answered
// 503.
type CallerCounter interface {
	Acquire(ctx context.Context, key string, max int) (bool, error)
	Release(ctx context.Context, key string)
}

// callerCaps counts what each caller holds against one per-caller cap: here, or in a shared
// counter. The zero max means no cap (nothing is counted).
type callerCaps struct {
	max    int
	kind   string        // names the cap in the shared counter's keys
	shared CallerCounter // nil: counted in this process
	mu     sync.Mutex
	n      map[string]int
}

// share makes c count in counter (when not nil), under keys starting with kind.
func (c *callerCaps) share(counter CallerCounter, kind string) {
	c.shared, c.kind = counter, kind
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

// acquire takes one unit for key, or reports false when key holds the cap already; the error is
// a shared counter's.
func (c *callerCaps) acquire(ctx context.Context, key string) (bool, error) {
	if c.max == 0 {
		return true, nil
	}
	if c.shared != nil {
		return c.shared.Acquire(ctx, c.kind+key, c.max)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] >= c.max {
		return false, nil
	}
	c.n[key]++
	return true, nil
}

// release gives back one unit of key.
func (c *callerCaps) release(key string) {
	if c.max == 0 {
		return
	}
	if c.shared != nil {
		c.shared.Release(context.Background(), c.kind+key)
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

// refuseCaller answers a request past a per-caller cap: 429, -32603 naming what and the cap; or,
// when the shared counter failed (err), 503.
func refuseCaller(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, what string, max int, err error) {
	if err != nil {
		middleware.Refuse(w, r, http.StatusServiceUnavailable, id, jsonrpc.CodeInternalError,
			"Service unavailable: the per-caller limits could not be checked")
		return
	}
	middleware.Refuse(w, r, http.StatusTooManyRequests, id, jsonrpc.CodeInternalError,
		"Too many requests: this caller holds the maximum of "+strconv.Itoa(max)+" "+what)
}
