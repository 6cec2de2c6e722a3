package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
)

// serve serves the example's HTTP handler (CORS in front of the endpoint) on loopback.
func serve(t *testing.T, origins ...string) *httptest.Server {
	t.Helper()
	endpoint, h := handler(newServer(), origins)
	srv := httptest.NewServer(endpoint)
	t.Cleanup(func() { srv.Close(); _ = h.Close() })
	return srv
}

// The app in both lifecycles: the tool is linked to the page, the page is served, the app-only
// tool updates the tally, and a client without apps gets plain text.
func TestTallyApp(t *testing.T) {
	srv := serve(t)
	ctx := context.Background()
	for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
		c, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL, HTTPClient: srv.Client()}, client.Options{Lifecycle: lc, Apps: true})
		if err != nil {
			t.Fatal(err)
		}
		if !c.ServerOffersApps() {
			t.Fatalf("%v: the server does not declare the extension", lc)
		}
		links := map[string]apps.ToolMeta{}
		for tool, err := range c.ListTools(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if m, ok := client.ToolUI(tool); ok {
				links[tool.Name] = m
			}
		}
		if links["show_tally"].ResourceURI != TallyURI || !links["show_tally"].VisibleTo(apps.VisibleToModel) ||
			links["add_to_tally"].ResourceURI != TallyURI || links["add_to_tally"].VisibleTo(apps.VisibleToModel) {
			t.Fatalf("%v: links %+v", lc, links)
		}
		ui, err := c.ReadUI(ctx, TallyURI)
		if err != nil || !strings.Contains(ui.HTML, `"add_to_tally"`) || ui.Meta.PrefersBorder == nil || *ui.Meta.PrefersBorder {
			t.Fatalf("%v: ReadUI: %+v, %v", lc, ui, err)
		}
		name := "cups " + map[client.Lifecycle]string{client.Legacy: "legacy", client.Modern: "modern"}[lc]
		shown, _, err := client.CallToolAs[Tally](ctx, c, "show_tally", map[string]any{"name": name})
		if err != nil || shown.Count != 0 {
			t.Fatalf("%v: show_tally: %+v, %v", lc, shown, err)
		}
		added, _, err := client.CallToolAs[Tally](ctx, c, "add_to_tally", map[string]any{"name": name, "by": 2})
		if err != nil || added != (Tally{Name: name, Count: 2}) {
			t.Fatalf("%v: add_to_tally: %+v, %v", lc, added, err)
		}
		res, err := c.CallTool(ctx, "show_tally", map[string]any{"name": name})
		if err != nil || res.Content[0].Text != name+": 2 (shown in the tally view, where the user can change it)" {
			t.Fatalf("%v: show_tally to an apps host: %+v, %v", lc, res, err)
		}
		if res, err := c.CallTool(ctx, "add_to_tally", map[string]any{"name": name, "by": 5000}); err != nil || !res.IsError {
			t.Fatalf("%v: add_to_tally out of range: %+v, %v", lc, res, err)
		}
		_ = c.Close()

		plain, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL, HTTPClient: srv.Client()}, client.Options{Lifecycle: lc})
		if err != nil {
			t.Fatal(err)
		}
		res, err = plain.CallTool(ctx, "show_tally", map[string]any{"name": name})
		if err != nil || res.Content[0].Text != name+": 2" {
			t.Fatalf("%v: show_tally to a text-only client: %+v, %v", lc, res, err)
		}
		_ = plain.Close()
	}
}

// A host page of an allowed origin may call the endpoint from a browser; another origin may not.
func TestTallyCORS(t *testing.T) {
	const page = "http://127.0.0.1:5173"
	srv := serve(t, page)
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version, mcp-method, mcp-name")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := preflight(page); res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != page {
		t.Fatalf("allowed page: %d %v", res.StatusCode, res.Header)
	}
	if res := preflight("http://127.0.0.1:6000"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("other page: %d", res.StatusCode)
	}
}
