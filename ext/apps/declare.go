package apps

import "github.com/mcpkit/mcpkit/core"

// ServerSettings returns the extension's entry in the server's capabilities.extensions: the UI
// content types the server serves, {"mimeTypes": ["text/html;profile=mcp-app"]}, the same shape
// the SEP defines for the client's entry.
func ServerSettings() map[string]any { return map[string]any{"mimeTypes": []string{MIMEType}} }

// Extension is MCP Apps as a core extension: given in core.Options.Extensions, it announces
// capabilities.extensions["io.modelcontextprotocol/ui"] (ServerSettings) in initialize and
// server/discover. It adds no method: UI resources and the tools that open them are ordinary
// resources and tools (Add, App.Tool). The zero value is ready to use, and one Extension may be
// given to any number of servers.
type Extension struct{}

// New returns the MCP Apps extension, for core.Options.Extensions:
//
//	s := core.NewServer(impl, core.Options{Extensions: []core.Extension{apps.New()}})
func New() *Extension { return &Extension{} }

// Bind declares the extension to the server being built (core.Extension).
func (*Extension) Bind(*core.Server) core.ExtensionSpec {
	return core.ExtensionSpec{ID: ExtensionID, Name: "apps", Settings: ServerSettings()}
}
