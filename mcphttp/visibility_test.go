package mcphttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/coretest"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// viewEndpoint serves a coretest.ViewServer over loopback HTTP, the caller named by X-User.
func viewEndpoint(t *testing.T) (*core.Server, string) {
	t.Helper()
	srv := coretest.ViewServer(core.Options{})
	h := mcphttp.New(srv, mcphttp.Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		_ = h.Close()
		hs.Close()
	})
	return srv, hs.URL
}

func userClient(url, user string) *testutil.Client {
	c := testutil.NewClient(url, nil)
	c.Header.Set("X-User", user)
	return c
}

// Two callers see two views of one server on both lifecycles over HTTP: what each lists, pages
// and reaches, and a hidden entry answered exactly as an unknown one.
func TestVisibilityPerCallerOverHTTP(t *testing.T) {
	_, url := viewEndpoint(t)
	for _, tc := range []struct {
		version string
		caller  func(user string) coretest.Caller
	}{
		{"2025-11-25", func(user string) coretest.Caller {
			c := userClient(url, user)
			c.Initialize(t)
			c.Post(t, testutil.Notification("notifications/initialized", nil))
			return func(t testing.TB, id int, method string, params map[string]any) []byte {
				return lastMessage(t, c.Post(t, testutil.Request(id, method, params)))
			}
		}},
		{testutil.ModernVersion, func(user string) coretest.Caller {
			c := userClient(url, user)
			return func(t testing.TB, id int, method string, params map[string]any) []byte {
				return lastMessage(t, c.PostModern(t, testutil.ModernRequest(id, method, params)))
			}
		}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			coretest.CheckViews(t, tc.version, tc.caller(coretest.Admin), tc.caller(coretest.Guest))
		})
	}
}

// A listen stream hears of a new entry only when its caller may see it, and of FilterChanged
// only when it is aimed at its caller; legacy sessions get FilterChanged for their owner only.
func TestVisibilityChangesOverHTTP(t *testing.T) {
	srv, url := viewEndpoint(t)
	ctx := context.Background()
	filter := map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"test://marker", "test://adm", "test://adm/1"}}
	listen := func(user string) *testutil.SSEReader {
		c := userClient(url, user)
		req := c.NewModernPost(ctx, testutil.ModernRequest("l", "subscriptions/listen", map[string]any{"notifications": filter}))
		resp := c.Open(t, req)
		t.Cleanup(func() { resp.Body.Close() })
		sr := testutil.NewSSEReader(resp.Body)
		if ack, _ := nextWire(t, sr); ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("%s: want the acknowledgement first, got %+v", user, ack)
		}
		return sr
	}
	admin, guest := listen(coretest.Admin), listen(coretest.Guest)
	// Legacy sessions: their GET streams.
	legacy := func(user string) *testutil.SSEReader {
		c := userClient(url, user)
		c.Initialize(t)
		c.Post(t, testutil.Notification("notifications/initialized", nil))
		resp := c.Open(t, c.NewRequest(ctx, http.MethodGet))
		t.Cleanup(func() { resp.Body.Close() })
		sr := testutil.NewSSEReader(resp.Body)
		return sr
	}
	legacyAdmin, legacyGuest := legacy(coretest.Admin), legacy(coretest.Guest)
	marker := func() {
		if err := srv.NotifyResourceUpdated(ctx, "test://marker"); err != nil {
			t.Fatal(err)
		}
	}
	want := func(who string, sr *testutil.SSEReader, methods ...string) {
		t.Helper()
		for _, m := range methods {
			w, raw := nextWire(t, sr)
			if w.Method != m {
				t.Fatalf("%s: got %s, want %s", who, raw, m)
			}
			if m == core.ToolsListChanged {
				testutil.ValidateDef(t, testutil.ModernVersion, "ToolListChangedNotification", raw)
			}
		}
	}

	// A tool only Admin may see: Admin's stream hears of it, Guest's does not.
	srv.AddTool(&core.Tool{Name: "adm_new", Visible: func(ctx context.Context, _ *core.View) bool {
		p, _ := core.PrincipalFrom(ctx)
		return p == coretest.Admin
	}}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("ok"), nil
	})
	marker()
	want("admin listen", admin, core.ToolsListChanged, core.ResourceUpdated)
	want("guest listen", guest, core.ResourceUpdated)

	// Updates of resources hidden from the guest (exact, and through a template) reach only
	// the admin's stream.
	for _, uri := range []string{"test://adm", "test://adm/1"} {
		if err := srv.NotifyResourceUpdated(ctx, uri); err != nil {
			t.Fatal(err)
		}
	}
	marker()
	want("admin listen", admin, core.ResourceUpdated, core.ResourceUpdated, core.ResourceUpdated)
	if w, raw := nextWire(t, guest); w.Method != core.ResourceUpdated || !bytes.Contains(raw, []byte(`"uri":"test://marker"`)) {
		t.Fatalf("guest listen: got %s, want the marker's update alone", raw)
	}

	// The guest's view changed: only the guest's stream and session hear of it.
	if err := srv.FilterChanged(ctx, coretest.Guest); err != nil {
		t.Fatal(err)
	}
	marker()
	want("guest listen", guest, core.ToolsListChanged, core.ResourceUpdated)
	want("admin listen", admin, core.ResourceUpdated)
	// Legacy sessions hear of a new entry only when their owner may see it (adm_new is hidden
	// from the guest), and of FilterChanged only for their owner: the guest's session gets the
	// three lists of FilterChanged alone.
	want("guest session", legacyGuest, core.ToolsListChanged, core.PromptsListChanged, core.ResourcesListChanged)
	srv.RemoveTools("adm_new")
	want("admin session", legacyAdmin, core.ToolsListChanged, core.ToolsListChanged)
}

// nextWire reads the next message event of a stream (skipping the empty priming events).
func nextWire(t *testing.T, sr *testutil.SSEReader) (testutil.Wire, []byte) {
	t.Helper()
	for {
		ev, err := sr.NextMessage()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if ev.Data != "" {
			return testutil.DecodeWire(t, []byte(ev.Data)), []byte(ev.Data)
		}
	}
}

// lastMessage returns the bytes of the answer's message: the body, or the last message event of
// an SSE answer.
func lastMessage(t testing.TB, rep testutil.Reply) []byte {
	t.Helper()
	if rep.ContentType() != "text/event-stream" {
		return rep.Body
	}
	sr := testutil.NewSSEReader(bytes.NewReader(rep.Body))
	var last []byte
	for {
		ev, err := sr.NextMessage()
		if errors.Is(err, io.EOF) {
			return last
		}
		if err != nil {
			t.Fatalf("reading SSE body: %v", err)
		}
		if ev.Data != "" {
			last = []byte(ev.Data)
		}
	}
}
