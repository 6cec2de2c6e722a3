package testutil

import (
	"testing"
	"time"
)

func TestCheckDefaultsFailsOnAMismatchOrANonZeroGiven(t *testing.T) {
	for name, rows := range map[string][]Default{
		"mismatch":      {{Option: "X", Given: 0, Got: 10, Doc: 11}},
		"type mismatch": {{Option: "X", Given: 0, Got: int64(10), Doc: 10}},
		"non-zero":      {{Option: "X", Given: 3, Got: 10, Doc: 10}},
	} {
		t.Run(name, func(t *testing.T) {
			r := &recordingTB{TB: t}
			CheckDefaults(r, rows)
			if len(r.errors) == 0 {
				t.Error("CheckDefaults passed")
			}
		})
	}
	r := &recordingTB{TB: t}
	CheckDefaults(r, []Default{{Option: "T", Given: time.Duration(0), Got: time.Second, Doc: time.Second}, {Option: "N", Got: 1, Doc: 1}})
	if len(r.errors) > 0 {
		t.Errorf("CheckDefaults failed on matching rows: %v", r.errors)
	}
}
