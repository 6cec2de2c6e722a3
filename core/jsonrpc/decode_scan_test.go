package jsonrpc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonbody"
)

// scanCorpus are messages of every shape the decoder meets; scanned says whether the scanner
// settles the message itself (the others use what it leaves to the token reader).
var scanCorpus = []struct {
	body    string
	scanned bool
}{
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, true},
	{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40,"note":"sum"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"progressToken":"tok-1"}}}`, true},
	{` { "jsonrpc" : "2.0" ,` + "\n\t" + `"method":"notifications/initialized" } ` + "\r\n", true},
	{`{"jsonrpc":"2.0","id":"a-b","method":"resources/read","params":{"uri":"file:///x\u00e9y","_meta":{"a":1,"b":[1,2],"c":null,"d":true,"e":false}}}`, true},
	{`{"jsonrpc":"2.0","id":-7,"method":"tasks/get","params":{"taskId":"t\n1\\\"\/\b\f\r\t\u0041"}}`, true},
	{`{"jsonrpc":"2.0","id":3,"method":"x","params":[1,-0.5,2e10,3E-2,-0,1.25e+3,[],[[]],{},{"k":[{"z":"é漢🙂"}]}]}`, true},
	{`{"jsonrpc":"2.0","id":3,"method":"x","params":null}`, true},
	{`{"jsonrpc":"2.0","id":3,"method":"x","params":7}`, true},
	{`{"jsonrpc":"2.0","id":9,"result":{"content":[],"isError":false}}`, true},
	{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":{"why":"x"}}}`, true},
	{`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"},"result":{}}`, true},
	{`{"jsonrpc":"1.0","id":9,"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":{},"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":""}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":5}`, true},
	{`{"jsonrpc":"2.0","id":1}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{},"inputResponses":{"a":{}},"requestState":"s"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"uri":[],"taskId":{},"_meta":"x"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}}}`, true},
	{`{"jsonrpc":"2.0","id":"\u0031","method":"m\u0065"}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"m","extra":{"deep":[[[[{"x":[true,false,null]}]]]]}}`, true},
	// What the scanner leaves to the token reader.
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"n\u0061me":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"t":"\ud83d\ude42"}}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"t":"\ud83d"}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"a":2}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":1,"k":2}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m"} x`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m",}`, false},
	{`{"jsonrpc":"2.0","id":01,"method":"m"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"` + "\x01" + `"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"` + "\xff" + `"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":tru}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1.}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,]}}`, false},
}

// decodeBoth decodes data with the scanner and with the token reader alone; scanned says
// whether the scanner settled it.
func decodeBoth(data []byte, owned bool) (scan, tokens *Message, scanErr, tokensErr *DecodeError, scanned bool) {
	md := new(msgDecoder)
	scan, scanErr, scanned = md.scan(data, owned)
	tokens, tokensErr = new(msgDecoder).decodeTokens(data, owned)
	return scan, tokens, scanErr, tokensErr, scanned
}

// checkScan fails when the scanner settled data differently from the token reader.
func checkScan(t *testing.T, data []byte) bool {
	t.Helper()
	for _, owned := range []bool{true, false} {
		scan, tokens, scanErr, tokensErr, scanned := decodeBoth(data, owned)
		if !scanned {
			if scan != nil || scanErr != nil {
				t.Fatalf("%q: the scanner gave up but returned %+v, %+v", data, scan, scanErr)
			}
			return false
		}
		if !reflect.DeepEqual(scan, tokens) || !reflect.DeepEqual(scanErr, tokensErr) {
			t.Fatalf("%q (owned %v):\nscanner      %+v %+v\ntoken reader %+v %+v", data, owned, scan, scanErr, tokens, tokensErr)
		}
	}
	return true
}

// TestScanMatchesTokenReader: whatever the scanner settles, it settles as the token reader does
// (the same message, or the same error), for every message of the corpus and every one-byte
// change of it; and it settles the usual ones (a scanner that gave up on everything would pass
// the comparison).
func TestScanMatchesTokenReader(t *testing.T) {
	specials := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '-', 'e', '.', 'u', 'n', 0x1f, 0x80, 0xff}
	settled, total := 0, 0
	for _, c := range scanCorpus {
		if got := checkScan(t, []byte(c.body)); got != c.scanned {
			t.Errorf("%s: settled by the scanner %v, want %v", c.body, got, c.scanned)
		}
		for i := range len(c.body) {
			variants := []string{c.body[:i] + c.body[i+1:]}
			for _, b := range specials {
				variants = append(variants, c.body[:i]+string(b)+c.body[i:], c.body[:i]+string(b)+c.body[i+1:])
			}
			for _, v := range variants {
				total++
				if checkScan(t, []byte(v)) {
					settled++
				}
			}
		}
	}
	if settled < total/4 {
		t.Fatalf("the scanner settled %d of %d changed messages, fewer than a quarter", settled, total)
	}
	t.Logf("the scanner settled %d of %d changed messages", settled, total)
}

// TestScanLimits: nesting past MaxNesting and objects with many members are left to the token
// reader, which settles them as before.
func TestScanLimits(t *testing.T) {
	deep := strings.Repeat(`[`, 63) + strings.Repeat(`]`, 63)
	if !checkScan(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`+deep+`}`)) {
		t.Fatal("64 levels of nesting were not settled by the scanner")
	}
	deeper := strings.Repeat(`[`, 64) + strings.Repeat(`]`, 64)
	if checkScan(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`+deeper+`}`)) {
		t.Fatal("65 levels of nesting were settled by the scanner")
	}
	var b strings.Builder
	for i := range jsonbody.MaxScanNames + 1 {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	many := `{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"k":0` + b.String() + `}}}`
	if checkScan(t, []byte(many)) {
		t.Fatal("an object past the scanner's member limit was settled by it")
	}
}

// FuzzScan compares the scanner with the token reader on any input.
func FuzzScan(f *testing.F) {
	for _, c := range scanCorpus {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0] == '{' {
			checkScan(t, data)
		}
	})
}
