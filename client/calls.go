package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
)

// Ping checks that the server answers. The 2026-07-28 lifecycle has no ping: there it sends
// server/discover.
func (c *Client) Ping(ctx context.Context, opts ...CallOption) error {
	if c.modern {
		return c.call(ctx, "server/discover", map[string]any{}, nil, collect(opts))
	}
	return c.call(ctx, "ping", nil, nil, collect(opts))
}

// CallTool calls a tool. args is anything that encodes to a JSON object (a struct, a map,
// json.RawMessage); nil sends no arguments. A tool-level failure is a result with IsError set,
// not an error. On 2026-07-28 the tool's x-mcp-header arguments are mirrored into Mcp-Param-*
// headers (the tool list is fetched once when the tool is not known yet), input_required
// results are answered through the handlers, and a task result is awaited (see WithTask).
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*core.CallToolResult, error) {
	o := collect(opts)
	p := map[string]any{"name": name}
	if args != nil {
		raw, err := encodeArgs(args)
		if err != nil {
			return nil, fmt.Errorf("mcpkit/client: tools/call %s: %w", name, err)
		}
		p["arguments"] = raw
	}
	if c.modern {
		if err := c.knowTool(ctx, name); err != nil {
			return nil, err
		}
	}
	var res core.CallToolResult
	if err := c.call(ctx, "tools/call", p, &res, o); err != nil {
		return nil, err
	}
	if res.Content == nil {
		res.Content = []core.Content{}
	}
	return &res, nil
}

// encodeArgs encodes tool arguments, which must be a JSON object.
func encodeArgs(args any) (json.RawMessage, error) {
	var raw json.RawMessage
	switch a := args.(type) {
	case json.RawMessage:
		raw = a
	case []byte:
		raw = json.RawMessage(a)
	default:
		b, err := jsonv2.Marshal(args, jsonv2.Deterministic(true))
		if err != nil {
			return nil, fmt.Errorf("cannot encode arguments: %w", err)
		}
		raw = b
	}
	if v := jsontext.Value(raw); v.Kind() != '{' || !v.IsValid() {
		return nil, errors.New("arguments must be a JSON object")
	}
	return raw, nil
}

// ToolError is a tool result with IsError set, as an error (returned by CallToolAs).
type ToolError struct {
	Tool   string
	Result *core.CallToolResult
}

func (e *ToolError) Error() string {
	var texts []string
	for _, b := range e.Result.Content {
		if b.Type == "text" && b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	if len(texts) == 0 {
		return "mcpkit/client: tool " + e.Tool + " failed"
	}
	return "mcpkit/client: tool " + e.Tool + " failed: " + strings.Join(texts, "; ")
}

// CallToolAs calls a tool and decodes its structured output into Out (from structuredContent, or
// from a single text block holding JSON when the server sent no structured content). A result
// with IsError set is returned as a *ToolError; the raw result is returned in every case it
// exists.
func CallToolAs[Out any](ctx context.Context, c *Client, name string, args any, opts ...CallOption) (Out, *core.CallToolResult, error) {
	var out Out
	res, err := c.CallTool(ctx, name, args, opts...)
	if err != nil {
		return out, nil, err
	}
	if res.IsError {
		return out, res, &ToolError{Tool: name, Result: res}
	}
	var raw []byte
	if res.StructuredContent != nil {
		raw, err = jsonv2.Marshal(res.StructuredContent)
		if err != nil {
			return out, res, fmt.Errorf("mcpkit/client: tool %s: %w", name, err)
		}
	} else if len(res.Content) == 1 && res.Content[0].Type == "text" {
		raw = []byte(res.Content[0].Text)
	} else {
		return out, res, fmt.Errorf("mcpkit/client: tool %s returned no structured output", name)
	}
	if err := jsonv2.Unmarshal(raw, &out); err != nil {
		return out, res, fmt.Errorf("mcpkit/client: tool %s: structured output does not decode into %T: %w", name, out, err)
	}
	return out, res, nil
}

// list follows the cursors of a list method, yielding items until the last page, an error, or
// the caller stops.
func list[T any](c *Client, ctx context.Context, method, member string, o *callOpts, keep func(*T) bool) iter.Seq2[*T, error] {
	return listWith(c, ctx, method, nil, member, o, keep)
}

// listWith is list for a method whose requests carry params besides the cursor.
func listWith[T any](c *Client, ctx context.Context, method string, params map[string]any, member string, o *callOpts, keep func(*T) bool) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cursor := ""
		seen := map[string]bool{}
		for {
			items, next, err := listPage[T](c, ctx, method, params, member, cursor, o)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range items {
				if keep != nil && !keep(&items[i]) {
					continue
				}
				if !yield(&items[i], nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if seen[next] {
				yield(nil, fmt.Errorf("mcpkit/client: %s: the server repeated cursor %q", method, next))
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// listPage fetches the page of a list method at cursor ("" for the first) and returns its
// items and the next cursor ("" after the last page).
func listPage[T any](c *Client, ctx context.Context, method string, params map[string]any, member, cursor string, o *callOpts) (items []T, next string, err error) {
	p := maps.Clone(params)
	if p == nil {
		p = map[string]any{}
	}
	if cursor != "" {
		p["cursor"] = cursor
	}
	var raw json.RawMessage
	if err := c.call(ctx, method, p, &raw, o); err != nil {
		return nil, "", err
	}
	var res map[string]json.RawMessage
	if err := jsonv2.Unmarshal(raw, &res); err != nil {
		return nil, "", fmt.Errorf("mcpkit/client: %s: malformed result: %w", method, err)
	}
	if err := jsonv2.Unmarshal(res[member], &items); err != nil && len(res[member]) > 0 {
		return nil, "", fmt.Errorf("mcpkit/client: %s: malformed %s: %w", method, member, err)
	}
	if v, ok := res["nextCursor"]; ok && len(v) > 0 && string(v) != "null" {
		if jsonv2.Unmarshal(v, &next) != nil {
			return nil, "", fmt.Errorf("mcpkit/client: %s: malformed nextCursor", method)
		}
	}
	return items, next, nil
}

// ListTools iterates over the server's tools, following cursors. Tools whose x-mcp-header
// annotations are invalid are left out (a client must not call them).
func (c *Client) ListTools(ctx context.Context, opts ...CallOption) iter.Seq2[*core.Tool, error] {
	return list(c, ctx, "tools/list", "tools", collect(opts), c.noteTool)
}

// ListPrompts iterates over the server's prompts, following cursors.
func (c *Client) ListPrompts(ctx context.Context, opts ...CallOption) iter.Seq2[*core.Prompt, error] {
	return list[core.Prompt](c, ctx, "prompts/list", "prompts", collect(opts), nil)
}

// ListResources iterates over the server's resources, following cursors.
func (c *Client) ListResources(ctx context.Context, opts ...CallOption) iter.Seq2[*core.Resource, error] {
	return list[core.Resource](c, ctx, "resources/list", "resources", collect(opts), nil)
}

// ListResourceTemplates iterates over the server's resource templates, following cursors.
func (c *Client) ListResourceTemplates(ctx context.Context, opts ...CallOption) iter.Seq2[*core.ResourceTemplate, error] {
	return list[core.ResourceTemplate](c, ctx, "resources/templates/list", "resourceTemplates", collect(opts), nil)
}

// ReadResource reads a resource.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*core.ReadResourceResult, error) {
	var res core.ReadResourceResult
	if err := c.call(ctx, "resources/read", map[string]any{"uri": uri}, &res, collect(opts)); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt gets a prompt with its arguments (nil for none).
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*core.GetPromptResult, error) {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	var res core.GetPromptResult
	if err := c.call(ctx, "prompts/get", p, &res, collect(opts)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Complete asks for completions of an argument of a prompt or resource template. resolved
// holds arguments already chosen (nil for none).
func (c *Client) Complete(ctx context.Context, ref core.CompleteRef, arg core.CompleteArgument, resolved map[string]string, opts ...CallOption) (*core.CompleteResult, error) {
	p := map[string]any{"ref": ref, "argument": arg}
	if len(resolved) > 0 {
		p["context"] = map[string]any{"arguments": resolved}
	}
	var res core.CompleteResult
	if err := c.call(ctx, "completion/complete", p, &res, collect(opts)); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetLoggingLevel sets the threshold of the server's log messages (see Options.OnLog). On a
// legacy session it sends logging/setLevel; on 2026-07-28 every later request carries the level
// in its envelope (without one, servers send no log messages).
func (c *Client) SetLoggingLevel(ctx context.Context, level core.LoggingLevel) error {
	if !level.Valid() {
		return fmt.Errorf("mcpkit/client: %q is not a logging level", level)
	}
	if c.modern {
		c.mu.Lock()
		c.logLevel = level
		c.mu.Unlock()
		return nil
	}
	if err := c.call(ctx, "logging/setLevel", map[string]any{"level": level}, nil, nil); err != nil {
		return err
	}
	c.mu.Lock()
	c.logLevel = level // restored on a new session
	c.mu.Unlock()
	return nil
}

// Subscribe asks a legacy server for notifications/resources/updated of a resource; they reach
// Options.OnNotification. On 2026-07-28 use Listen with ResourceSubscriptions.
func (c *Client) Subscribe(ctx context.Context, uri string, opts ...CallOption) error {
	if c.modern {
		return fmt.Errorf("%w: resources/subscribe (use Listen)", ErrUnsupported)
	}
	if err := c.call(ctx, "resources/subscribe", map[string]any{"uri": uri}, nil, collect(opts)); err != nil {
		return err
	}
	c.mu.Lock()
	c.explicit[uri] = true
	c.mu.Unlock()
	return nil
}

// Unsubscribe ends a legacy resource subscription. While a Listen holds the same resource the
// server is not told (the listen still needs it); the subscription ends with the last holder.
func (c *Client) Unsubscribe(ctx context.Context, uri string, opts ...CallOption) error {
	if c.modern {
		return fmt.Errorf("%w: resources/unsubscribe (use Listen)", ErrUnsupported)
	}
	c.mu.Lock()
	delete(c.explicit, uri)
	held := c.uris[uri] > 0
	c.mu.Unlock()
	if held {
		return nil
	}
	return c.call(ctx, "resources/unsubscribe", map[string]any{"uri": uri}, nil, collect(opts))
}

// RootsChanged tells the server that the client's roots changed
// (notifications/roots/list_changed).
func (c *Client) RootsChanged(ctx context.Context) error {
	return c.notify(ctx, "notifications/roots/list_changed", nil)
}

// Call sends any request (a custom method, or an extension's) with params (nil for none) and
// decodes its result into res (a pointer; a *json.RawMessage receives it raw).
func (c *Client) Call(ctx context.Context, method string, params map[string]any, res any, opts ...CallOption) error {
	return c.call(ctx, method, params, res, collect(opts))
}
