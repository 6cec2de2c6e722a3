package jsonrpc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/wire"
)

func TestIDString(t *testing.T) {
	if s := jsonrpc.IntID(-4).String(); s != "-4" {
		t.Errorf("IntID = %s", s)
	}
	if s := jsonrpc.StringID("abc").String(); s != `"abc"` {
		t.Errorf("StringID = %s", s)
	}
	if s := (jsonrpc.ID{}).String(); s != "null" {
		t.Errorf("zero ID = %s", s)
	}
	var id jsonrpc.ID
	for _, bad := range []string{`1.5`, `true`, `{}`, `[]`, `"\ud800"`} {
		if err := id.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON accepted %s", bad)
		}
	}
	if err := id.UnmarshalJSON([]byte(`"a.b"`)); err != nil || id != jsonrpc.StringID("a.b") {
		t.Errorf("UnmarshalJSON(\"a.b\") = %v, %v", id, err)
	}
	// An escaped spelling is kept for the echo, and names the same request as the plain one.
	if err := id.UnmarshalJSON([]byte(`"\u0041"`)); err != nil || id.String() != `"\u0041"` || id.Raw() != "A" {
		t.Errorf("UnmarshalJSON(\"\\u0041\") = %v, %v", id, err)
	}
	if !id.Equal(jsonrpc.StringID("A")) || wire.Codec.IDKey(id) != jsonrpc.StringID("A") || id.Equal(jsonrpc.StringID("a")) {
		t.Errorf("escaped id %v does not equal its plain spelling", id)
	}
	if jsonrpc.StringID("1").Equal(jsonrpc.IntID(1)) {
		t.Error(`"1" equals 1`)
	}
	if err := id.UnmarshalJSON([]byte(`12`)); err != nil || id != jsonrpc.IntID(12) || id.Raw() != int64(12) {
		t.Errorf("UnmarshalJSON(12) = %v, %v", id, err)
	}
}

// The zero values mean what the package documents: an absent id, a message that is a response
// and nothing else.
func TestZeroValues(t *testing.T) {
	var id jsonrpc.ID
	if id.IsValid() || id.Raw() != nil {
		t.Errorf("zero ID: IsValid %v, Raw %v", id.IsValid(), id.Raw())
	}
	var m jsonrpc.Message
	if m.IsRequest() || m.IsNotification() || !m.IsResponse() {
		t.Errorf("zero Message: request %v, notification %v, response %v", m.IsRequest(), m.IsNotification(), m.IsResponse())
	}
	for _, tt := range []struct {
		m                              jsonrpc.Message
		request, notification, respond bool
	}{
		{jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "ping"}, true, false, false},
		{jsonrpc.Message{Method: "notifications/initialized"}, false, true, false},
		{jsonrpc.Message{ID: jsonrpc.StringID("")}, false, false, true},
	} {
		if tt.m.IsRequest() != tt.request || tt.m.IsNotification() != tt.notification || tt.m.IsResponse() != tt.respond {
			t.Errorf("%+v: request %v, notification %v, response %v", tt.m, tt.m.IsRequest(), tt.m.IsNotification(), tt.m.IsResponse())
		}
	}
}

// The constructors give the generic message of their code and the detail as data; NewError
// repeats its message as data.
func TestConstructors(t *testing.T) {
	for _, tt := range []struct {
		e    *jsonrpc.Error
		code int64
		msg  string
		data any
	}{
		{jsonrpc.ParseError("x"), jsonrpc.CodeParseError, "Parse error", "x"},
		{jsonrpc.InvalidRequest("x"), jsonrpc.CodeInvalidRequest, "Invalid Request", "x"},
		{jsonrpc.InvalidParams(""), jsonrpc.CodeInvalidParams, "Invalid params", nil},
		{jsonrpc.InternalError("x"), jsonrpc.CodeInternalError, "Internal error", "x"},
		{jsonrpc.NewError(-32000, "m"), -32000, "m", "m"},
		{jsonrpc.Errorf(-32000, "n=%d", 3), -32000, "n=3", "n=3"},
	} {
		if tt.e.Code != tt.code || tt.e.Message != tt.msg || tt.e.Data != tt.data {
			t.Errorf("%v: got %d %q %v, want %d %q %v", tt.e, tt.e.Code, tt.e.Message, tt.e.Data, tt.code, tt.msg, tt.data)
		}
	}
}

// TestDecodeOwned: DecodeOwned reads the same message as DecodeMessage, its raw members where they
// sit in the bytes it was handed (capped: an append cannot write over what follows), while
// DecodeMessage's are copies that outlive a reuse of the caller's buffer.
func TestDecodeOwned(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"k":"v"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"m","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`,
	} {
		data := []byte(body)
		owned, derr := wire.Codec.DecodeOwned(data)
		if derr != nil {
			t.Fatalf("DecodeOwned(%s): %v", body, derr)
		}
		copied, derr := wire.Codec.DecodeMessage(data)
		if derr != nil {
			t.Fatalf("DecodeMessage(%s): %v", body, derr)
		}
		raw := owned.Params
		if raw == nil {
			raw = owned.Result
		}
		if string(raw) != string(copied.Params)+string(copied.Result) || owned.Method != copied.Method || owned.ID != copied.ID {
			t.Fatalf("%s: owned %s %q, copied %s%s %q", body, raw, owned.Method, copied.Params, copied.Result, copied.Method)
		}
		if cap(raw) != len(raw) {
			t.Errorf("%s: the kept member has room to append into the body (cap %d, len %d)", body, cap(raw), len(raw))
		}
		for i := range data {
			data[i] = ' ' // the caller reuses its buffer
		}
		if string(copied.Params)+string(copied.Result) == "" || strings.TrimSpace(string(copied.Params)+string(copied.Result)) == "" {
			t.Errorf("%s: DecodeMessage's members change with the caller's buffer", body)
		}
		if strings.TrimSpace(string(raw)) != "" {
			t.Errorf("%s: DecodeOwned's members are not where they sit in the body: %s", body, raw)
		}
		if v := owned.Meta("k"); v != nil && strings.TrimSpace(string(v)) != "" {
			t.Errorf("%s: DecodeOwned's _meta member is not in the body: %s", body, v)
		}
	}
}

// The members of params._meta are kept in the order sent, past the four the message holds
// itself too; Meta finds each and nil for others (the allocations: TestMetaSharesTheMessage).
func TestMetaMembers(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":` +
		`{"a":1,"b":"two","c":{"x":[3]},"d":null,"e":true,"f\u0067":"6"}}}`
	m, derr := wire.Codec.DecodeMessage([]byte(body))
	if derr != nil {
		t.Fatal(derr)
	}
	want := [][2]string{{"a", "1"}, {"b", `"two"`}, {"c", `{"x":[3]}`}, {"d", "null"}, {"e", "true"}, {"fg", `"6"`}}
	var got [][2]string
	for k, v := range m.MetaMembers() {
		got = append(got, [2]string{k, string(v)})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("MetaMembers = %v, want %v", got, want)
	}
	for _, kv := range want {
		if v := m.Meta(kv[0]); string(v) != kv[1] {
			t.Errorf("Meta(%q) = %s, want %s", kv[0], v, kv[1])
		}
	}
	if v := m.Meta("g"); v != nil {
		t.Errorf("Meta of a key not sent = %s, want nil", v)
	}
	for range m.MetaMembers() {
		break // stopping early must not panic
	}
	var zero jsonrpc.Message
	if zero.Meta("a") != nil {
		t.Error("a Message not decoded has _meta members")
	}

}
