package core

import (
	"fmt"
	"reflect"
	"testing"
)

// TestClientInfoOf: a clientInfo decodes as unmarshal decodes it, every request gets a value of
// its own (a handler changing one changes no other request's), values with icons are never
// shared, and the remembered set stays bounded.
func TestClientInfoOf(t *testing.T) {
	for _, raw := range []string{
		`{"name":"a","version":"1"}`,
		`{"name":"a","version":"1","title":"A","extra":true}`,
		`{"name":"a","version":"1","icons":[{"src":"https://x/i.png"}]}`,
	} {
		var want Implementation
		if err := unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		first, err := clientInfoOf([]byte(raw), nil)
		if err != nil || !reflect.DeepEqual(*first, want) {
			t.Fatalf("clientInfoOf(%s) = %+v, %v; want %+v", raw, first, err, want)
		}
		first.Name = "changed by a handler"
		if len(first.Icons) > 0 {
			first.Icons[0].Src = "changed"
		}
		again, err := clientInfoOf([]byte(raw), nil)
		if err != nil || again == first || !reflect.DeepEqual(*again, want) {
			t.Fatalf("clientInfoOf(%s) again = %+v (%p, first %p), %v; want %+v", raw, again, again, first, err, want)
		}
		// Into storage of the caller's (a call's, allocated with its session).
		var dst Implementation
		into, err := clientInfoOf([]byte(raw), &dst)
		if err != nil || into != &dst || !reflect.DeepEqual(dst, want) {
			t.Fatalf("clientInfoOf(%s, dst) = %+v (%p, dst %p), %v; want %+v", raw, into, into, &dst, err, want)
		}
	}
	if _, err := clientInfoOf([]byte(`{"name":1}`), nil); err == nil {
		t.Fatal("a clientInfo whose name is a number was accepted")
	}
	for i := range 2 * maxClientInfos {
		if _, err := clientInfoOf(fmt.Appendf(nil, `{"name":"n%d","version":"1"}`, i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(*clientInfos.Load()); n > maxClientInfos {
		t.Fatalf("%d clientInfo values remembered, want at most %d", n, maxClientInfos)
	}
	// Once the set is full, a new value is decoded without the writers' lock (held here: a
	// clientInfoOf that took it would never return).
	clientInfosMu.Lock()
	defer clientInfosMu.Unlock()
	raw := `{"name":"one more","version":"1"}`
	if impl, err := clientInfoOf([]byte(raw), nil); err != nil || impl.Name != "one more" {
		t.Fatalf("clientInfoOf(%s) on a full set = %+v, %v", raw, impl, err)
	}
}
