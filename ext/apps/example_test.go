package apps_test

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
)

// WeatherInput is the arguments of the example's tool.
type WeatherInput struct {
	City string `json:"city"`
}

// Weather is its structured output, which the app's page renders.
type Weather struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
}

// An app and the tool that opens it: the server declares the extension, registers the page
// as a ui:// resource and links the tool to it. The tool answers text too, for clients that
// render no apps. A second tool, visible to the app only, is what the page's refresh button
// calls through the host.
func Example() {
	s := core.NewServer(core.Implementation{Name: "weather", Version: "1.0.0"}, core.Options{Extensions: []core.Extension{apps.New()}})
	view := &apps.App{
		URI:  "ui://weather/view.html",
		Name: "weather view",
		HTML: `<!doctype html><html><body><div id="out"></div><script>/* the app's code */</script></body></html>`,
		CSP:  apps.CSP{ConnectDomains: []string{"https://api.weather.example"}},
	}
	apps.Add(s, view)
	core.AddTool(s, view.Tool(&core.Tool{Name: "show_weather", Description: "Shows the weather in a city."}),
		func(ctx context.Context, req *core.ToolRequest, in WeatherInput) (*core.CallToolResult, Weather, error) {
			w := Weather{City: in.City, Celsius: 21.5}
			if !apps.Supported(ctx) {
				return core.TextResult(fmt.Sprintf("%s: %.1f °C", w.City, w.Celsius)), w, nil
			}
			return nil, w, nil
		})
	core.AddTool(s, view.Tool(&core.Tool{Name: "refresh_weather"}, apps.VisibleToApp),
		func(ctx context.Context, req *core.ToolRequest, in WeatherInput) (*core.CallToolResult, Weather, error) {
			return nil, Weather{City: in.City, Celsius: 22}, nil
		})

	// A Go host: it declares the extension, finds the tool's UI and reads the page.
	ctx := context.Background()
	c, err := client.Connect(ctx, &client.InMemoryTransport{Server: s}, client.Options{Apps: true})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for tool, err := range c.ListTools(ctx) {
		if err != nil {
			panic(err)
		}
		ui, _ := client.ToolUI(tool)
		fmt.Printf("%s opens %s (for the model: %v)\n", tool.Name, ui.ResourceURI, ui.VisibleTo(apps.VisibleToModel))
	}
	page, err := c.ReadUI(ctx, "ui://weather/view.html")
	if err != nil {
		panic(err)
	}
	fmt.Println("may connect to", page.Meta.CSP.ConnectDomains)
	// Output:
	// show_weather opens ui://weather/view.html (for the model: true)
	// refresh_weather opens ui://weather/view.html (for the model: false)
	// may connect to [https://api.weather.example]
}
