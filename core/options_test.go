package core_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// NewServer refuses, at construction, option values it cannot work with; the panic names the
// option.
func TestNewServerRefusesInvalidOptions(t *testing.T) {
	impl := core.Implementation{Name: "o", Version: "1"}
	for want, opts := range map[string]core.Options{
		"Options.ServerToClientRequestTimeout": {ServerToClientRequestTimeout: -1},
		"Options.PageSize":                     {PageSize: -1},
		"Options.CacheTTLMs":                   {CacheTTLMs: -1},
		"Options.CacheScope":                   {CacheScope: "shared"},
		"Options.ProtocolVersion":              {ProtocolVersion: "2026-07-28"},
		"Options.LogLevel":                     {LogLevel: "loud"},
		"RequestState.Key":                     {RequestState: core.RequestStateOptions{Key: []byte("short")}},
		"RequestState.TTL":                     {RequestState: core.RequestStateOptions{TTL: -1}},
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, want, func() { core.NewServer(impl, opts) }) })
	}
}

// SetCache refuses hints that could never be honoured.
func TestSetCacheRefusesInvalidHints(t *testing.T) {
	var r core.ReadResourceResult
	testutil.WantPanic(t, "ttlMs must not be negative", func() { r.SetCache(-1, "private") })
	testutil.WantPanic(t, `scope "shared"`, func() { r.SetCache(10, "shared") })
	r.SetCache(0, "public")
	if r.TTLMs == nil || *r.TTLMs != 0 || r.CacheScope != "public" {
		t.Fatalf("SetCache(0, public) = %v %q", r.TTLMs, r.CacheScope)
	}
}
