// Command apps is an MCP App served by the kit: a tally counter whose tool, show_tally, opens an
// interactive page (web/tally.html, embedded in the binary) in hosts that render MCP Apps, and
// answers text to those that do not. The page's buttons call a second tool, add_to_tally, which
// is visible to the app only: the host calls it for the page and keeps it from the model.
//
//	go run ./examples/apps                           # Streamable HTTP on 127.0.0.1:3000, endpoint /mcp
//	go run ./examples/apps -stdio                    # stdio
//	go run ./examples/apps -origin http://127.0.0.1:5173  # also let a host page of that origin call it (CORS)
package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/stdio"
)

//go:embed web/tally.html
var web embed.FS

// TallyURI is the app's UI resource.
const TallyURI = "ui://tally/view.html"

// ShowInput is the show_tally tool's arguments.
type ShowInput struct {
	Name string `json:"name" jsonschema:"the tally to show, such as votes or cups of coffee"`
}

// AddInput is the add_to_tally tool's arguments.
type AddInput struct {
	Name string `json:"name" jsonschema:"the tally to change"`
	By   int    `json:"by" jsonschema:"how much to add (negative to take away)"`
}

// Tally is the structured output of both tools, which the page renders.
type Tally struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// tallies holds the counts, shared by every client of the process.
type tallies struct {
	mu     sync.Mutex
	counts map[string]int
}

func (t *tallies) add(name string, by int) Tally {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[name] += by
	return Tally{Name: name, Count: t.counts[name]}
}

// newServer builds the example server.
func newServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "apps", Title: "Tally app", Version: "1.0.0"}, core.Options{
		Extensions:   []core.Extension{apps.New()},
		Instructions: "show_tally shows a named tally counter; the user changes it in the view.",
	})
	no := false
	view := &apps.App{
		URI: TallyURI, Name: "tally", Title: "Tally", Description: "A counter with buttons.",
		FS: web, Path: "web/tally.html",
		PrefersBorder: &no,
	}
	apps.Add(s, view)
	counts := &tallies{counts: map[string]int{}}
	core.AddTool(s, view.Tool(&core.Tool{Name: "show_tally", Title: "Show a tally", Description: "Shows a named tally counter, which the user can change."}),
		func(ctx context.Context, req *core.ToolRequest, in ShowInput) (*core.CallToolResult, Tally, error) {
			name := strings.TrimSpace(in.Name)
			if name == "" {
				return core.ErrorResult("name must not be empty"), Tally{}, nil
			}
			t := counts.add(name, 0)
			text := fmt.Sprintf("%s: %d", t.Name, t.Count)
			if apps.Supported(ctx) {
				text += " (shown in the tally view, where the user can change it)"
			}
			return core.TextResult(text), t, nil
		})
	core.AddTool(s, view.Tool(&core.Tool{Name: "add_to_tally", Description: "Adds to a tally (the view's buttons)."}, apps.VisibleToApp),
		func(ctx context.Context, req *core.ToolRequest, in AddInput) (*core.CallToolResult, Tally, error) {
			name := strings.TrimSpace(in.Name)
			if name == "" || in.By < -1000 || in.By > 1000 {
				return core.ErrorResult("name must not be empty and by must be within ±1000"), Tally{}, nil
			}
			t := counts.add(name, in.By)
			return core.TextResult(fmt.Sprintf("%s: %d", t.Name, t.Count)), t, nil
		})
	return s
}

func main() {
	addr := flag.String("http", "127.0.0.1:3000", "serve Streamable HTTP on this address (endpoint /mcp)")
	useStdio := flag.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	origins := flag.String("origin", "", "comma-separated origins of browser pages allowed to call the endpoint (CORS), such as a host page's http://127.0.0.1:5173")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer()
	if *useStdio {
		if err := stdio.Serve(ctx, s, stdio.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var allowed []string
	for o := range strings.SplitSeq(*origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			allowed = append(allowed, o)
		}
	}
	if err := serveHTTP(ctx, s, *addr, allowed); err != nil {
		log.Fatal(err)
	}
}
