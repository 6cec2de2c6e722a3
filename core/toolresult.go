package core

import (
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// finishToolResult prepares a tool's result for the wire: structured content encoded once and
// checked against the output schema, with a text copy for clients that do not read it. The
// handler's result is never changed: a handler may hand out the same result to concurrent calls.
// req is the request the handler was given, which may hold storage for the wire form.
func finishToolResult(s *Server, e *toolEntry, name string, res *CallToolResult, req *ToolRequest) (any, error) {
	// A tool that declares an output schema must send structured content that conforms on every
	// successful result (an isError result is exempt).
	noOutput := func() (*CallToolResult, error) {
		s.logError(fmt.Errorf("mcpkit: tool %q declares an output schema but returned no structured content", name))
		return nil, jsonrpc.InternalError("Internal error calling tool " + name)
	}
	if res == nil {
		if e.output != nil {
			return noOutput()
		}
		return &CallToolResult{Content: []Content{}}, nil
	}
	if res.StructuredContent == nil {
		if e.output != nil && !res.IsError {
			return noOutput()
		}
		return res, nil
	}
	w := req.takeWire()
	*w = toolWire{res: res, scratch: getScratch()}
	var sc []byte
	var merr error
	encoded := false
	if e.typed.encode != nil {
		sc, encoded = e.typed.encode((*w.scratch)[:0], res.StructuredContent)
	}
	if !encoded {
		sc, merr = appendJSON((*w.scratch)[:0], res.StructuredContent)
	}
	*w.scratch = sc[:0] // the buffer as it grew, handed back by release
	if merr != nil {
		w.release()
		s.logError(fmt.Errorf("mcpkit: tool %q: encoding structured content: %w", name, merr))
		return nil, jsonrpc.InternalError("Internal error calling tool " + name)
	}
	switch jsontext.Value(sc).Kind() {
	case 'n':
		w.release() // a nil pointer: no structured output
		if e.output != nil && !res.IsError {
			return noOutput()
		}
		return w, nil
	case '{':
		if e.output != nil && !res.IsError && !(encoded && e.typed.conforms) {
			if msg := e.checkOutput(sc); msg != "" {
				w.release()
				s.logError(fmt.Errorf("mcpkit: tool %q returned structured content that does not match its output schema: %s", name, msg))
				return nil, jsonrpc.InternalError("Internal error calling tool " + name)
			}
		}
		w.structured = sc // encoded once, sent as is
	}
	// structuredContent must be an object: a list or a scalar is sent as text only.
	if len(res.Content) == 0 {
		w.text = sc // a client that does not read structuredContent still sees the value
	}
	if w.structured == nil && w.text == nil {
		w.release()
	}
	return w, nil
}

// toolWire is a tool result ready for the wire: the handler's result as it returned it and its
// structured content, encoded once and checked, in a pooled buffer until the response is written.
type toolWire struct {
	res *CallToolResult
	// structured is the structuredContent member (nil for none); text, when set, is sent as the
	// one text block of content (the result had none of its own).
	structured, text []byte
	scratch          *[]byte
}

// release hands the buffer back once the result is written; the result then carries no
// structured content any more.
func (w *toolWire) release() {
	if w.scratch != nil {
		putScratch(w.scratch)
		w.scratch, w.structured, w.text = nil, nil, nil
	}
}

// MarshalJSON encodes the result for whoever keeps it beyond the response (a task's result).
func (w *toolWire) MarshalJSON() ([]byte, error) { return w.appendTo(nil, nil) }

// appendTo appends the result as a CallToolResult encodes, with structured content and the text
// copy as finishToolResult settled them. With info (the server's identity, on the 2026-07-28
// lifecycle) it also writes the members stampModern adds, in the same pass and the same places.
func (w *toolWire) appendTo(dst, info []byte) ([]byte, error) {
	r := w.res
	dst = append(dst, '{')
	if info != nil && r.ResultType == "" {
		dst = append(dst, `"resultType":"complete",`...)
	}
	if info != nil && r.Meta == nil {
		dst = append(appendServerInfo(dst, info), ',')
	}
	dst = append(dst, `"content":`...)
	var err error
	if w.text != nil {
		dst = append(dst, `[{"type":"text","text":`...)
		dst, _ = jsontext.AppendQuote(dst, w.text) // valid UTF-8: the encoder made it
		dst = append(dst, "}]"...)
	} else if dst, err = appendJSON(dst, &r.Content); err != nil {
		return dst, err
	}
	if w.structured != nil {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, w.structured...)
	}
	dst = append(dst, `,"isError":`...)
	dst = strconv.AppendBool(dst, r.IsError)
	if r.Meta != nil {
		dst = append(dst, `,"_meta":`...)
		if dst, err = appendMeta(dst, r.Meta, info); err != nil {
			return dst, err
		}
	}
	if r.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendString(dst, r.ResultType)
	}
	return append(dst, '}'), nil
}

// appendMeta appends a _meta object; with info, the server's identity goes first unless the
// handler put one there.
func appendMeta(dst []byte, meta Meta, info []byte) ([]byte, error) {
	if _, has := meta[metakey.ServerInfo]; info == nil || has {
		return appendJSON(dst, &meta)
	}
	dst = append(dst, `{"`+metakey.ServerInfo+`":`...)
	dst = append(dst, info...)
	at := len(dst)
	dst, err := appendJSON(dst, &meta)
	if err != nil {
		return dst, err
	}
	if dst[at+1] == '}' { // the handler's _meta is empty
		return append(dst[:at], '}'), nil
	}
	dst[at] = ','
	return dst, nil
}

// checkOutput checks encoded structured content against the output schema: the quick check
// first, the full validator (which words the problem) when it does not settle it.
func (e *toolEntry) checkOutput(sc []byte) string {
	if e.quickOut.Valid(sc) {
		return ""
	}
	return schema.Validate(e.output, sc)
}
