// Package peers serves the same echo tool with mcpkit, the official Go SDK (go-sdk), mcp-go and
// a bare net/http + encoding/json handler, so their costs can be compared side by side; and
// mcpkit with its legacy sessions on Redis (mcpkit-redis), for the cost of sharing them.
//
// The tool, "echo", takes {"text": string} and answers {"text": <the same string>} as
// structuredContent, with the same JSON in a text block. Every implementation validates the
// arguments the way it does by default; the bare handler only decodes them.
package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
)

// Workload is one way of calling the tool.
type Workload string

const (
	// Stateless is a 2025-11-25 tools/call with no session, answered with one JSON object.
	Stateless Workload = "stateless"
	// Modern is a 2026-07-28 tools/call (envelope in _meta, mirror headers), no session.
	Modern Workload = "modern"
	// Session is a 2025-11-25 tools/call on an initialized session, answered on an SSE stream
	// where the implementation does so.
	Session Workload = "session"
)

// Workloads lists every workload, in the order they are reported.
var Workloads = []Workload{Stateless, Modern, Session}

// Impls lists the implementations, bare first: ratios are to bare. mcpkit-redis is mcpkit with
// its session store on Redis (Config.RedisURL), for the session workload.
var Impls = []string{"bare", "mcpkit", "mcpkit-redis", "go-sdk", "mcp-go"}

// Supports reports whether an implementation serves a workload. Every implementation speaks
// both lifecycles (go-sdk since v1.7, mcp-go since v1.0 serve 2026-07-28); mcpkit-redis serves
// only the session workload, the one that has a session to store.
func Supports(impl string, w Workload) bool {
	if !slices.Contains(Impls, impl) {
		return false
	}
	return impl != "mcpkit-redis" || w == Session
}

// Config is what some implementations need beyond the workload.
type Config struct {
	// RedisURL is the Redis of mcpkit-redis (redis://host:port/db); required for it.
	RedisURL string
}

// EchoIn is the echo tool's arguments.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// EchoOut is the echo tool's structured output.
type EchoOut struct {
	Text string `json:"text"`
}

// Handler returns the HTTP handler of impl for workload w, and a function that releases it.
func Handler(impl string, w Workload, cfg Config) (http.Handler, func(), error) {
	if !Supports(impl, w) {
		return nil, nil, fmt.Errorf("%s does not serve the %s workload", impl, w)
	}
	switch impl {
	case "bare":
		return bare{sse: w == Session, modern: w == Modern}, func() {}, nil
	case "mcpkit":
		h := mcpkit(w, mcphttp.Options{})
		return h, func() { _ = h.Close() }, nil
	case "mcpkit-redis":
		if cfg.RedisURL == "" {
			return nil, nil, errors.New("mcpkit-redis needs a Redis URL")
		}
		rdb, err := redisstore.NewClient(cfg.RedisURL)
		if err != nil {
			return nil, nil, err
		}
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			_ = rdb.Close()
			return nil, nil, fmt.Errorf("mcpkit-redis: %w", err)
		}
		return mcpkitRedis(w, rdb)
	case "go-sdk":
		s := gosdk.NewServer(&gosdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
		gosdk.AddTool(s, &gosdk.Tool{Name: "echo", Description: "Echoes its text."},
			func(_ context.Context, _ *gosdk.CallToolRequest, in EchoIn) (*gosdk.CallToolResult, EchoOut, error) {
				return nil, EchoOut(in), nil
			})
		h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
			&gosdk.StreamableHTTPOptions{Stateless: w != Session, JSONResponse: w != Session})
		return h, func() {}, nil
	default: // mcp-go
		s := mcpgoserver.NewMCPServer("bench", "1.0.0", mcpgoserver.WithToolCapabilities(false))
		s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its text."),
			mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo"))),
			mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, error) {
				b, _ := json.Marshal(EchoOut(in))
				return mcp.NewToolResultStructured(EchoOut(in), string(b)), nil
			}))
		h := mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(w != Session))
		return h, func() {}, nil
	}
}

// mcpkit is the kit's default stack over the echo server, with opts (Stateless and
// JSONResponse set by the workload; a modern request answers JSON unless notifications flow).
func mcpkit(w Workload, opts mcphttp.Options) *mcphttp.Handler {
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1.0.0"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *core.ToolRequest, in EchoIn) (*core.CallToolResult, EchoOut, error) {
			return nil, EchoOut(in), nil
		})
	nop := zerolog.Nop()
	opts.Stateless, opts.JSONResponse, opts.Logger = w != Session, w == Stateless, &nop
	return mcphttp.New(s, opts)
}

// mcpkitRedis is mcpkit with its sessions in Redis, as a replica of several keeps them.
func mcpkitRedis(w Workload, rdb *redis.Client) (http.Handler, func(), error) {
	nop := zerolog.Nop()
	router := redisstore.NewRouter(rdb, redisstore.Options{Prefix: "mcpkit-bench:", Logger: &nop})
	h := mcpkit(w, mcphttp.Options{Store: redisstore.NewSessions(router, redisstore.SessionsOptions{})})
	return h, func() {
		_ = h.Close()
		_ = router.Close()
		_ = rdb.Close()
	}, nil
}

// bare is the floor: it decodes the JSON-RPC request and its arguments with encoding/json and
// encodes the same result the others send, as JSON or as one SSE event.
type bare struct{ sse, modern bool }

type bareRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		Arguments EchoIn `json:"arguments"`
	} `json:"params"`
}

type bareContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type bareResult struct {
	ResultType        string        `json:"resultType,omitempty"` // "complete" on 2026-07-28
	Content           []bareContent `json:"content"`
	StructuredContent EchoOut       `json:"structuredContent"`
}

type bareResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  bareResult      `json:"result"`
}

func (b bare) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	var req bareRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if b.sse && b.session(w, r, &req) {
		return
	}
	if req.Method != "tools/call" || req.Params.Name != "echo" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	text, _ := json.Marshal(EchoOut(req.Params.Arguments))
	res := bareResult{
		Content:           []bareContent{{Type: "text", Text: string(text)}},
		StructuredContent: EchoOut(req.Params.Arguments),
	}
	if b.modern {
		res.ResultType = "complete"
	}
	out, _ := json.Marshal(bareResponse{JSONRPC: "2.0", ID: req.ID, Result: res})
	if b.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\ndata: ")
		_, _ = w.Write(out)
		_, _ = io.WriteString(w, "\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// session answers what opens a session (initialize, then the initialized notification) and
// refuses a call without the session id; it reports whether it answered.
func (bare) session(w http.ResponseWriter, r *http.Request, req *bareRequest) bool {
	switch {
	case req.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", bareSession)
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1.0.0"}}}`, req.ID)
	case r.Header.Get("Mcp-Session-Id") != bareSession:
		http.Error(w, "unknown session", http.StatusNotFound)
	case req.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	default:
		return false
	}
	return true
}

const bareSession = "bare-session"
