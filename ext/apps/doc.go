// Package apps serves MCP Apps (SEP-1865, the extension io.modelcontextprotocol/ui): tools that
// come with an interactive HTML interface the host renders in a sandboxed iframe, and that talks
// back to the server through the host.
//
// An app is a ui:// resource of type text/html;profile=mcp-app (Add registers it, from a string,
// a file or an fs.FS such as an embed.FS), and tools linked to it by their _meta.ui.resourceUri
// (App.Tool, or Link for a resource registered elsewhere). A tool linked with VisibleToApp alone
// is one the app calls (a refresh button, a form) and the host keeps from the model: the SEP
// leaves that to the host, which is the only party that can tell the two callers apart; the server
// declares the visibility and serves the call like any other.
//
// The server declares the extension in its capabilities when New is given in
// core.Options.Extensions. A tool handler can tell from
// its request whether the client will render the UI (Supported) and fall back to text when it will
// not; the SEP asks every UI tool to return meaningful content either way.
//
//	s := core.NewServer(impl, core.Options{Extensions: []core.Extension{apps.New()}})
//	clock := &apps.App{URI: "ui://clock/view.html", Name: "clock", HTML: "<!doctype html><p id=now></p><script>...</script>"}
//	apps.Add(s, clock)
//	s.AddTool(clock.Tool(&core.Tool{Name: "show_time"}), func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
//		return core.TextResult(time.Now().Format(time.Kitchen)), nil
//	})
//
// The Go client reads the other half (client.Options.Apps, Client.ToolUI, Client.ReadUI).
package apps
