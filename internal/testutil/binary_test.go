package testutil

import "testing"

func TestNeedBinaryFindsAProgram(t *testing.T) {
	// go is on PATH wherever these tests run.
	if p := NeedBinary(t, "go", "golang-go"); p == "" {
		t.Fatal("no path for go")
	}
}

func TestNeedBinaryMissing(t *testing.T) {
	var ran bool
	t.Run("skips", func(t *testing.T) {
		t.Setenv(RequireBinariesEnv, "")
		defer func() { ran = true }()
		NeedBinary(t, "no-such-program-mcpkit", "no-such-package")
		t.Error("NeedBinary returned for a missing program")
	})
	if !ran {
		t.Fatal("the subtest did not run")
	}
}
