package apps_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

const page = "<!doctype html><html><body><p>hi</p></body></html>"

func newServer() *core.Server {
	return core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{Extensions: []core.Extension{apps.New()}})
}

func TestAddRefuses(t *testing.T) {
	dir := t.TempDir()
	yes := true
	for _, tc := range []struct {
		name, want string
		app        apps.App
	}{
		{"http scheme", `apps: App.URI "https://x/v" must be a ui:// URI`, apps.App{URI: "https://x/v", Name: "v", HTML: page}},
		{"no scheme", `apps: App.URI "view.html" must be a ui:// URI`, apps.App{URI: "view.html", Name: "v", HTML: page}},
		{"empty after scheme", `apps: App.URI "ui://" must be a ui:// URI`, apps.App{URI: "ui://", Name: "v", HTML: page}},
		{"no name", "apps: App.Name of ui://x/v must not be empty", apps.App{URI: "ui://x/v", HTML: page}},
		{"plain html", `apps: App.MIMEType "text/html" of ui://x/v must be "text/html;profile=mcp-app"`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, MIMEType: "text/html"}},
		{"no document", "apps: App ui://x/v needs exactly one of HTML, File and FS", apps.App{URI: "ui://x/v", Name: "v"}},
		{"two documents", "apps: App ui://x/v needs exactly one of HTML, File and FS", apps.App{URI: "ui://x/v", Name: "v", HTML: page, File: "x.html"}},
		{"FS without Path", "apps: App.FS and App.Path of ui://x/v go together", apps.App{URI: "ui://x/v", Name: "v", FS: fstest.MapFS{}}},
		{"missing file", "apps: App.File of ui://x/v: open " + filepath.Join(dir, "none.html"), apps.App{URI: "ui://x/v", Name: "v", File: filepath.Join(dir, "none.html")}},
		{"missing in FS", "apps: App.FS of ui://x/v: open v.html", apps.App{URI: "ui://x/v", Name: "v", FS: fstest.MapFS{}, Path: "v.html"}},
		{"blank", "apps: App.HTML of ui://x/v must be a non-empty UTF-8 HTML document", apps.App{URI: "ui://x/v", Name: "v", HTML: " \n"}},
		{"not utf-8", "apps: App.FS of ui://x/v must be a non-empty UTF-8 HTML document", apps.App{URI: "ui://x/v", Name: "v", FS: fstest.MapFS{"v.html": {Data: []byte{0xff, 0xfe}}}, Path: "v.html"}},
		{"connect path", `apps: App.CSP.ConnectDomains[1] "https://api.example.com/v1" of ui://x/v is not an origin`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, CSP: apps.CSP{ConnectDomains: []string{"https://ok.example.com", "https://api.example.com/v1"}}}},
		{"resource bare host", `apps: App.CSP.ResourceDomains[0] "cdn.example.com" of ui://x/v is not an origin`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, CSP: apps.CSP{ResourceDomains: []string{"cdn.example.com"}}}},
		{"frame bad port", `apps: App.CSP.FrameDomains[0] "https://x.example.com:web" of ui://x/v is not an origin`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, CSP: apps.CSP{FrameDomains: []string{"https://x.example.com:web"}}}},
		{"base inner wildcard", `apps: App.CSP.BaseURIDomains[0] "https://a.*.example.com" of ui://x/v is not an origin`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, CSP: apps.CSP{BaseURIDomains: []string{"https://a.*.example.com"}}}},
		{"domain with space", `apps: App.Domain "a b" of ui://x/v must not contain spaces`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, Domain: "a b", PrefersBorder: &yes}},
		{"ui in meta", `apps: App.Meta of ui://x/v must not hold "ui"`, apps.App{URI: "ui://x/v", Name: "v", HTML: page, Meta: core.Meta{"ui": 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.WantPanic(t, tc.want, func() { apps.Add(newServer(), &tc.app) })
		})
	}
	testutil.WantPanic(t, "apps: Add needs a server and an app", func() { apps.Add(newServer(), nil) })
}

// Each source gives the same document, listed and read with the app MIME type and _meta.ui.
func TestAddServesTheDocument(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	no := false
	full := apps.App{
		Name: "v", Title: "View", Description: "A view.",
		CSP: apps.CSP{
			ConnectDomains:  []string{"https://api.example.com", "wss://live.example.com:8443"},
			ResourceDomains: []string{"https://*.cdn.example.com"},
			FrameDomains:    []string{"https://www.youtube.com"},
			BaseURIDomains:  []string{"https://cdn.example.com"},
		},
		Permissions:   apps.Permissions{Camera: true, ClipboardWrite: true},
		Domain:        "a904794854a047f6.example-content.com",
		PrefersBorder: &no,
		Meta:          core.Meta{"example.com/owner": "team"},
	}
	s := newServer()
	for _, src := range []struct {
		uri string
		set func(*apps.App)
	}{
		{"ui://t/string", func(a *apps.App) { a.HTML = page }},
		{"ui://t/file", func(a *apps.App) { a.File = file }},
		{"ui://t/fs", func(a *apps.App) { a.FS, a.Path = fstest.MapFS{"web/v.html": {Data: []byte(page)}}, "web/v.html" }},
	} {
		a := full
		a.URI = src.uri
		src.set(&a)
		apps.Add(s, &a)
	}
	url := serve(t, s)
	for _, lc := range lifecycles {
		c := connect(t, url, lc.lc, true)
		ctx := context.Background()
		listed := 0
		for r, err := range c.ListResources(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			listed++
			if r.MimeType != apps.MIMEType || r.Title != "View" || r.Meta["example.com/owner"] != "team" {
				t.Fatalf("%s: listed %+v", lc.name, r)
			}
			validateExt(t, "McpUiResourceMeta", r.Meta["ui"])
		}
		if listed != 3 {
			t.Fatalf("%s: %d resources listed", lc.name, listed)
		}
		for _, uri := range []string{"ui://t/string", "ui://t/file", "ui://t/fs"} {
			ui, err := c.ReadUI(ctx, uri)
			if err != nil {
				t.Fatalf("%s: %v", lc.name, err)
			}
			if ui.HTML != page || ui.Meta.Domain != full.Domain || ui.Meta.PrefersBorder == nil || *ui.Meta.PrefersBorder ||
				ui.Meta.Permissions != full.Permissions || strings.Join(ui.Meta.CSP.ConnectDomains, " ") != "https://api.example.com wss://live.example.com:8443" ||
				len(ui.Meta.CSP.BaseURIDomains) != 1 || len(ui.Meta.CSP.FrameDomains) != 1 || len(ui.Meta.CSP.ResourceDomains) != 1 {
				t.Fatalf("%s: ReadUI(%s) = %+v", lc.name, uri, ui)
			}
		}
	}

	// The wire shapes, against the official schema and the extension's.
	var raw json.RawMessage
	c := connect(t, url, client.Legacy, true)
	if err := c.Call(context.Background(), "resources/read", map[string]any{"uri": "ui://t/fs"}, &raw); err != nil {
		t.Fatal(err)
	}
	testutil.ValidateDef(t, "2025-11-25", "ReadResourceResult", raw)
	var read struct {
		Contents []struct {
			MimeType string `json:"mimeType"`
			Meta     struct {
				UI json.RawMessage `json:"ui"`
			} `json:"_meta"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &read); err != nil || read.Contents[0].MimeType != apps.MIMEType {
		t.Fatalf("read %s: %v", raw, err)
	}
	const wantUI = `{"csp":{"connectDomains":["https://api.example.com","wss://live.example.com:8443"],"resourceDomains":["https://*.cdn.example.com"],"frameDomains":["https://www.youtube.com"],"baseUriDomains":["https://cdn.example.com"]},"permissions":{"camera":{},"clipboardWrite":{}},"domain":"a904794854a047f6.example-content.com","prefersBorder":false}`
	if string(read.Contents[0].Meta.UI) != wantUI {
		t.Fatalf("_meta.ui\n got %s\nwant %s", read.Contents[0].Meta.UI, wantUI)
	}
	validateExt(t, "McpUiResourceMeta", read.Contents[0].Meta.UI)
}

// An app without _meta.ui fields has no _meta; ReadUI refuses what is not an app.
func TestReadUIRefusesOtherResources(t *testing.T) {
	s := newServer()
	apps.Add(s, &apps.App{URI: "ui://t/plain", Name: "plain", HTML: page})
	s.AddResource(&core.Resource{URI: "ui://t/text", Name: "text"}, func(_ context.Context, r *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: r.URI, MimeType: "text/html", Text: page}}}, nil
	})
	for uri, blob := range map[string]string{"ui://t/blob": base64.StdEncoding.EncodeToString([]byte(page)), "ui://t/badblob": "%%%"} {
		s.AddResource(&core.Resource{URI: uri, Name: "blob"}, func(_ context.Context, r *core.ResourceRequest) (*core.ReadResourceResult, error) {
			return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: r.URI, MimeType: apps.MIMEType, Blob: blob}}}, nil
		})
	}
	c := connect(t, serve(t, s), client.Modern, true)
	ctx := context.Background()
	if ui, err := c.ReadUI(ctx, "ui://t/blob"); err != nil || ui.HTML != page {
		t.Fatalf("a base64 document: %+v, %v", ui, err)
	}
	if _, err := c.ReadUI(ctx, "ui://t/badblob"); err == nil || !strings.Contains(err.Error(), "not base64") {
		t.Fatalf("a bad blob: %v", err)
	}
	for r, err := range c.ListResources(ctx) {
		if err == nil && r.URI == "ui://t/plain" && r.Meta != nil {
			t.Fatalf("an app without fields has _meta %v", r.Meta)
		}
	}
	if _, err := c.ReadUI(ctx, "https://t/plain"); err == nil || !strings.Contains(err.Error(), "is not a ui:// URI") {
		t.Fatalf("https URI: %v", err)
	}
	if _, err := c.ReadUI(ctx, "ui://t/text"); err == nil || !strings.Contains(err.Error(), "not an app") {
		t.Fatalf("text/html: %v", err)
	}
	if _, err := c.ReadUI(ctx, "ui://t/none"); err == nil {
		t.Fatal("a missing resource read")
	}
}

// Adding an app again replaces it and tells subscribed clients.
func TestAddAgainNotifiesSubscribers(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "t", Version: "1"}, core.Options{Extensions: []core.Extension{apps.New()}, SubscribeHandler: core.AcceptSubscription})
	apps.Add(s, &apps.App{URI: "ui://t/v", Name: "v", HTML: page})
	updated := make(chan string, 4)
	c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: serve(t, s)}, client.Options{
		Lifecycle: client.Legacy,
		OnNotification: func(_ context.Context, n client.Notification) {
			if n.Method == "notifications/resources/updated" {
				updated <- string(n.Params)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Subscribe(context.Background(), "ui://t/v"); err != nil {
		t.Fatal(err)
	}
	apps.Add(s, &apps.App{URI: "ui://t/v", Name: "v", HTML: "<p>two</p>"})
	if got := <-updated; !strings.Contains(got, "ui://t/v") {
		t.Fatalf("resources/updated %s", got)
	}
	ui, err := c.ReadUI(context.Background(), "ui://t/v")
	if err != nil || ui.HTML != "<p>two</p>" {
		t.Fatalf("after the second Add: %+v, %v", ui, err)
	}
}
