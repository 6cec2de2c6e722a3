package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/core"
)

// The tools interop clients need beyond the conformance scenarios: a slow call to cancel, a way
// to ask whether the server saw the cancellation, a count of the roots-changed notifications
// it received, and triggers for the change notifications
// (list changes, resource updates), which reach legacy sessions directly and 2026-07-28 clients
// through subscriptions/listen.

// SlowInput is the interop_slow tool's arguments.
type SlowInput struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"how long to run before answering (default 30, at most 120)"`
}

// TriggerListInput is the interop_trigger_list_changed tool's arguments.
type TriggerListInput struct {
	List string `json:"list" jsonschema:"which list changed: tools, prompts or resources"`
}

// TriggerResourceInput is the interop_trigger_resource_updated tool's arguments.
type TriggerResourceInput struct {
	URI string `json:"uri,omitempty" jsonschema:"the URI of the updated resource (default test://watched-resource)"`
}

// rootsChanges counts the notifications/roots/list_changed a server received, for its
// interop_roots_changed tool.
type rootsChanges struct{ n atomic.Int64 }

// seen is the server's Options.OnRootsListChanged.
func (r *rootsChanges) seen(context.Context, *core.Session) { r.n.Add(1) }

// cancellations remembers how the last interop_slow call ended.
type cancellations struct {
	mu   sync.Mutex
	last string
}

func (c *cancellations) set(s string) {
	c.mu.Lock()
	c.last = s
	c.mu.Unlock()
}

func (c *cancellations) get() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == "" {
		return "none"
	}
	return c.last
}

func addInteropTools(s *core.Server, roots *rootsChanges) {
	var seen cancellations
	core.AddTool(s, &core.Tool{Name: "interop_slow", Description: "Runs for a while (reporting progress each second when asked), or until cancelled."},
		func(ctx context.Context, req *core.ToolRequest, in SlowInput) (*core.CallToolResult, struct{}, error) {
			d := time.Duration(min(max(in.Seconds, 0), 120) * float64(time.Second))
			if in.Seconds == 0 {
				d = 30 * time.Second
			}
			seen.set("running")
			timer := time.NewTimer(d)
			defer timer.Stop()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for step := 1; ; step++ {
				select {
				case <-timer.C:
					seen.set("finished")
					return core.TextResult(fmt.Sprintf("finished after %v", d)), struct{}{}, nil
				case <-tick.C:
					_ = req.Progress(float64(step), d.Seconds(), "working")
				case <-ctx.Done():
					if req.Cancelled() {
						seen.set("cancelled by the client")
					} else {
						seen.set(fmt.Sprintf("ended: %v", context.Cause(ctx)))
					}
					return nil, struct{}{}, ctx.Err()
				}
			}
		})
	s.AddTool(&core.Tool{Name: "interop_last_cancellation", Description: "Says how the last interop_slow call ended: none, running, finished, cancelled by the client, or ended (and why).", InputSchema: noArgs},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult(seen.get()), nil
		})
	s.AddTool(&core.Tool{Name: "interop_roots_changed", Description: "Says how many notifications/roots/list_changed the server has received.", InputSchema: noArgs},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult(strconv.FormatInt(roots.n.Load(), 10)), nil
		})
	core.AddTool(s, &core.Tool{Name: "interop_trigger_list_changed", Description: "Announces that a list changed (tools, prompts or resources)."},
		func(ctx context.Context, _ *core.ToolRequest, in TriggerListInput) (*core.CallToolResult, struct{}, error) {
			var err error
			switch in.List {
			case "tools":
				err = s.NotifyToolsListChanged(ctx)
			case "prompts":
				err = s.NotifyPromptsListChanged(ctx)
			case "resources":
				err = s.NotifyResourcesListChanged(ctx)
			default:
				return core.ErrorResult("list must be tools, prompts or resources"), struct{}{}, nil
			}
			if err != nil {
				return nil, struct{}{}, err
			}
			return core.TextResult(in.List + " list changed"), struct{}{}, nil
		})
	core.AddTool(s, &core.Tool{Name: "interop_trigger_resource_updated", Description: "Announces that a resource was updated (test://watched-resource by default)."},
		func(ctx context.Context, _ *core.ToolRequest, in TriggerResourceInput) (*core.CallToolResult, struct{}, error) {
			uri := in.URI
			if uri == "" {
				uri = "test://watched-resource"
			}
			if err := s.NotifyResourceUpdated(ctx, uri); err != nil {
				return nil, struct{}{}, err
			}
			return core.TextResult(uri + " updated"), struct{}{}, nil
		})
}
