package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
)

// declareApps adds the MCP Apps extension to caps unless it is declared there already.
func declareApps(caps core.ClientCapabilities) core.ClientCapabilities {
	if _, ok := apps.ClientSupport(caps); ok {
		return caps
	}
	return apps.ClientCapabilities(caps)
}

// ToolUI returns the UI a tool listed by the server links to (its _meta.ui, or the older flat
// "ui/resourceUri" key), and whether it links one. Read the resource with Client.ReadUI; a host
// lists for the model only the tools whose ToolMeta.VisibleTo(apps.VisibleToModel), and lets an
// app call only those VisibleTo(apps.VisibleToApp).
func ToolUI(t *core.Tool) (apps.ToolMeta, bool) { return apps.ToolUI(t) }

// UI is the document of an MCP App, as ReadUI returns it for a host to render.
type UI struct {
	// URI is the ui:// resource read.
	URI string
	// HTML is the document (decoded from base64 when the server sent a blob).
	HTML string
	// Meta is the content's _meta.ui: the CSP origins, permissions, dedicated domain and border
	// preference the host applies to the iframe.
	Meta apps.ResourceMeta
}

// ServerOffersApps reports whether the server declared the MCP Apps extension in its
// capabilities.
func (c *Client) ServerOffersApps() bool {
	_, ok := c.ServerCapabilities().Extensions[apps.ExtensionID]
	return ok
}

// ReadUI reads the ui:// resource uri (a tool's ToolMeta.ResourceURI) and returns its document.
// It fails when uri is not ui://, or when the server's first content is not an app: another URI,
// a MIME type other than apps.MIMEType, no text, a blob that is not base64, or a _meta.ui that
// does not decode.
func (c *Client) ReadUI(ctx context.Context, uri string, opts ...CallOption) (*UI, error) {
	if !strings.HasPrefix(uri, apps.Scheme+"://") {
		return nil, fmt.Errorf("client: ReadUI: %q is not a %s:// URI", uri, apps.Scheme)
	}
	res, err := c.ReadResource(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	if len(res.Contents) == 0 {
		return nil, fmt.Errorf("client: ReadUI %s: the server returned no content", uri)
	}
	rc := res.Contents[0]
	if rc.URI != uri || rc.MimeType != apps.MIMEType {
		return nil, fmt.Errorf("client: ReadUI %s: the content is %s of type %q, not an app (%s)", uri, rc.URI, rc.MimeType, apps.MIMEType)
	}
	ui := &UI{URI: uri, HTML: rc.Text}
	if rc.Blob != "" {
		b, err := base64.StdEncoding.DecodeString(rc.Blob)
		if err != nil {
			return nil, fmt.Errorf("client: ReadUI %s: the blob is not base64: %w", uri, err)
		}
		ui.HTML = string(b)
	}
	if ui.HTML == "" {
		return nil, fmt.Errorf("client: ReadUI %s: the app has no document", uri)
	}
	if m, ok := rc.Meta[apps.MetaKey]; ok {
		b, err := json.Marshal(m)
		if err == nil {
			err = json.Unmarshal(b, &ui.Meta)
		}
		if err != nil {
			return nil, fmt.Errorf("client: ReadUI %s: _meta.ui: %w", uri, err)
		}
	}
	return ui, nil
}
