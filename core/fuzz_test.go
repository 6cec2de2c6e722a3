package core_test

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/jsonbody"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Fuzz targets of the codec. `go test` runs the seeds below every time; `make fuzz` explores
// from them for a while (FUZZTIME).

// codecSeeds are bodies a hostile client would try: each framing rule of JSON-RPC, duplicate
// members, deep nesting, odd numbers, strings and ids, and what is not JSON at all.
var codecSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"a","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x","data":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}`,
	`{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x"}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`,
	`{"jsonrpc":"2.0","id":"","method":"rpc.x"}`,
	`{"jsonrpc":"2.0","id":{},"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"e\u0063ho","\u0061rguments":{"a":[1,{"b":null}]},"_m\u0065ta":{"pr\u006fgressToken":"t","x":{}},"uri":5,"taskId":"t-1"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":null,"_meta":null}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`,
	`{"JSONRPC":"2.0","id":1,"method":"x"}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},1,[]]`,
	`[]`, `[1]`, `{}`, `null`, `"x"`, `1e999`, `-0`, `{"a":`, `{"a":"\u00"}`, "{\"a\":\"\xff\"}",
	strings.Repeat("[", 65) + strings.Repeat("]", 65),
	strings.Repeat(`{"a":`, 64) + "1" + strings.Repeat("}", 64),
	` {"jsonrpc":"2.0","id":1,"method":"x"} `,
	`{"jsonrpc":"2.0","id":1,"method":"x"}{"jsonrpc":"2.0","id":2,"method":"y"}`,
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range codecSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := transport.Core.DecodeMessage(data)
		if (m == nil) == (err == nil) {
			t.Fatalf("DecodeMessage(%q) = %v, %v: want exactly one", data, m, err)
		}
		if err != nil {
			// The error answer is always one valid JSON-RPC error object.
			derr := decodeError(t, err)
			wantJSONObject(t, transport.Core.EncodeError(derr.ID, derr.Err))
			return
		}
		if !jsonbody.Valid(data) {
			t.Fatalf("DecodeMessage accepted %q, which CheckJSON refuses", data)
		}
		if kinds := btoi(m.IsRequest()) + btoi(m.IsNotification()) + btoi(m.IsResponse()); kinds != 1 {
			t.Fatalf("%q decoded as %d kinds of message", data, kinds)
		}
		// Whatever id was accepted is echoed as valid JSON.
		wantJSONObject(t, transport.Core.EncodeError(m.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "x")))
		wantJSONObject(t, transport.Core.EncodeResponse(m.ID, []byte(`{}`)))
		wantParamsFields(t, m)
	})
}

// wantParamsFields checks that what the decoder picked out of params in its one pass (_meta,
// name, uri, taskId, arguments) is what a full decode of params finds.
func wantParamsFields(t *testing.T, m *jsonrpc.Message) {
	t.Helper()
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return
	}
	var p struct {
		Meta      jsontext.Value `json:"_meta"`
		Name      jsontext.Value `json:"name"`
		URI       jsontext.Value `json:"uri"`
		TaskID    jsontext.Value `json:"taskId"`
		Arguments jsontext.Value `json:"arguments"`
	}
	if err := jsonv2.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params %s: %v", m.Params, err)
	}
	args, nameString := core.MessageArguments(m)
	if string(args) != string(p.Arguments) {
		t.Fatalf("params %s: arguments %s, want %s", m.Params, args, p.Arguments)
	}
	if nameString != (p.Name.Kind() == '"') {
		t.Fatalf("params %s: name is a string: %v", m.Params, nameString)
	}
	for _, f := range []struct {
		raw jsontext.Value
		got string
	}{{p.Name, m.Name}, {p.URI, m.URI}, {p.TaskID, m.TaskID}} {
		var want string
		if f.raw.Kind() == '"' {
			_ = jsonv2.Unmarshal(f.raw, &want)
		}
		if f.got != want {
			t.Fatalf("params %s: got %q, want %q", m.Params, f.got, want)
		}
	}
	var meta map[string]jsontext.Value
	if p.Meta.Kind() == '{' {
		_ = jsonv2.Unmarshal(p.Meta, &meta)
	}
	got := map[string]jsontext.Value{}
	for k, v := range m.MetaMembers() {
		got[k] = jsontext.Value(v)
	}
	if len(meta) != len(got) {
		t.Fatalf("params %s: _meta %v, want %v", m.Params, got, meta)
	}
	for k, v := range meta {
		if string(got[k]) != string(v) || string(m.Meta(k)) != string(v) {
			t.Fatalf("params %s: _meta[%q] = %s (Meta %s), want %s", m.Params, k, got[k], m.Meta(k), v)
		}
	}
}

func FuzzDecodeBatch(f *testing.F) {
	for _, s := range codecSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := transport.Core.DecodeBatch(data)
		if err != nil {
			if items != nil {
				t.Fatalf("DecodeBatch(%q) returned items with an error", data)
			}
			derr := decodeError(t, err)
			wantJSONObject(t, transport.Core.EncodeError(derr.ID, derr.Err))
			return
		}
		if len(items) == 0 {
			t.Fatalf("DecodeBatch(%q) returned nothing and no error", data)
		}
		for i, it := range items {
			if (it.Msg == nil) == (it.Err == nil) {
				t.Fatalf("item %d of %q: message %v, error %v: want exactly one", i, data, it.Msg, it.Err)
			}
		}
	})
}

// FuzzCheckJSON checks the depth and shape check that guards every body: what it accepts is
// valid JSON (by encoding/json, an independent parser) nested at most jsonrpc.MaxNesting deep, and
// BodyKind agrees with the first token.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range codecSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ok := jsonbody.Valid(data)
		kind := jsonbody.Kind(data)
		if ok != (kind != jsonbody.Invalid) {
			t.Fatalf("CheckJSON %v but BodyKind %d for %q", ok, kind, data)
		}
		if !ok {
			return
		}
		if !stdjson.Valid(data) {
			t.Fatalf("CheckJSON accepted %q, which encoding/json refuses", data)
		}
		depth, first := stdDepth(t, data)
		if depth > jsonrpc.MaxNesting {
			t.Fatalf("CheckJSON accepted %q, nested %d deep", data, depth)
		}
		want := jsonbody.Other
		switch first {
		case '{':
			want = jsonbody.Object
		case '[':
			want = jsonbody.Array
		}
		if kind != want {
			t.Fatalf("BodyKind(%q) = %d, want %d", data, kind, want)
		}
	})
}

// stdDepth returns the deepest nesting of valid JSON and its first delimiter (0 for a scalar),
// by encoding/json's tokenizer.
func stdDepth(t *testing.T, data []byte) (int, byte) {
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	depth, deepest := 0, 0
	var first byte
	for i := 0; ; i++ {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest, first
		}
		if err != nil {
			t.Fatalf("encoding/json tokenizing %q: %v", data, err)
		}
		if d, isDelim := tok.(stdjson.Delim); isDelim {
			if i == 0 {
				first = byte(d)
			}
			switch d {
			case '{', '[':
				depth++
				deepest = max(deepest, depth)
			default:
				depth--
			}
		}
	}
}

// decodeError returns the *jsonrpc.DecodeError inside err; every decode failure is one.
func decodeError(t *testing.T, err error) *jsonrpc.DecodeError {
	t.Helper()
	var derr *jsonrpc.DecodeError
	if !errors.As(err, &derr) || derr.Err == nil {
		t.Fatalf("decode error %v (%T) is no *jsonrpc.DecodeError", err, err)
	}
	return derr
}

func wantJSONObject(t *testing.T, b []byte) {
	t.Helper()
	var v map[string]any
	if err := stdjson.Unmarshal(b, &v); err != nil {
		t.Fatalf("encoded answer %q is not a JSON object: %v", b, err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
