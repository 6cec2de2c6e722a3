package redisstore_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
)

// FilterChanged on one replica reaches the listen streams and legacy sessions of its principal
// on every replica, through Redis, and nobody else's.
func TestFilterChangedAcrossReplicas(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	byHeader := func(o *mcphttp.Options) {
		o.Principal = func(r *http.Request) string { return r.Header.Get("X-User") }
	}
	var reps [3]*replica
	for i := range reps {
		reps[i] = newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe(), byHeader)
	}
	ctx := context.Background()
	const marker = "test://doc"
	listen := func(r *replica, user string) *testutil.SSEReader {
		c := r.client(nil)
		c.Header.Set("X-User", user)
		body := testutil.ModernRequest("l", "subscriptions/listen", map[string]any{"notifications": map[string]any{
			"toolsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []string{marker}}})
		resp := c.Open(t, c.NewModernPost(ctx, body))
		t.Cleanup(func() { resp.Body.Close() })
		sr := testutil.NewSSEReader(resp.Body)
		if ev := nextMessage(t, sr); testutil.DecodeWire(t, []byte(ev.Data)).Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("want the acknowledgement first: %s", ev.Data)
		}
		return sr
	}
	session := func(r *replica, user string) *testutil.SSEReader {
		c := r.client(nil)
		c.Header.Set("X-User", user)
		c.Initialize(t)
		c.Post(t, testutil.Notification("notifications/initialized", nil))
		if w := c.Call(t, 1, "resources/subscribe", map[string]any{"uri": marker}); w.Error != nil {
			t.Fatalf("subscribe: %+v", w.Error)
		}
		resp := c.Open(t, c.NewRequest(ctx, http.MethodGet))
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %d", resp.StatusCode)
		}
		return testutil.NewSSEReader(resp.Body)
	}
	guestListen, adminListen := listen(reps[0], "bob"), listen(reps[1], "alice")
	guestSession, adminSession := session(reps[1], "bob"), session(reps[0], "alice")

	// From the third replica: bob's view changed, then a resource update everybody hears of.
	if err := reps[2].server.FilterChanged(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := reps[2].server.NotifyResourceUpdated(ctx, marker); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who  string
		sr   *testutil.SSEReader
		want []string
	}{
		{"bob's listen stream", guestListen, []string{core.ToolsListChanged, core.ResourcesListChanged, core.ResourceUpdated}},
		{"alice's listen stream", adminListen, []string{core.ResourceUpdated}},
		{"bob's session", guestSession, []string{core.ToolsListChanged, core.ResourcesListChanged, core.ResourceUpdated}},
		{"alice's session", adminSession, []string{core.ResourceUpdated}},
	} {
		for _, m := range tc.want {
			ev := nextMessage(t, tc.sr)
			if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != m {
				t.Fatalf("%s: got %s, want %s", tc.who, ev.Data, m)
			}
		}
	}
}
