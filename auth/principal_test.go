package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// newOwnedStack serves the kit's default endpoint behind RequireBearer with no identity option
// at all: the verified subject is the only principal the endpoint hears of.
func newOwnedStack(t *testing.T) (as *testutil.AuthServer, url string) {
	t.Helper()
	as = testutil.StartAuthServer(t)
	h := http.NotFoundHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	url = ts.URL + "/mcp"
	s := core.NewServer(core.Implementation{Name: "owned", Version: "1"}, core.Options{Extensions: []core.Extension{tasks.New(tasks.Options{})}})
	s.AddTool(&core.Tool{Name: "confirm"}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		if state, ok := req.RequestState(); ok {
			return core.TextResult("confirmed " + state), nil
		}
		return nil, core.NeedInput(nil, "order-42")
	})
	s.AddTool(&core.Tool{Name: "slow", Execution: &core.ToolExecution{TaskSupport: tasks.SupportRequired}},
		func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
			<-ctx.Done() // runs until the task is cancelled or the server closes
			return nil, ctx.Err()
		})
	s.AddTool(&core.Tool{Name: "ping_tool"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("pong"), nil
	})
	mcp := mcphttp.New(s, mcphttp.Options{})
	t.Cleanup(func() { _ = mcp.Close() })
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: url})
	h = auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL(url)})(mcp)
	return as, url
}

func TestPrincipalOwnsLegacySession(t *testing.T) {
	as, url := newOwnedStack(t)
	alice := testutil.NewClient(url, nil)
	alice.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url))
	alice.Initialize(t)

	// Bob, with a valid token of his own, names alice's session: refused.
	bob := testutil.NewClient(url, nil)
	bob.Header.Set("Authorization", "Bearer "+as.Token(t, "bob", url))
	bob.SessionID, bob.ProtocolVersion = alice.SessionID, alice.ProtocolVersion
	if r := bob.Post(t, testutil.CallTool(1, "ping_tool", map[string]any{}, nil)); r.Status != http.StatusForbidden {
		t.Fatalf("bob on alice's session: %d %s, want 403", r.Status, r.Body)
	}
	if r := bob.Do(t, bob.NewRequest(context.Background(), http.MethodDelete)); r.Status != http.StatusForbidden {
		t.Fatalf("bob deleting alice's session: %d, want 403", r.Status)
	}
	// Alice, with a fresh token of hers, goes on.
	alice.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url))
	if w := alice.Call(t, 2, "tools/call", map[string]any{"name": "ping_tool"}); w.Error != nil {
		t.Fatalf("alice on her session: %v", w.Error)
	}
}

func TestPrincipalBindsRequestState(t *testing.T) {
	as, url := newOwnedStack(t)
	alice := testutil.NewClient(url, nil)
	alice.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url))
	w := alice.CallModern(t, 1, "tools/call", map[string]any{"name": "confirm"})
	var res struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(w.Result, &res); err != nil || res.ResultType != "input_required" || res.RequestState == "" {
		t.Fatalf("first call: %s %v", w.Result, w.Error)
	}
	retry := map[string]any{"name": "confirm", "requestState": res.RequestState}

	// Bob replays the state minted for alice: refused.
	bob := testutil.NewClient(url, nil)
	bob.Header.Set("Authorization", "Bearer "+as.Token(t, "bob", url))
	r := bob.PostModern(t, testutil.ModernRequest(2, "tools/call", retry))
	if m := r.Message(t); m.Error == nil {
		t.Fatalf("bob with alice's requestState: %d %s, want an error", r.Status, r.Body)
	}
	// Alice's retry completes.
	w = alice.CallModern(t, 3, "tools/call", retry)
	if w.Error != nil || !json.Valid(w.Result) || !strings.Contains(string(w.Result), "confirmed order-42") {
		t.Fatalf("alice's retry: %s %v", w.Result, w.Error)
	}
}

// openListen opens a subscriptions/listen stream as c and reads its acknowledgement.
func openListen(t *testing.T, c *testutil.Client, id string) *http.Response {
	t.Helper()
	resp := c.Open(t, c.NewModernPost(context.Background(), testutil.ModernRequest(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})))
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("listen %s: %d", id, resp.StatusCode)
	}
	ev, err := testutil.NewSSEReader(resp.Body).NextMessage()
	if err != nil || !strings.Contains(ev.Data, "notifications/subscriptions/acknowledged") {
		resp.Body.Close()
		t.Fatalf("listen %s: first frame %q %v", id, ev.Data, err)
	}
	return resp
}

func TestPrincipalScopesListenIDs(t *testing.T) {
	as, url := newOwnedStack(t)
	alice := testutil.NewClient(url, nil)
	alice.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url))
	bob := testutil.NewClient(url, nil)
	bob.Header.Set("Authorization", "Bearer "+as.Token(t, "bob", url))

	a := openListen(t, alice, "L1")
	defer a.Body.Close()
	// The same id from another principal is a different stream...
	b := openListen(t, bob, "L1")
	defer b.Body.Close()
	// ...but alice reusing her own open id is a conflict.
	r := alice.PostModern(t, testutil.ModernRequest("L1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	if r.Status != http.StatusConflict {
		t.Fatalf("alice reusing her listen id: %d %s, want 409", r.Status, r.Body)
	}
}

func TestPrincipalOwnsTasks(t *testing.T) {
	as, url := newOwnedStack(t)
	caps := map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}
	meta := map[string]any{"io.modelcontextprotocol/clientCapabilities": caps}
	alice := testutil.NewClient(url, nil)
	alice.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url))
	w := alice.CallModern(t, 1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "_meta": meta})
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(w.Result, &created); err != nil || created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("tools/call slow: %s %v", w.Result, w.Error)
	}
	get := map[string]any{"taskId": created.TaskID, "_meta": meta}
	bob := testutil.NewClient(url, nil)
	bob.Header.Set("Authorization", "Bearer "+as.Token(t, "bob", url))
	if m := bob.PostModern(t, testutil.ModernRequest(2, "tasks/get", get)).Message(t); m.Error == nil {
		t.Fatalf("bob reading alice's task: %s, want an error", m.Result)
	}
	if w := alice.CallModern(t, 3, "tasks/get", get); w.Error != nil {
		t.Fatalf("alice reading her task: %v", w.Error)
	}
}
