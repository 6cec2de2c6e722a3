package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

func resourceServer(opts *core.Options) *core.Server {
	srv := newServer(opts)
	srv.AddResource(&core.Resource{URI: "test://static-text", Name: "static", MimeType: "text/plain"}, okResource)
	srv.AddResource(&core.Resource{URI: "test://empty", Name: "empty"}, func(context.Context, *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{}, nil
	})
	srv.AddResource(&core.Resource{URI: "test://nil", Name: "nil"}, func(context.Context, *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return nil, nil
	})
	srv.AddResource(&core.Resource{URI: "test://blob", Name: "blob"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, MimeType: "image/png", Blob: "iVBORw0KGgo="}}}, nil
	})
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "tpl"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "id=" + req.Vars["id"]}}}, nil
	})
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "file:///{dir}/{name}.txt", Name: "files"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: req.Vars["dir"] + "|" + req.Vars["name"]}}}, nil
	})
	return srv
}

func TestResourcesRead(t *testing.T) {
	c := newClient(t, resourceServer(nil))
	c.initialize("2025-11-25")
	tests := []struct {
		uri, text string // text "" means not found
	}{
		{"test://static-text", "body of test://static-text"},
		{"test://template/42/data", "id=42"},
		{"test://template/a-b.c/data", "id=a-b.c"},
		{"file:///docs/read.me.txt", "docs|read.me"}, // the variable backtracks over a '.'
		{"test://template/1/2/data", ""},             // a variable never spans '/'
		{"test://template//data", ""},                // a variable is never empty
		{"test://template/1/data/more", ""},          // anchored at the end
		{"xtest://template/1/data", ""},              // anchored at the start
		{"test://template/1/dat", ""},
		{"test://STATIC-TEXT", ""},
		{"test://empty", ""}, // empty contents is not-found, never {"contents":[]}
		{"test://nil", ""},
		{"test://nowhere", ""},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			if tt.text == "" {
				wantError(t, c.call("resources/read", map[string]any{"uri": tt.uri}), -32602, "Resource not found: "+tt.uri, map[string]any{"uri": tt.uri})
				return
			}
			var r struct {
				Contents []struct {
					URI  string `json:"uri"`
					Text string `json:"text"`
				} `json:"contents"`
			}
			c.result("resources/read", map[string]any{"uri": tt.uri}, "ReadResourceResult", &r)
			if len(r.Contents) != 1 || r.Contents[0].Text != tt.text || r.Contents[0].URI != tt.uri {
				t.Errorf("read %s: %+v", tt.uri, r)
			}
		})
	}
	w := c.result("resources/read", map[string]any{"uri": "test://blob"}, "ReadResourceResult", nil)
	if !strings.Contains(string(w.Result), `"blob":"iVBORw0KGgo="`) || strings.Contains(string(w.Result), `"text"`) {
		t.Errorf("blob contents: %s", w.Result)
	}
	wantError(t, c.call("resources/read", map[string]any{}), -32602, "Invalid params", "Missing or invalid uri")
	wantError(t, c.call("resources/read", map[string]any{"uri": 5}), -32602, "Invalid params", "Missing or invalid uri")
	wantError(t, c.call("resources/read", nil), -32602, "Invalid params", "Invalid params")
}

func TestResourcesList(t *testing.T) {
	c := newClient(t, resourceServer(nil))
	var lr struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	}
	c.result("resources/list", nil, "ListResourcesResult", &lr)
	if len(lr.Resources) != 4 || lr.Resources[0].URI != "test://static-text" {
		t.Errorf("resources/list: %+v", lr)
	}
	var tr struct {
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	c.result("resources/templates/list", nil, "ListResourceTemplatesResult", &tr)
	if len(tr.ResourceTemplates) != 2 || tr.ResourceTemplates[0].URITemplate != "test://template/{id}/data" {
		t.Errorf("resources/templates/list: %+v", tr)
	}
}

func TestResourceTemplateRejects(t *testing.T) {
	srv := newServer(nil)
	for _, tpl := range []string{"x://{", "x://{}", "x://{a}{b}", "x://a}", "x://{a/b}"} {
		t.Run(tpl, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("accepted")
				}
			}()
			srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: tpl, Name: "n"}, okResource)
		})
	}
}

// TestSubscriptions: subscribe and unsubscribe, and NotifyResourceUpdated reaching only the
// sessions subscribed to that URI.
func TestSubscriptions(t *testing.T) {
	var refused string
	srv := resourceServer(&core.Options{SubscribeHandler: func(_ context.Context, req *core.SubscribeRequest) error {
		if req.URI == "test://forbidden" {
			refused = req.URI
			return jsonrpc.NewError(-32602, "Subscription refused")
		}
		return nil
	}})
	a, b, idle := newClient(t, srv), newClient(t, srv), newClient(t, srv)
	for _, c := range []*client{a, b, idle} {
		c.initialize("2025-11-25")
	}
	a.result("resources/subscribe", map[string]any{"uri": "test://static-text"}, "EmptyResult", nil)
	b.result("resources/subscribe", map[string]any{"uri": "test://blob"}, "EmptyResult", nil)
	if !a.ss.Subscribed("test://static-text") || a.ss.Subscribed("test://blob") {
		t.Error("Subscribed does not reflect the subscriptions")
	}

	srv.NotifyResourceUpdated(context.Background(), "test://static-text")
	got := a.out.all(t)
	if len(got) != 1 || got[0].Method != "notifications/resources/updated" || canon(t, got[0].Params) != `{"uri":"test://static-text"}` {
		t.Fatalf("subscriber received %v", got)
	}
	testSchema(t, "ResourceUpdatedNotification", got[0].raw)
	if m := b.out.all(t); len(m) != 0 {
		t.Errorf("a session subscribed to another URI received %v", m)
	}
	if m := idle.out.all(t); len(m) != 0 {
		t.Errorf("an unsubscribed session received %v", m)
	}

	a.result("resources/unsubscribe", map[string]any{"uri": "test://static-text"}, "EmptyResult", nil)
	srv.NotifyResourceUpdated(context.Background(), "test://static-text")
	if m := a.out.all(t); len(m) != 1 {
		t.Errorf("after unsubscribe: %v", m)
	}

	wantError(t, a.call("resources/subscribe", map[string]any{"uri": "test://forbidden"}), -32602, "Subscription refused", "Subscription refused")
	if refused == "" || a.ss.Subscribed("test://forbidden") {
		t.Error("a refused subscription was kept")
	}
	wantError(t, a.call("resources/subscribe", map[string]any{}), -32602, "Invalid params", "Missing or invalid uri")
	wantError(t, a.call("resources/unsubscribe", map[string]any{"uri": 1}), -32602, "Invalid params", "Missing or invalid uri")

	// A closed session is forgotten.
	b.ss.Close()
	srv.NotifyResourceUpdated(context.Background(), "test://blob")
	if m := b.out.all(t); len(m) != 0 {
		t.Errorf("a closed session received %v", m)
	}
}

// TestSessionByteBounds: what a session keeps is bounded in bytes, not only in count: the
// client's initialize, each subscribed URI and all of them together.
func TestSessionByteBounds(t *testing.T) {
	srv := resourceServer(&core.Options{SubscribeHandler: core.AcceptSubscription,
		MaxClientInfoBytes: 200, MaxSubscriptionURIBytes: 40, MaxSubscriptionBytes: 100})

	t.Run("client info and capabilities", func(t *testing.T) {
		c := newClient(t, srv)
		w := c.call("initialize", map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"experimental": map[string]any{"x": strings.Repeat("a", 100)}},
			"clientInfo":      map[string]any{"name": "big", "version": strings.Repeat("1", 100)},
		})
		wantError(t, w, -32602, "Invalid params", "clientInfo and capabilities exceed 200 bytes (MaxClientInfoBytes)")
		if c.ss.Initialized() || c.ss.ClientInfo() != nil {
			t.Error("the refused initialize left state on the session")
		}
		c.initialize("2025-11-25") // a normal one still fits
	})

	t.Run("subscriptions", func(t *testing.T) {
		c := newClient(t, srv)
		c.initialize("2025-11-25")
		long := "test://" + strings.Repeat("u", 34) // 41 bytes
		wantError(t, c.call("resources/subscribe", map[string]any{"uri": long}), -32602, "Invalid params",
			"uri exceeds 40 bytes (MaxSubscriptionURIBytes)")
		uri := func(i int) string { return fmt.Sprintf("test://%031d", i) } // 38 bytes each
		c.result("resources/subscribe", map[string]any{"uri": uri(1)}, "EmptyResult", nil)
		c.result("resources/subscribe", map[string]any{"uri": uri(2)}, "EmptyResult", nil)
		c.result("resources/subscribe", map[string]any{"uri": uri(2)}, "EmptyResult", nil) // no new bytes
		wantError(t, c.call("resources/subscribe", map[string]any{"uri": uri(3)}), -32602, "Invalid params",
			"the resource subscriptions of this session would exceed 100 bytes (MaxSubscriptionBytes)")
		if c.ss.Subscribed(uri(3)) || c.ss.Subscribed(long) {
			t.Error("a refused subscription was kept")
		}
		// Unsubscribing gives the bytes back.
		c.result("resources/unsubscribe", map[string]any{"uri": uri(1)}, "EmptyResult", nil)
		c.result("resources/subscribe", map[string]any{"uri": uri(3)}, "EmptyResult", nil)
	})

	t.Run("defaults and no bound", func(t *testing.T) {
		def := resourceServer(&core.Options{SubscribeHandler: core.AcceptSubscription})
		c := newClient(t, def)
		c.initialize("2025-11-25")
		wantError(t, c.call("resources/subscribe", map[string]any{"uri": "test://" + strings.Repeat("u", core.DefaultMaxSubscriptionURIBytes)}),
			-32602, "Invalid params", "uri exceeds 8192 bytes (MaxSubscriptionURIBytes)")
		off := resourceServer(&core.Options{SubscribeHandler: core.AcceptSubscription, MaxSubscriptionURIBytes: -1, MaxClientInfoBytes: -1})
		c = newClient(t, off)
		c.result("initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "big", "version": strings.Repeat("1", 40<<10)},
		}, "InitializeResult", nil)
		c.result("resources/subscribe", map[string]any{"uri": "test://" + strings.Repeat("u", 9<<10)}, "EmptyResult", nil)
	})
}
