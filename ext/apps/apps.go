package apps

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/core"
)

// ExtensionID is the identifier of MCP Apps: its key in capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/ui"

// MIMEType is the MIME type of an app's HTML, on its resource and on what resources/read returns.
const MIMEType = "text/html;profile=mcp-app"

// Scheme is the URI scheme of UI resources: every app's URI starts with "ui://".
const Scheme = "ui"

// ResourceURIMetaKey is the older flat key of a tool's _meta ("ui/resourceUri") that hosts still
// read beside _meta.ui.resourceUri. Linked tools carry both, as the reference server helper does.
const ResourceURIMetaKey = "ui/resourceUri"

// MetaKey is the key of the _meta member that holds the extension's fields, on tools and
// resources.
const MetaKey = "ui"

// ClientSettings are the settings a client (a host) declares for the extension in
// capabilities.extensions["io.modelcontextprotocol/ui"]. The zero value supports nothing.
type ClientSettings struct {
	// MIMETypes are the UI content types the host renders; MCP Apps needs MIMEType among them.
	MIMETypes []string `json:"mimeTypes,omitzero"`
}

// Renders reports whether the settings include the app MIME type: the host renders MCP Apps.
func (s ClientSettings) Renders() bool { return slices.Contains(s.MIMETypes, MIMEType) }

// ClientSupport reads the extension's settings from a client's capabilities: ok is false when
// the client did not declare the extension at all. Members of an unexpected type are ignored.
func ClientSupport(caps core.ClientCapabilities) (settings ClientSettings, ok bool) {
	exts, _ := caps["extensions"].(map[string]any)
	raw, found := exts[ExtensionID]
	if !found || raw == nil {
		return ClientSettings{}, false
	}
	m, _ := raw.(map[string]any)
	switch types := m["mimeTypes"].(type) {
	case []any:
		for _, t := range types {
			if s, isString := t.(string); isString {
				settings.MIMETypes = append(settings.MIMETypes, s)
			}
		}
	case []string:
		settings.MIMETypes = append(settings.MIMETypes, types...)
	}
	return settings, true
}

// Supported reports whether the client behind the request ctx belongs to will render the UI of
// an app: it declared the extension with MIMEType among its mimeTypes (in the envelope of a
// 2026-07-28 request, at initialize in the legacy lifecycle). A tool handler uses it to fall back
// to text for a client that will not. Outside a request it reports false.
func Supported(ctx context.Context) bool {
	c := core.CallFromContext(ctx)
	if c == nil {
		return false
	}
	settings, _ := ClientSupport(c.ClientCapabilities())
	return settings.Renders()
}

// ClientCapabilities returns caps (nil means none) with the extension declared as a host that
// renders MCP Apps: extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [MIMEType]}. The
// other capabilities and extensions are kept; caps itself is not modified.
func ClientCapabilities(caps core.ClientCapabilities) core.ClientCapabilities {
	out := make(core.ClientCapabilities, len(caps)+1)
	for k, v := range caps {
		out[k] = v
	}
	exts := map[string]any{}
	if old, ok := caps["extensions"].(map[string]any); ok {
		for k, v := range old {
			exts[k] = v
		}
	}
	exts[ExtensionID] = map[string]any{"mimeTypes": []any{MIMEType}}
	out["extensions"] = exts
	return out
}
