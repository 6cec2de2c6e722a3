package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// RequireBinariesEnv names the environment variable that turns a missing server binary from a
// skip into a failure. CI sets it (to any non-empty value) after installing every package the
// tests need, so a test that needs a real redis-server or nginx can never pass by skipping there.
const RequireBinariesEnv = "MCPKIT_REQUIRE_BINARIES"

// NeedBinary returns the path of the program name on PATH. When it is missing, the test is
// skipped with a message naming the Debian package that provides it, or failed when
// $MCPKIT_REQUIRE_BINARIES is set.
func NeedBinary(t testing.TB, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(RequireBinariesEnv) != "" {
		t.Fatalf("%s is not installed (Debian package %s) and %s is set", name, debianPackage, RequireBinariesEnv)
	}
	t.Skipf("%s is not installed: install the Debian package %s to run this test", name, debianPackage)
	return ""
}
