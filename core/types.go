package core

import (
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Meta is the `_meta` object of a request, result or notification.
type Meta map[string]any

// Icon is an icon a client may show for a server, tool, prompt or resource.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitzero"`
	Sizes    []string `json:"sizes,omitzero"`
	Theme    string   `json:"theme,omitzero"`
}

// Implementation names a server or client.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Version     string `json:"version"`
	Description string `json:"description,omitzero"`
	Icons       []Icon `json:"icons,omitzero"`
	WebsiteURL  string `json:"websiteUrl,omitzero"`
}

// ListChangedCapability is a capability that may announce list changes.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourcesCapability describes the server's resources support.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitzero"`
	ListChanged bool `json:"listChanged,omitzero"`
}

// ServerCapabilities is what the server offers. A nil member is not offered.
type ServerCapabilities struct {
	Experimental map[string]any         `json:"experimental,omitzero"`
	Extensions   map[string]any         `json:"extensions,omitzero"`
	Logging      *struct{}              `json:"logging,omitzero"`
	Completions  *struct{}              `json:"completions,omitzero"`
	Prompts      *ListChangedCapability `json:"prompts,omitzero"`
	Resources    *ResourcesCapability   `json:"resources,omitzero"`
	Tools        *ListChangedCapability `json:"tools,omitzero"`
}

// ClientCapabilities is what a client declared, kept as decoded JSON so that nothing the client
// said is lost. Use Has to test a capability path.
type ClientCapabilities map[string]any

// Has reports whether the capability at path was declared (present and not null), e.g.
// Has("sampling"), Has("elicitation", "url").
func (c ClientCapabilities) Has(path ...string) bool {
	var cur any = map[string]any(c)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		v, ok := m[p]
		if !ok || v == nil {
			return false
		}
		cur = v
	}
	return true
}

// Annotations are hints about content for the client.
type Annotations struct {
	Audience     []string `json:"audience,omitzero"`
	Priority     *float64 `json:"priority,omitzero"`
	LastModified string   `json:"lastModified,omitzero"`
}

// Content is one content block of a tool result, prompt message or sampling message. Type is
// "text", "image", "audio", "resource_link" or "resource"; build one with the constructors
// (Text, Image, Audio, Link, Embedded).
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitzero"`
	Data        string            `json:"data,omitzero"`
	MimeType    string            `json:"mimeType,omitzero"`
	Resource    *ResourceContents `json:"resource,omitzero"`
	URI         string            `json:"uri,omitzero"`
	Name        string            `json:"name,omitzero"`
	Title       string            `json:"title,omitzero"`
	Description string            `json:"description,omitzero"`
	Size        *int64            `json:"size,omitzero"`
	Icons       []Icon            `json:"icons,omitzero"`
	Annotations *Annotations      `json:"annotations,omitzero"`
	Meta        Meta              `json:"_meta,omitzero"`
}

// Text returns a text content block (the specification's TextContent).
func Text(text string) Content {
	// A text block always carries its text, even when empty.
	return Content{Type: "text", Text: text}
}

// Image returns an image content block with base64 data (ImageContent).
func Image(base64Data, mimeType string) Content {
	return Content{Type: "image", Data: base64Data, MimeType: mimeType}
}

// Audio returns an audio content block with base64 data (AudioContent).
func Audio(base64Data, mimeType string) Content {
	return Content{Type: "audio", Data: base64Data, MimeType: mimeType}
}

// Embedded returns a content block that embeds resource contents (EmbeddedResource).
func Embedded(r ResourceContents) Content {
	return Content{Type: "resource", Resource: &r}
}

// Link returns a content block that links to a resource by URI (ResourceLink).
func Link(uri, name string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name}
}

// contentPlain is Content without its methods, for the default encoding.
type contentPlain Content

// MarshalJSON keeps "text" on text blocks even when it is empty.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Type == "text" && c.Text == "" {
		return marshalWith(contentPlain(c), "text", `""`)
	}
	return marshal(contentPlain(c))
}

// MarshalJSONTo is MarshalJSON writing straight to an encoder. It is a codec hook, not API to
// call: the JSON codec the kit encodes with (github.com/go-json-experiment/json) finds the method
// by its name and takes this fast path; the encoder type is that codec's, which appears in no
// other exported signature of the kit.
func (c *Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.Type == "text" && c.Text == "" {
		b, err := c.MarshalJSON()
		if err != nil {
			return err
		}
		return enc.WriteValue(b)
	}
	return jsonv2.MarshalEncode(enc, (*contentPlain)(c))
}

// ResourceContents is the contents of a resource: text or a base64 blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitzero"`
	Text     string `json:"text,omitzero"`
	Blob     string `json:"blob,omitzero"`
	Meta     Meta   `json:"_meta,omitzero"`
}

// resourceContentsPlain is ResourceContents without its methods, for the default encoding.
type resourceContentsPlain ResourceContents

// MarshalJSON writes "text" when there is no blob, so empty text stays a text resource.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	if r.Blob == "" && r.Text == "" {
		return marshalWith(resourceContentsPlain(r), "text", `""`)
	}
	return marshal(resourceContentsPlain(r))
}

// MarshalJSONTo is MarshalJSON writing straight to an encoder: a codec hook, like
// Content.MarshalJSONTo, which the kit's JSON codec finds by its name.
func (r *ResourceContents) MarshalJSONTo(enc *jsontext.Encoder) error {
	if r.Blob == "" && r.Text == "" {
		b, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		return enc.WriteValue(b)
	}
	return jsonv2.MarshalEncode(enc, (*resourceContentsPlain)(r))
}

// ToolAnnotations are hints about a tool's behaviour. Nil hints are left to the client's defaults.
type ToolAnnotations struct {
	Title           string `json:"title,omitzero"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool  `json:"destructiveHint,omitzero"`
	IdempotentHint  *bool  `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitzero"`
}

// Tool describes a tool. InputSchema (and OutputSchema when set) are JSON Schema 2020-12 objects;
// for typed tools they are derived from the Go types when left nil.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitzero"`
	Description  string           `json:"description,omitzero"`
	Icons        []Icon           `json:"icons,omitzero"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitzero"`
	Annotations  *ToolAnnotations `json:"annotations,omitzero"`
	// Execution declares how the tool runs (its task support, which the tasks extension,
	// ext/tasks, reads and checks); nil means a plain call.
	Execution *ToolExecution `json:"execution,omitzero"`
	Meta      Meta           `json:"_meta,omitzero"`
	// Visible, when set, decides per request whether the caller sees the tool (see Visibility):
	// hidden, it is left out of tools/list and answered as unknown. Nil shows it to every caller
	// Options.Visibility and the request's filters let through. It is never sent.
	Visible Visibility `json:"-"`
}

// ToolExecution describes how a tool runs: the execution member of a tool (2025-11-25 schema).
// Its zero value, like a nil Tool.Execution, is a plain call.
type ToolExecution struct {
	// TaskSupport says whether the tool may run as a task: "forbidden" (the default when empty),
	// "optional" or "required". Core sends it as it is; the tasks extension (ext/tasks) checks it
	// when the tool is registered and acts on it.
	TaskSupport string `json:"taskSupport,omitzero"`
}

// CallToolResult is the result of tools/call. IsError marks a tool-level failure the model should
// see (not a protocol error).
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitzero"`
	IsError           bool      `json:"isError"`
	Meta              Meta      `json:"_meta,omitzero"`
	modern
}

// ErrorResult returns a tool result with IsError set and one text block: a tool-level failure.
func ErrorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(text)}, IsError: true}
}

// TextResult returns a tool result with one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(text)}}
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Required    bool   `json:"required,omitzero"`
}

// Prompt describes a prompt template.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitzero"`
	Description string           `json:"description,omitzero"`
	Icons       []Icon           `json:"icons,omitzero"`
	Arguments   []PromptArgument `json:"arguments,omitzero"`
	Meta        Meta             `json:"_meta,omitzero"`
	// Visible, when set, decides per request whether the caller sees the prompt (see Visibility):
	// hidden, it is left out of prompts/list and answered as unknown. Nil shows it to every caller
	// Options.Visibility and the request's filters let through. It is never sent.
	Visible Visibility `json:"-"`
}

// PromptMessage is one message of a prompt result.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitzero"`
	Messages    []PromptMessage `json:"messages"`
	Meta        Meta            `json:"_meta,omitzero"`
	modern
}

// Resource describes a resource the server can read.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MimeType    string       `json:"mimeType,omitzero"`
	Size        *int64       `json:"size,omitzero"`
	Icons       []Icon       `json:"icons,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitzero"`
	// Visible, when set, decides per request whether the caller sees the resource (see Visibility):
	// hidden, it is left out of resources/list and answered as unknown. Nil shows it to every caller
	// Options.Visibility and the request's filters let through. It is never sent.
	Visible Visibility `json:"-"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI template of levels 1 to 3
// ({var}, {+path}, {?a,b}; see Server.AddResourceTemplate for what matches).
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MimeType    string       `json:"mimeType,omitzero"`
	Icons       []Icon       `json:"icons,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitzero"`
	// Visible, when set, decides per request whether the caller sees the template (see Visibility):
	// hidden, it is left out of resources/templates/list and answered as unknown. Nil shows it to every caller
	// Options.Visibility and the request's filters let through. It is never sent.
	Visible Visibility `json:"-"`
}

// ReadResourceResult is the result of resources/read. Contents must not be empty.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     Meta               `json:"_meta,omitzero"`
	cacheable
	modern
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
	Meta       Meta       `json:"_meta,omitzero"`
	modern
}

// Completion holds completion values: at most 100 are sent; HasMore tells the client there are more.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitzero"`
	HasMore bool     `json:"hasMore"`
}

// LoggingLevel is a syslog severity used by logging notifications.
type LoggingLevel string

// Logging levels, from least to most severe.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// severity returns the rank of a level (0 debug .. 7 emergency) or -1 for an unknown level.
func (l LoggingLevel) severity() int {
	switch l {
	case LevelDebug:
		return 0
	case LevelInfo:
		return 1
	case LevelNotice:
		return 2
	case LevelWarning:
		return 3
	case LevelError:
		return 4
	case LevelCritical:
		return 5
	case LevelAlert:
		return 6
	case LevelEmergency:
		return 7
	}
	return -1
}

// Valid reports whether l is one of the eight levels.
func (l LoggingLevel) Valid() bool { return l.severity() >= 0 }

// modern holds the members the 2026-07-28 lifecycle adds to every result; the dispatcher fills them
// on modern requests only.
type modern struct {
	ResultType string `json:"resultType,omitzero"`
}

// cacheable holds the SEP-2549 cache hints. A handler may set them on its result to override the
// server's defaults; on legacy requests they are sent only when set.
type cacheable struct {
	TTLMs      *int64 `json:"ttlMs,omitzero"`
	CacheScope string `json:"cacheScope,omitzero"`
}

// SetCache sets the cache hints of a cacheable result: how long (in milliseconds) a client may
// reuse it, and whether the cached copy may be shared ("public") or not ("private"; "" keeps
// the server's Options.CacheScope). It panics on a negative ttlMs or another scope: a hint that
// could never be honoured is a programming error.
func (c *cacheable) SetCache(ttlMs int64, scope string) {
	if ttlMs < 0 {
		panic("mcpkit: SetCache: ttlMs must not be negative")
	}
	if scope != "" && scope != "private" && scope != "public" {
		panic(fmt.Sprintf("mcpkit: SetCache: scope %q must be \"private\" or \"public\"", scope))
	}
	c.TTLMs = &ttlMs
	c.CacheScope = scope
}
