package core_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// An error reads the same built in Go and received: data a string or a JSON string as its text,
// other data as compact JSON, nothing for no data, null, or data that repeats the message.
func TestErrorString(t *testing.T) {
	const head = "jsonrpc error -32602: Invalid params"
	for _, tt := range []struct {
		name string
		data any
		want string
	}{
		{"no data", nil, head},
		{"a string", "Tool not found: nope", head + ": Tool not found: nope"},
		{"a JSON string", json.RawMessage(`"Tool not found: nope"`), head + ": Tool not found: nope"},
		{"a JSON string with escapes", json.RawMessage(`"a\u0062 \"c\""`), head + `: ab "c"`},
		{"an object", map[string]any{"b": 1, "a": []int{1}}, head + `: {"a":[1],"b":1}`},
		{"a JSON object", json.RawMessage(` {"b": 1,
			"a": [1]} `), head + `: {"b":1,"a":[1]}`},
		{"a number", json.RawMessage(`42`), head + ": 42"},
		{"null", json.RawMessage(`null`), head},
		{"the message again", "Invalid params", head},
		{"the message again, as JSON", json.RawMessage(`"Invalid params"`), head},
		{"empty string", "", head},
		{"not encodable", make(chan int), head},
	} {
		e := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params", Data: tt.data}
		if got := e.Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Decoding an error object keeps data raw, as the codec does for a response's error.
func TestErrorUnmarshalKeepsDataRaw(t *testing.T) {
	var e jsonrpc.Error
	if err := json.Unmarshal([]byte(`{"code":-32602,"message":"Invalid params","data":{"x":"y"}}`), &e); err != nil {
		t.Fatal(err)
	}
	if raw, ok := e.Data.(json.RawMessage); !ok || string(raw) != `{"x":"y"}` || e.Code != -32602 || e.Message != "Invalid params" {
		t.Fatalf("decoded %#v", e)
	}
	if err := json.Unmarshal([]byte(`{"code":1,"message":"m"}`), &e); err != nil || e.Data != nil || e.Code != 1 {
		t.Fatalf("no data: %#v, %v", e, err)
	}
	if err := json.Unmarshal([]byte(`{"code":"x"}`), &e); err == nil {
		t.Fatal("a string code was accepted")
	}
}
