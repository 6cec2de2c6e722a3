package apps

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit/core"
)

// Visibility says who may call a tool linked to an app: the model (the agent) or the app's own
// page through the host. A tool declares one or both; none declared means both.
type Visibility string

// The visibilities the SEP defines.
const (
	// VisibleToModel lists the tool for the agent, which may call it.
	VisibleToModel Visibility = "model"
	// VisibleToApp lets the app call the tool through the host, from this server only.
	VisibleToApp Visibility = "app"
)

// ToolMeta is the _meta.ui object of a tool linked to an app, as Link publishes it and a host
// reads it (ToolUI). The zero value links nothing.
type ToolMeta struct {
	// ResourceURI is the ui:// resource the host renders for the tool's results.
	ResourceURI string `json:"resourceUri,omitzero"`
	// Visibility lists who may call the tool; empty means VisibleToModel and VisibleToApp.
	Visibility []Visibility `json:"visibility,omitzero"`
}

// VisibleTo reports whether the tool may be called by v: true when Visibility is empty (the
// SEP's default) or lists v. A host lists for the model only the tools VisibleTo(VisibleToModel),
// and refuses a call from an app to a tool that is not VisibleTo(VisibleToApp).
func (m ToolMeta) VisibleTo(v Visibility) bool {
	return len(m.Visibility) == 0 || slices.Contains(m.Visibility, v)
}

// Tool returns a copy of t linked to the app (see Link), for core.AddTool or Server.AddTool;
// with VisibleToApp alone, the tool is one the app's page calls and the host keeps from the model:
//
//	view := &apps.App{URI: "ui://weather/view.html", Name: "weather", File: "web/weather.html"}
//	apps.Add(s, view)
//	weather := func(ctx context.Context, req *core.ToolRequest, in struct{ City string }) (*core.CallToolResult, Weather, error) {
//		return nil, Weather{City: in.City, TempC: 21.5}, nil
//	}
//	core.AddTool(s, view.Tool(&core.Tool{Name: "show_weather"}), weather)
//	core.AddTool(s, view.Tool(&core.Tool{Name: "refresh_weather"}, apps.VisibleToApp), weather)
func (a *App) Tool(t *core.Tool, visibility ...Visibility) *core.Tool {
	if a == nil {
		panic("apps: App.Tool called on a nil app")
	}
	return Link(t, a.URI, visibility...)
}

// Link returns a copy of t whose _meta links it to the UI resource uri: _meta.ui.resourceUri,
// the older flat _meta["ui/resourceUri"] hosts still read, and _meta.ui.visibility when given.
// The other members of t.Meta are kept; t itself is not modified. No visibility means the SEP's
// default, model and app.
//
// Link panics, naming the field, on a nil tool, a uri that is not ui://, a visibility other than
// VisibleToModel and VisibleToApp or given twice, and a t.Meta that already links a UI.
func Link(t *core.Tool, uri string, visibility ...Visibility) *core.Tool {
	if t == nil {
		panic("apps: Link needs a tool")
	}
	checkURI("resource URI of tool "+t.Name, uri)
	for i, v := range visibility {
		if v != VisibleToModel && v != VisibleToApp {
			panic(fmt.Sprintf("apps: visibility[%d] %q of tool %s must be %q or %q", i, v, t.Name, VisibleToModel, VisibleToApp))
		}
		if slices.Contains(visibility[:i], v) {
			panic(fmt.Sprintf("apps: visibility %q of tool %s is given twice", v, t.Name))
		}
	}
	for _, k := range []string{MetaKey, ResourceURIMetaKey} {
		if _, ok := t.Meta[k]; ok {
			panic(fmt.Sprintf("apps: Tool.Meta of tool %s already holds %q", t.Name, k))
		}
	}
	out := *t
	out.Meta = make(core.Meta, len(t.Meta)+2)
	for k, v := range t.Meta {
		out.Meta[k] = v
	}
	out.Meta[MetaKey] = ToolMeta{ResourceURI: uri, Visibility: slices.Clone(visibility)}
	out.Meta[ResourceURIMetaKey] = uri
	return &out
}

// ToolUI reads the UI link of a tool as a host sees it in tools/list: _meta.ui, with the
// resource URI taken from the older flat key when _meta.ui has none. ok is false when the tool
// links no ui:// resource. Members of an unexpected shape are ignored.
func ToolUI(t *core.Tool) (meta ToolMeta, ok bool) {
	if t == nil {
		return ToolMeta{}, false
	}
	if raw, found := t.Meta[MetaKey]; found {
		switch v := raw.(type) {
		case ToolMeta:
			meta = v
		default:
			if b, err := json.Marshal(v); err == nil {
				var m struct {
					ResourceURI any   `json:"resourceUri"`
					Visibility  []any `json:"visibility"`
				}
				if json.Unmarshal(b, &m) == nil {
					meta.ResourceURI, _ = m.ResourceURI.(string)
					for _, x := range m.Visibility {
						if s, isString := x.(string); isString {
							meta.Visibility = append(meta.Visibility, Visibility(s))
						}
					}
				}
			}
		}
	}
	if meta.ResourceURI == "" {
		meta.ResourceURI, _ = t.Meta[ResourceURIMetaKey].(string)
	}
	rest, isUI := cutScheme(meta.ResourceURI)
	if !isUI || rest == "" {
		return ToolMeta{}, false
	}
	return meta, true
}
