package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/coretest"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/stdio"
)

// osPeer is one stdio connection to a shared server over OS pipes, served as one principal
// (the context given to Serve names it, as a launcher that authenticated its user would).
type osPeer struct {
	t     *testing.T
	in    *os.File
	lines chan []byte
}

func serveOS(t *testing.T, srv *core.Server, user string) *osPeer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &osPeer{t: t, in: inW, lines: make(chan []byte, 1000)}
	done := make(chan error, 1)
	nop := zerolog.Nop()
	go func() {
		err := stdio.Serve(core.WithPrincipal(context.Background(), user), srv, stdio.Options{In: inR, Out: outW, Logger: &nop})
		outW.Close()
		done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(failsafe):
			t.Errorf("Serve did not end with its input")
		}
		inR.Close()
		outR.Close()
	})
	return p
}

func (p *osPeer) send(line string) {
	p.t.Helper()
	if _, err := p.in.WriteString(line + "\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next message the server wrote.
func (p *osPeer) next() (testutil.Wire, []byte) {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the server closed its output")
		}
		return testutil.DecodeWire(p.t, line), line
	case <-time.After(failsafe):
		p.t.Fatal("no message from the server")
	}
	panic("unreachable")
}

// answer returns the response to the request id, skipping notifications.
func (p *osPeer) answer(id int) []byte {
	p.t.Helper()
	want, _ := json.Marshal(id)
	for {
		w, raw := p.next()
		if w.Method == "" && string(w.ID) == string(want) {
			return raw
		}
	}
}

// legacy initializes the connection on the 2025-11-25 lifecycle.
func (p *osPeer) legacy() {
	p.t.Helper()
	p.send(testutil.Initialize(0, "2025-11-25"))
	if w := testutil.DecodeWire(p.t, p.answer(0)); w.Error != nil {
		p.t.Fatalf("initialize failed: %s", w.Error.Message)
	}
	p.send(testutil.Notification("notifications/initialized", nil))
}

// Two stdio connections of two principals see two views of one server, on both lifecycles.
func TestVisibilityPerCallerOverStdio(t *testing.T) {
	for _, tc := range []struct {
		version string
		caller  func(p *osPeer) coretest.Caller
	}{
		{"2025-11-25", func(p *osPeer) coretest.Caller {
			p.legacy()
			return func(_ testing.TB, id int, method string, params map[string]any) []byte {
				p.send(testutil.Request(id, method, params))
				return p.answer(id)
			}
		}},
		{testutil.ModernVersion, func(p *osPeer) coretest.Caller {
			return func(_ testing.TB, id int, method string, params map[string]any) []byte {
				p.send(testutil.ModernRequest(id, method, params))
				return p.answer(id)
			}
		}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			srv := coretest.ViewServer(core.Options{})
			admin := tc.caller(serveOS(t, srv, coretest.Admin))
			guest := tc.caller(serveOS(t, srv, coretest.Guest))
			coretest.CheckViews(t, tc.version, admin, guest)
		})
	}
}

// Over stdio too, a listen stream hears of a new entry only when its caller may see it, and
// FilterChanged reaches the streams and the legacy session of its principal only.
func TestVisibilityChangesOverStdio(t *testing.T) {
	srv := coretest.ViewServer(core.Options{})
	ctx := context.Background()
	filter := map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"test://marker"}}
	listen := func(user string) *osPeer {
		p := serveOS(t, srv, user)
		p.send(testutil.ModernRequest("l", "subscriptions/listen", map[string]any{"notifications": filter}))
		if ack, raw := p.next(); ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("%s: want the acknowledgement first, got %s", user, raw)
		}
		return p
	}
	admin, guest := listen(coretest.Admin), listen(coretest.Guest)
	legacyAdmin, legacyGuest := serveOS(t, srv, coretest.Admin), serveOS(t, srv, coretest.Guest)
	legacyAdmin.legacy()
	legacyGuest.legacy()
	marker := func() {
		if err := srv.NotifyResourceUpdated(ctx, "test://marker"); err != nil {
			t.Fatal(err)
		}
	}
	want := func(who string, p *osPeer, methods ...string) {
		t.Helper()
		for _, m := range methods {
			if w, raw := p.next(); w.Method != m {
				t.Fatalf("%s: got %s, want %s", who, raw, m)
			} else if m == core.ToolsListChanged {
				testutil.ValidateDef(t, "2025-11-25", "ToolListChangedNotification", raw)
			}
		}
	}
	srv.AddTool(&core.Tool{Name: "adm_new", Visible: func(ctx context.Context, _ *core.View) bool {
		p, _ := core.PrincipalFrom(ctx)
		return p == coretest.Admin
	}}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("ok"), nil
	})
	marker()
	want("admin listen", admin, core.ToolsListChanged, core.ResourceUpdated)
	want("guest listen", guest, core.ResourceUpdated)
	if err := srv.FilterChanged(ctx, coretest.Guest); err != nil {
		t.Fatal(err)
	}
	marker()
	want("guest listen", guest, core.ToolsListChanged, core.ResourceUpdated)
	want("admin listen", admin, core.ResourceUpdated)
	want("guest session", legacyGuest, core.ToolsListChanged, core.PromptsListChanged, core.ResourcesListChanged)
	srv.RemoveTools("adm_new")
	want("admin session", legacyAdmin, core.ToolsListChanged, core.ToolsListChanged)
}
