package apps

import "github.com/mcpkit/mcpkit/core"

// This file is everything that declares the extension to the server: its entry in the server's
// capabilities.extensions. It is the one part to move onto core's extension contract once core
// has one (an extension value in core.Options that contributes its own entry).

// ServerSettings returns the extension's entry in the server's capabilities.extensions: the UI
// content types the server serves, {"mimeTypes": ["text/html;profile=mcp-app"]}, the same shape
// the SEP defines for the client's entry.
func ServerSettings() map[string]any { return map[string]any{"mimeTypes": []string{MIMEType}} }

// Declare returns opts with MCP Apps declared in the server's capabilities, as initialize and
// server/discover announce them: capabilities.extensions["io.modelcontextprotocol/ui"].
//
// core derives a server's capabilities from what is registered unless Options.Capabilities is
// set; Declare sets it to what core derives for a server with tools and resources (an app server
// has both): logging, tools and resources with list changes, resources.subscribe when
// opts.SubscribeHandler is set, completions when opts.CompletionHandler is set. When
// opts.Capabilities is already set (a server that also declares other extensions), Declare keeps
// it and adds the entry to a copy. opts itself is not modified.
//
//	s := core.NewServer(impl, apps.Declare(core.Options{Instructions: "..."}))
func Declare(opts core.Options) core.Options {
	var caps core.ServerCapabilities
	if opts.Capabilities != nil {
		caps = *opts.Capabilities
	} else {
		caps = core.ServerCapabilities{
			Logging:   &struct{}{},
			Tools:     &core.ListChangedCapability{ListChanged: true},
			Resources: &core.ResourcesCapability{ListChanged: true, Subscribe: opts.SubscribeHandler != nil},
		}
		if opts.CompletionHandler != nil {
			caps.Completions = &struct{}{}
		}
	}
	exts := make(map[string]any, len(caps.Extensions)+1)
	for k, v := range caps.Extensions {
		exts[k] = v
	}
	exts[ExtensionID] = ServerSettings()
	caps.Extensions = exts
	opts.Capabilities = &caps
	return opts
}
