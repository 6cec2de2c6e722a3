package jsonrpc

import "testing"

// A message decoded with an envelope of four _meta members takes no allocation more than one
// without _meta (the members live in the message's allocation), and one with five takes one
// more (their slice). The decoder is driven directly, not through its pool, so that the counts
// hold under the race detector too, whose pool drops items at random.
func TestMetaSharesTheMessage(t *testing.T) {
	defer func(keys []string) { knownMetaKeys = keys }(knownMetaKeys)
	knownMetaKeys = []string{"a", "b", "c", "d", "e"} // shared keys, as core names its own
	md := new(msgDecoder)
	allocs := func(body string) float64 {
		data := []byte(body)
		return testing.AllocsPerRun(100, func() {
			if _, derr := md.decode(data, true); derr != nil {
				t.Fatal(derr)
			}
		})
	}
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"`
	plain := allocs(head + `}}`)
	four := allocs(head + `,"_meta":{"a":"2026-07-28","b":{},"c":{"name":"t","version":"1"},"d":"p"}}}`)
	five := allocs(head + `,"_meta":{"a":1,"b":2,"c":3,"d":4,"e":5}}}`)
	if four != plain || five != plain+1 {
		t.Errorf("allocations: %v without _meta, %v with four members (want the same), %v with five (want one more)", plain, four, five)
	}
}
