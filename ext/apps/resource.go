package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/core"
)

// App is the UI resource of an MCP App: a ui:// resource whose content is an HTML document
// served as MIMEType, with the _meta.ui fields the host reads to sandbox it. Exactly one of HTML,
// File and FS holds the document. Add registers it; Tool links tools to it.
type App struct {
	// URI identifies the app; it must use the ui:// scheme ("ui://weather/view.html").
	URI string
	// Name is the resource's name (required); Title and Description are shown by hosts.
	Name        string
	Title       string
	Description string
	// MIMEType is the content type. Empty means MIMEType, the only one the SEP defines; any other
	// value makes Add panic.
	MIMEType string

	// HTML is the document itself.
	HTML string
	// File is the path of a file holding the document, read once by Add.
	File string
	// FS and Path name the document inside a file system (an embed.FS of the program), read once
	// by Add.
	FS   fs.FS
	Path string

	// CSP lists the origins the app's page needs beyond its own inline content. The zero value
	// declares none: the host applies the SEP's restrictive default (no network, no nested frames).
	CSP CSP
	// Permissions are the browser features the app asks for. The zero value asks for none.
	Permissions Permissions
	// Domain asks for a dedicated sandbox origin, in the host's own format (a hash-based or
	// URL-derived subdomain of the host's content domain). Empty means the host's default origin.
	Domain string
	// PrefersBorder asks for (true) or against (false) a visible border and background around
	// the app. Nil leaves it to the host.
	PrefersBorder *bool

	// Meta holds other members of the resource's _meta; a "ui" member in it makes Add panic (the
	// fields above are the extension's).
	Meta core.Meta

	// Visible, when set, decides per request whether the caller sees the app's resource
	// (core.Resource.Visible): not to be confused with the tools' _meta.ui.visibility, a hint to
	// the host. Nil shows it to every caller the server's filters let through.
	Visible core.Visibility
}

// CSP lists the origins an app's page may reach, which the host turns into its Content Security
// Policy. Each entry is an origin (https://api.example.com, wss://live.example.com:8443), a
// wildcard subdomain (https://*.example.com) included. Nil lists allow nothing beyond the SEP's
// default.
type CSP struct {
	// ConnectDomains are the origins of fetch, XHR and WebSocket connections (connect-src).
	ConnectDomains []string `json:"connectDomains,omitzero"`
	// ResourceDomains are the origins of scripts, styles, images, fonts and media.
	ResourceDomains []string `json:"resourceDomains,omitzero"`
	// FrameDomains are the origins of nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitzero"`
	// BaseURIDomains are the allowed base URIs of the document (base-uri).
	BaseURIDomains []string `json:"baseUriDomains,omitzero"`
}

// Permissions are the browser features an app asks the host to allow on its iframe (the
// Permission Policy). The host may refuse any of them; the app should detect what it got. The zero
// value asks for none.
type Permissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

func (p *Permissions) flags() []struct {
	on   *bool
	name string
} {
	return []struct {
		on   *bool
		name string
	}{{&p.Camera, "camera"}, {&p.Microphone, "microphone"}, {&p.Geolocation, "geolocation"}, {&p.ClipboardWrite, "clipboardWrite"}}
}

// MarshalJSON encodes the permissions as the SEP spells them: an empty object per feature asked
// for ({"camera": {}}).
func (p Permissions) MarshalJSON() ([]byte, error) {
	m := map[string]struct{}{}
	for _, f := range p.flags() {
		if *f.on {
			m[f.name] = struct{}{}
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON decodes the SEP's form; a feature present with any value other than null counts
// as asked for, an unknown one is ignored.
func (p *Permissions) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, f := range p.flags() {
		v, ok := m[f.name]
		*f.on = ok && string(v) != "null"
	}
	return nil
}

// ResourceMeta is the _meta.ui object of a UI resource, as Add publishes it and a host reads it
// (see Client.ReadUI). The zero value declares nothing.
type ResourceMeta struct {
	CSP           CSP         `json:"csp,omitzero"`
	Permissions   Permissions `json:"permissions,omitzero"`
	Domain        string      `json:"domain,omitzero"`
	PrefersBorder *bool       `json:"prefersBorder,omitzero"`
}

// Add registers the app's resource on s, replacing one with the same URI, and announces the
// change (resources/list_changed to every client, resources/updated to those subscribed to it).
// The document is read now (File, FS) and served as it is by every resources/read, with the
// _meta.ui fields on both the listed resource and the read content (hosts read the latter first).
//
// Add panics, naming the field, on a URI that is not ui://, a MIMEType other than MIMEType, no or
// more than one document source, a document that cannot be read, is empty or is not UTF-8, a CSP
// entry that is not an origin, a Domain with spaces and a "ui" member in Meta.
func Add(s *core.Server, a *App) {
	if s == nil || a == nil {
		panic("apps: Add needs a server and an app")
	}
	html := a.document()
	meta := a.meta()
	res := &core.Resource{URI: a.URI, Name: a.Name, Title: a.Title, Description: a.Description, MimeType: MIMEType, Meta: meta, Visible: a.Visible}
	contents := []core.ResourceContents{{URI: a.URI, MimeType: MIMEType, Text: html, Meta: meta}}
	s.AddResource(res, func(context.Context, *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: contents}, nil
	})
	_ = s.NotifyResourceUpdated(context.Background(), a.URI)
}

// document validates the app and returns its HTML.
func (a *App) document() string {
	checkURI("App.URI", a.URI)
	if a.Name == "" {
		panic(fmt.Sprintf("apps: App.Name of %s must not be empty", a.URI))
	}
	if a.MIMEType != "" && a.MIMEType != MIMEType {
		panic(fmt.Sprintf("apps: App.MIMEType %q of %s must be %q (or empty)", a.MIMEType, a.URI, MIMEType))
	}
	sources := 0
	for _, set := range []bool{a.HTML != "", a.File != "", a.FS != nil || a.Path != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		panic(fmt.Sprintf("apps: App %s needs exactly one of HTML, File and FS (with Path)", a.URI))
	}
	html, field := a.HTML, "HTML"
	switch {
	case a.File != "":
		field = "File"
		b, err := os.ReadFile(a.File)
		if err != nil {
			panic(fmt.Sprintf("apps: App.File of %s: %v", a.URI, err))
		}
		html = string(b)
	case a.FS != nil || a.Path != "":
		field = "FS"
		if a.FS == nil || a.Path == "" {
			panic(fmt.Sprintf("apps: App.FS and App.Path of %s go together", a.URI))
		}
		b, err := fs.ReadFile(a.FS, a.Path)
		if err != nil {
			panic(fmt.Sprintf("apps: App.FS of %s: %v", a.URI, err))
		}
		html = string(b)
	}
	if strings.TrimSpace(html) == "" || !utf8.ValidString(html) {
		panic(fmt.Sprintf("apps: App.%s of %s must be a non-empty UTF-8 HTML document", field, a.URI))
	}
	return html
}

// meta validates the _meta.ui fields and returns the resource's _meta.
func (a *App) meta() core.Meta {
	for _, list := range []struct {
		name    string
		entries []string
	}{
		{"ConnectDomains", a.CSP.ConnectDomains}, {"ResourceDomains", a.CSP.ResourceDomains},
		{"FrameDomains", a.CSP.FrameDomains}, {"BaseURIDomains", a.CSP.BaseURIDomains},
	} {
		for i, e := range list.entries {
			if !validOrigin(e) {
				panic(fmt.Sprintf("apps: App.CSP.%s[%d] %q of %s is not an origin (scheme://host[:port], host may start with *.)", list.name, i, e, a.URI))
			}
		}
	}
	if strings.IndexFunc(a.Domain, unicode.IsSpace) >= 0 {
		panic(fmt.Sprintf("apps: App.Domain %q of %s must not contain spaces", a.Domain, a.URI))
	}
	if _, ok := a.Meta[MetaKey]; ok {
		panic(fmt.Sprintf("apps: App.Meta of %s must not hold %q: set the App's fields instead", a.URI, MetaKey))
	}
	ui := ResourceMeta{CSP: a.CSP, Permissions: a.Permissions, Domain: a.Domain, PrefersBorder: a.PrefersBorder}
	empty := ui.Permissions == Permissions{} && ui.Domain == "" && ui.PrefersBorder == nil &&
		len(ui.CSP.ConnectDomains)+len(ui.CSP.ResourceDomains)+len(ui.CSP.FrameDomains)+len(ui.CSP.BaseURIDomains) == 0
	if empty && len(a.Meta) == 0 {
		return nil
	}
	meta := make(core.Meta, len(a.Meta)+1)
	for k, v := range a.Meta {
		meta[k] = v
	}
	if !empty {
		meta[MetaKey] = ui
	}
	return meta
}

// checkURI panics, naming the field, unless uri is ui://something.
func checkURI(field, uri string) {
	rest, ok := cutScheme(uri)
	if !ok || rest == "" || strings.IndexFunc(uri, unicode.IsSpace) >= 0 {
		panic(fmt.Sprintf("apps: %s %q must be a %s:// URI", field, uri, Scheme))
	}
}

// validOrigin reports whether e is scheme://host[:port] with an optional leading "*." on the
// host, and nothing after the authority.
func validOrigin(e string) bool {
	scheme, rest, ok := strings.Cut(e, "://")
	if !ok || scheme == "" || rest == "" || strings.ContainsAny(rest, "/?#@ \t") {
		return false
	}
	for _, r := range scheme {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	host := strings.TrimPrefix(rest, "*.")
	if h, port, found := strings.Cut(host, ":"); found && !strings.HasPrefix(host, "[") {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = h
	}
	return host != "" && !strings.Contains(host, "*")
}

// cutScheme returns uri without its "ui://" prefix, and whether it had one.
func cutScheme(uri string) (string, bool) { return strings.CutPrefix(uri, Scheme+"://") }
