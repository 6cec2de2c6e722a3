package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/jsonbody"
	"github.com/mcpkit/mcpkit/internal/transport"
)

const (
	msgVersion = "JSON-RPC version must be 2.0"
	msgBadID   = "Request ID must be a string, an integer or null"
	msgMethod  = `Method name must be a string and not start with "rpc."`
	msgParams  = "Method parameters must be an array or an object or null"
)

// nested returns a ping request whose total nesting depth (the envelope counting as 1) is depth.
func nested(depth int) string {
	k := depth - 2 // the envelope and params
	return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}}`
}

// TestFraming covers every framing row of the reference catalogue (§2.3) and the strictness the
// kit adds: exact member names, no duplicate members, a nesting bound.
func TestFraming(t *testing.T) {
	c := newClient(t, newServer(nil))
	tests := []struct {
		name    string
		body    string
		id      string // the id the error must carry, as JSON
		code    int64
		message string
		data    any
	}{
		{"not JSON", `{"jsonrpc":"2.0",`, "null", -32700, "Parse error", "Invalid JSON"},
		{"garbage", `hello`, "null", -32700, "Parse error", "Invalid JSON"},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, "null", -32700, "Parse error", "Invalid JSON"},
		{"two objects", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, "null", -32700, "Parse error", "Invalid JSON"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", "null", -32700, "Parse error", "Invalid JSON"},
		{"duplicate method member", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`, "null", -32700, "Parse error", `Invalid JSON: duplicate member "method" at /method`},
		{"duplicate id member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "null", -32700, "Parse error", `Invalid JSON: duplicate member "id" at /id`},
		{"duplicate member inside params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1,"a":2}}`, "null", -32700, "Parse error", `Invalid JSON: duplicate member "a" at /params/a`},
		{"nesting 65", nested(65), "null", -32700, "Parse error", "Invalid JSON"},
		{"string top level", `"ping"`, "null", -32600, "Invalid Request", "Request must be an array or a hash"},
		{"number top level", `42`, "null", -32600, "Invalid Request", "Request must be an array or a hash"},
		{"null top level", `null`, "null", -32600, "Invalid Request", "Request must be an array or a hash"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, "1", -32600, "Invalid Request", msgVersion},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, "1", -32600, "Invalid Request", msgVersion},
		{"jsonrpc missing", `{"id":"a","method":"ping"}`, `"a"`, -32600, "Invalid Request", msgVersion},
		{"id float 1.0", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id float 1.5", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id beyond int64", `{"jsonrpc":"2.0","id":92233720368547758070,"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id boolean", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null", -32600, "Invalid Request", msgBadID},
		{"id lone surrogate escape", `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, "null", -32700, "Parse error", "Invalid JSON"},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":42}`, "1", -32600, "Invalid Request", msgMethod},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, "1", -32600, "Invalid Request", msgMethod},
		{"method empty", `{"jsonrpc":"2.0","id":1,"method":""}`, "1", -32600, "Invalid Request", msgMethod},
		{"method rpc. prefix", `{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`, "1", -32600, "Invalid Request", msgMethod},
		{"method missing", `{"jsonrpc":"2.0","id":1}`, "1", -32600, "Invalid Request", msgMethod},
		{"METHOD is not method", `{"jsonrpc":"2.0","id":1,"METHOD":"ping"}`, "1", -32600, "Invalid Request", msgMethod},
		{"Method is not method", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, "1", -32600, "Invalid Request", msgMethod},
		{"params string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, "1", -32602, "Invalid params", msgParams},
		{"params number", `{"jsonrpc":"2.0","id":1,"method":"ping","params":5}`, "1", -32602, "Invalid params", msgParams},
		{"params boolean", `{"jsonrpc":"2.0","id":1,"method":"ping","params":true}`, "1", -32602, "Invalid params", msgParams},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"foo/bar"}`, "1", -32601, "Method not found", "foo/bar"},
		{"notification method with id", `{"jsonrpc":"2.0","id":2,"method":"notifications/initialized"}`, "2", -32601, "Method not found", "notifications/initialized"},
		{"cancel sent with id", `{"jsonrpc":"2.0","id":"c1","method":"notifications/cancelled","params":{"requestId":1}}`, `"c1"`, -32601, "Method not found", "notifications/cancelled"},
		{"response with result and error", `{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`, "3", -32600, "Invalid Request", "Response must carry exactly one of result or error"},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, "null", -32600, "Invalid Request", "Response must carry exactly one of result or error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := c.send(tt.body)
			wantError(t, w, tt.code, tt.message, tt.data)
			if string(w.ID) != tt.id {
				t.Errorf("id = %s, want %s", w.ID, tt.id)
			}
		})
	}
}

// TestFramingAccepted lists messages that must be served, and what ping answers.
func TestFramingAccepted(t *testing.T) {
	c := newClient(t, newServer(nil))
	tests := []struct {
		name, body, id string
	}{
		{"integer id", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "7"},
		{"zero id", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, "0"},
		{"negative id", `{"jsonrpc":"2.0","id":-12,"method":"ping"}`, "-12"},
		{"large id", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "9007199254740993"},
		{"string id", `{"jsonrpc":"2.0","id":"Az09_-","method":"ping"}`, `"Az09_-"`},
		// Any string is an id (JSON-RPC 2.0, RequestId = string | integer), echoed as sent.
		{"empty string id", `{"jsonrpc":"2.0","id":"","method":"ping"}`, `""`},
		{"id with colon", `{"jsonrpc":"2.0","id":"listen:0","method":"ping"}`, `"listen:0"`},
		{"id with dot and space", `{"jsonrpc":"2.0","id":"a. b","method":"ping"}`, `"a. b"`},
		{"non-ASCII id", `{"jsonrpc":"2.0","id":"zażółć 日本 😀","method":"ping"}`, `"zażółć 日本 😀"`},
		{"punctuation id", `{"jsonrpc":"2.0","id":"{}[],:'<>&=+%#@!?*~^|$","method":"ping"}`, `"{}[],:'<>&=+%#@!?*~^|$"`},
		{"escaped id echoed as sent", `{"jsonrpc":"2.0","id":"\u0041\/\t\"\\","method":"ping"}`, `"\u0041\/\t\"\\"`},
		{"escaped surrogate pair", `{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}`, `"\ud83d\ude00"`},
		{"escaped control character", `{"jsonrpc":"2.0","id":"a\u0000b","method":"ping"}`, `"a\u0000b"`},
		{"id that looks like a number", `{"jsonrpc":"2.0","id":"1","method":"ping"}`, `"1"`},
		{"id that looks like null", `{"jsonrpc":"2.0","id":"null","method":"ping"}`, `"null"`},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, "1"},
		{"empty params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`, "1"},
		{"escaped member name", `{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`, "1"},
		{"case variant members are ignored", `{"jsonrpc":"2.0","id":1,"method":"ping","Params":"bad","ID":"x.y"}`, "1"},
		{"unknown members are ignored", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":[1,2]}`, "1"},
		{"whitespace around", " \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n", "1"},
		{"nesting 64", nested(64), "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := c.send(tt.body)
			if w.Error != nil || string(w.Result) != "{}" {
				t.Fatalf("want {} result, got %s", w)
			}
			if string(w.ID) != tt.id {
				t.Errorf("id = %s, want %s", w.ID, tt.id)
			}
		})
	}
}

// TestNotificationsNeverAnswered: a message without an id gets no reply, even when it is wrong.
func TestNotificationsNeverAnswered(t *testing.T) {
	srv := newServer(nil)
	ran := false
	srv.AddTool(&core.Tool{Name: "t"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		ran = true
		return core.TextResult("ran"), nil
	})
	c := newClient(t, srv)
	for _, b := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/unknown","params":{"x":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"bad"}`,
		`{"jsonrpc":"1.0","method":"notifications/initialized"}`,
		`{"method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"rpc.notify"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping","params":7}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"no.such"}}`,
		`{"jsonrpc":"2.0","method":"no/such/method"}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	} {
		if got := c.reply(b); got != nil {
			t.Errorf("%s was answered: %s", b, got)
		}
	}
	if ran {
		t.Error("a request method sent as a notification ran its handler")
	}
	if msgs := c.out.all(t); len(msgs) != 0 {
		t.Errorf("messages were sent: %v", msgs)
	}
}

func TestDecodeMessageShapes(t *testing.T) {
	m, derr := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"x"}}`))
	if derr != nil {
		t.Fatal(derr)
	}
	if !m.IsRequest() || m.IsNotification() || m.IsResponse() || m.Method != "tools/call" || m.ID != jsonrpc.StringID("q") || string(m.Params) != `{"name":"x"}` {
		t.Errorf("request decoded as %+v", m)
	}
	m, derr = transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":[1]}`))
	if derr != nil || !m.IsNotification() || string(m.Params) != "[1]" {
		t.Errorf("notification decoded as %+v, %v", m, derr)
	}
	m, derr = transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":5,"result":{"ok":true}}`))
	if derr != nil || !m.IsResponse() || m.ID != jsonrpc.IntID(5) || string(m.Result) != `{"ok":true}` {
		t.Errorf("response decoded as %+v, %v", m, derr)
	}
	m, derr = transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":6,"error":{"code":-32000,"message":"nope","data":{"k":1}}}`))
	if derr != nil || m.Error == nil || m.Error.Code != -32000 || m.Error.Message != "nope" || string(m.Error.Data.(json.RawMessage)) != `{"k":1}` {
		t.Errorf("error response decoded as %+v, %v", m, derr)
	}
	// The message does not alias the input: transports reuse their buffers.
	in := []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"b"}}`)
	m, _ = transport.Core.DecodeMessage(in)
	copy(in, strings.Repeat("#", len(in)))
	if string(m.Params) != `{"a":"b"}` || m.Method != "x" {
		t.Errorf("message changed with its input buffer: %+v", m)
	}
}

func TestDecodeBatch(t *testing.T) {
	items, derr := transport.Core.DecodeBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5, {"jsonrpc":"1.0","id":2,"method":"ping"}, [], {"jsonrpc":"2.0","method":"notifications/initialized"}]`))
	if derr != nil {
		t.Fatal(derr)
	}
	if len(items) != 5 {
		t.Fatalf("%d items", len(items))
	}
	if items[0].Msg == nil || !items[0].Msg.IsRequest() {
		t.Errorf("item 0: %+v", items[0])
	}
	for i, want := range map[int]string{1: "Request must be an object", 2: msgVersion, 3: "Request must be an object"} {
		if items[i].Err == nil || items[i].Err.Err.Data != want {
			t.Errorf("item %d: %+v, want %q", i, items[i], want)
		}
	}
	if items[2].Err.ID != jsonrpc.IntID(2) {
		t.Errorf("item 2 lost its id: %+v", items[2].Err)
	}
	if items[4].Msg == nil || !items[4].Msg.IsNotification() {
		t.Errorf("item 4: %+v", items[4])
	}
	for body, want := range map[string]string{
		`[]`:              "Request is an empty array",
		` [ ] `:           "Request is an empty array",
		`[1,`:             "Invalid JSON",
		`"x"`:             "Request must be an array or a hash",
		`[{"a":1,"a":1}]`: `Invalid JSON: duplicate member "a" at /0/a`,
	} {
		_, err := transport.Core.DecodeBatch([]byte(body))
		var derr *jsonrpc.DecodeError
		if !errors.As(err, &derr) || derr.Err.Data != want || derr.ID.IsValid() {
			t.Errorf("DecodeBatch(%s) = %+v, want %q", body, err, want)
		}
	}
}

func TestCheckJSONAndBodyKind(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		kind int
	}{
		{`{}`, true, jsonbody.Object},
		{` [1] `, true, jsonbody.Array},
		{`"s"`, true, jsonbody.Other},
		{`{"a":"[[[[\"{"}`, true, jsonbody.Object}, // brackets inside strings do not nest
		{`{`, false, jsonbody.Invalid},
		{`{"a":1,"a":2}`, false, jsonbody.Invalid},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), true, jsonbody.Array},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), false, jsonbody.Invalid},
	}
	for _, tt := range tests {
		if got := jsonbody.Valid([]byte(tt.in)); got != tt.ok {
			t.Errorf("CheckJSON(%.40s) = %v", tt.in, got)
		}
		if got := jsonbody.Kind([]byte(tt.in)); got != tt.kind {
			t.Errorf("BodyKind(%.40s) = %v, want %v", tt.in, got, tt.kind)
		}
	}
}

func TestEncoding(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"result", transport.Core.EncodeResponse(jsonrpc.IntID(3), []byte(`{"a":1}`)), `{"jsonrpc":"2.0","id":3,"result":{"a":1}}`},
		{"error with data", transport.Core.EncodeError(jsonrpc.StringID("x-1"), jsonrpc.InvalidParams("Tool not found: \"q\"")),
			`{"jsonrpc":"2.0","id":"x-1","error":{"code":-32602,"message":"Invalid params","data":"Tool not found: \"q\""}}`},
		{"error without data", transport.Core.EncodeError(jsonrpc.ID{}, &jsonrpc.Error{Code: -32603, Message: "Internal error"}),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`},
		{"error with object data", transport.Core.EncodeError(jsonrpc.IntID(1), core.ResourceNotFound("file:///a<b>")),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Resource not found: file:///a<b>","data":{"uri":"file:///a<b>"}}}`},
		{"error with raw data", transport.Core.EncodeError(jsonrpc.IntID(1), &jsonrpc.Error{Code: 1, Message: "m", Data: json.RawMessage(`[1,2]`)}),
			`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":[1,2]}}`},
		{"odd string id is still JSON", transport.Core.EncodeResponse(jsonrpc.StringID("a\x7f\"b"), []byte(`{}`)), `{"jsonrpc":"2.0","id":"a\u007f\"b","result":{}}`},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want && !(tt.name == "odd string id is still JSON" && jsontext.Value(tt.got).IsValid()) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, tt.got, tt.want)
		}
		if !jsontext.Value(tt.got).IsValid() {
			t.Errorf("%s: invalid JSON %s", tt.name, tt.got)
		}
	}
	n, err := transport.Core.EncodeNotification("notifications/progress", map[string]any{"progress": 1})
	if err != nil || string(n) != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` {
		t.Errorf("notification: %s %v", n, err)
	}
	n, err = transport.Core.EncodeNotification("notifications/tools/list_changed", nil)
	if err != nil || string(n) != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("notification without params: %s %v", n, err)
	}
	r, err := transport.Core.EncodeRequest(jsonrpc.StringID("s1"), "roots/list", nil)
	if err != nil || string(r) != `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}` {
		t.Errorf("request: %s %v", r, err)
	}
	if _, err := transport.Core.EncodeNotification("x", func() {}); err == nil {
		t.Error("unencodable params were accepted")
	}
}

// The decoders return a plain error: nil on success (never a typed nil pointer that compares
// unequal to nil), a *DecodeError or *Error reached with errors.As otherwise.
func TestDecodersReturnUntypedNilOnSuccess(t *testing.T) {
	var err error
	_, err = transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatalf("DecodeMessage: err = %#v, want nil", err)
	}
	_, err = transport.Core.DecodeBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))
	if err != nil {
		t.Fatalf("DecodeBatch: err = %#v, want nil", err)
	}
	m, _ := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if _, err = transport.Core.ParseEnvelope(m); err != nil {
		t.Fatalf("ParseEnvelope: err = %#v, want nil", err)
	}
	m, _ = transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`))
	var e *jsonrpc.Error
	if _, err = transport.Core.ParseEnvelope(m); !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("ParseEnvelope without an envelope: err = %v, want a *jsonrpc.Error -32602", err)
	}
	_, err = transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":1}`))
	var derr *jsonrpc.DecodeError
	if !errors.As(err, &derr) || derr.ID != jsonrpc.IntID(7) {
		t.Fatalf("DecodeMessage of a bad message: err = %v, want a *jsonrpc.DecodeError echoing id 7", err)
	}
}
