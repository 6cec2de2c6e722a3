package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseStateKey(t *testing.T) {
	if k, err := parseStateKey(""); k != nil || err != nil {
		t.Fatalf("empty: %v, %v (want a per-process key)", k, err)
	}
	k, err := parseStateKey(strings.Repeat("ab", 32))
	if err != nil || !bytes.Equal(k, bytes.Repeat([]byte{0xab}, 32)) {
		t.Fatalf("64 hex characters: %x, %v", k, err)
	}
	for _, bad := range []string{"ab", strings.Repeat("ab", 33), strings.Repeat("zz", 32)} {
		if _, err := parseStateKey(bad); err == nil || !strings.Contains(err.Error(), "64 hex characters") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
