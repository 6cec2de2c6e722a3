package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Each documented default of DPoPOptions, observed on the checker RequireBearer builds.
func TestDPoPOptionsDefaults(t *testing.T) {
	var o DPoPOptions
	if newDPoPChecker(o, "") != nil {
		t.Fatal("the zero DPoPOptions turned DPoP on")
	}
	o.Mode = DPoPAccepted
	c := newDPoPChecker(o, "")
	algs := make([]string, len(c.algs))
	for i, a := range c.algs {
		algs[i] = string(a)
	}
	mem, _ := c.replay.(*MemoryReplayCache)
	memMax := 0
	if mem != nil {
		memMax = mem.max
	}
	withNonce := o
	withNonce.RequireNonce = true
	n := newDPoPChecker(withNonce, "")
	withResource := newDPoPChecker(o, "https://MCP.example.com:443/api")
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp?x=1", nil)
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "DPoPOptions.Mode", Given: DPoPOptions{}.Mode, Got: DPoPOff, Doc: DPoPOff},
		{Option: "DPoPOptions.Algorithms", Given: o.Algorithms, Got: algs, Doc: DefaultDPoPAlgorithms},
		{Option: "DPoPOptions.URL (no Resource: the request's URL)", Given: o.URL, Got: c.requestURL(req), Doc: "http://127.0.0.1:8080/mcp"},
		{Option: "DPoPOptions.URL (BearerOptions.Resource's origin, the request's path)", Given: o.URL, Got: withResource.requestURL(req), Doc: "https://mcp.example.com/mcp"},
		{Option: "DPoPOptions.ProofWindow", Given: o.ProofWindow, Got: c.window, Doc: 5 * time.Minute},
		{Option: "DPoPOptions.Replay", Given: o.Replay, Got: mem != nil, Doc: true},
		{Option: "DPoPOptions.MaxReplayEntries", Given: o.MaxReplayEntries, Got: memMax, Doc: 100000},
		{Option: "DPoPOptions.RequireNonce", Given: o.RequireNonce, Got: c.nonces == nil, Doc: true},
		{Option: "DPoPOptions.NonceKey (random, 32 bytes)", Given: o.NonceKey, Got: len(n.nonces.keys[0]), Doc: 32},
		{Option: "DPoPOptions.NonceLifetime", Given: o.NonceLifetime, Got: n.nonces.lifetime, Doc: 5 * time.Minute},
	})
}
