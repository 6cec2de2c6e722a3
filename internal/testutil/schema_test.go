package testutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	v20251125 = "2025-11-25"
	v20260728 = "2026-07-28"
)

// needSchema skips the test when the official schema of version is absent.
func needSchema(t *testing.T, version string) {
	t.Helper()
	if !SchemaAvailable(version) {
		path, _ := SchemaPath(version)
		t.Skipf("official MCP %s schema not in this checkout (looked for %s)", version, path)
	}
}

// wantViolation fails unless err is a schema violation whose report
// mentions each of the given fragments.
func wantViolation(t *testing.T, err error, fragments ...string) {
	t.Helper()
	var v *SchemaViolationError
	if !errors.As(err, &v) {
		t.Fatalf("got error %v (%T), want a *SchemaViolationError", err, err)
	}
	msg := err.Error()
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("violation report does not mention %q:\n%s", f, msg)
		}
	}
}

const minimalInitializeResult = `{
	"protocolVersion": "2025-11-25",
	"capabilities": {},
	"serverInfo": {"name": "test-server", "version": "0.0.1"}
}`

func TestInitializeResult20251125(t *testing.T) {
	needSchema(t, v20251125)

	if err := CheckDef(v20251125, "InitializeResult", []byte(minimalInitializeResult)); err != nil {
		t.Fatalf("minimal InitializeResult rejected: %v", err)
	}
	ValidateDef(t, v20251125, "InitializeResult", []byte(minimalInitializeResult))

	noServerInfo := `{"protocolVersion": "2025-11-25", "capabilities": {}}`
	err := CheckDef(v20251125, "InitializeResult", []byte(noServerInfo))
	wantViolation(t, err, "serverInfo")
	if v := new(SchemaViolationError); errors.As(err, &v) && (v.Version != v20251125 || v.Def != "InitializeResult") {
		t.Errorf("violation names %s/%s, want %s/InitializeResult", v.Version, v.Def, v20251125)
	}

	wrongType := `{"protocolVersion": 20251125, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}`
	wantViolation(t, CheckDef(v20251125, "InitializeResult", []byte(wrongType)), "protocolVersion")
}

func TestWireEnvelopes20251125(t *testing.T) {
	needSchema(t, v20251125)

	valid := map[string]string{
		"JSONRPCResponse": `{"jsonrpc": "2.0", "id": 1, "result": {}}`,
		"JSONRPCRequest":  `{"jsonrpc": "2.0", "id": "a", "method": "tools/list"}`,
		"CallToolResult":  `{"content": [{"type": "text", "text": "hi"}]}`,
	}
	for def, data := range valid {
		if err := CheckDef(v20251125, def, []byte(data)); err != nil {
			t.Errorf("%s rejected: %v", def, err)
		}
	}

	invalid := map[string]string{
		"JSONRPCResponse": `{"jsonrpc": "2.0", "id": 1}`,
		"CallToolResult":  `{"content": [{"type": "text"}]}`,
	}
	for def, data := range invalid {
		if err := CheckDef(v20251125, def, []byte(data)); err == nil {
			t.Errorf("%s accepted %s", def, data)
		} else {
			wantViolation(t, err)
		}
	}
}

func TestDiscoverResult20260728(t *testing.T) {
	needSchema(t, v20260728)

	valid := `{
		"resultType": "complete",
		"cacheScope": "public",
		"capabilities": {"tools": {}},
		"supportedVersions": ["2026-07-28", "2025-11-25"],
		"ttlMs": 60000
	}`
	ValidateDef(t, v20260728, "DiscoverResult", []byte(valid))

	negativeTTL := strings.Replace(valid, "60000", "-1", 1)
	wantViolation(t, CheckDef(v20260728, "DiscoverResult", []byte(negativeTTL)), "ttlMs")

	badScope := strings.Replace(valid, `"public"`, `"everyone"`, 1)
	wantViolation(t, CheckDef(v20260728, "DiscoverResult", []byte(badScope)), "cacheScope")
}

func TestCheckDefUsageErrors(t *testing.T) {
	needSchema(t, v20251125)

	err := CheckDef(v20251125, "NoSuchThing", []byte(`{}`))
	if err == nil || errors.Is(err, ErrSchemaUnavailable) || errors.As(err, new(*SchemaViolationError)) {
		t.Errorf("unknown def: got %v, want a usage error", err)
	}
	if err := CheckDef(v20251125, "initializeresult", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "InitializeResult") {
		t.Errorf("near-miss def: got %v, want a suggestion of InitializeResult", err)
	}

	for _, data := range []string{``, `{`, `{} {}`, `nope`} {
		if err := CheckDef(v20251125, "InitializeResult", []byte(data)); !errors.Is(err, errBadData) {
			t.Errorf("data %q: got %v, want a bad-data error", data, err)
		}
	}

	for _, version := range []string{"", ".", "..", "../spec", `a\b`} {
		if err := CheckDef(version, "InitializeResult", []byte(`{}`)); err == nil || errors.Is(err, ErrSchemaUnavailable) {
			t.Errorf("version %q: got %v, want an invalid-version error", version, err)
		}
		if SchemaAvailable(version) {
			t.Errorf("SchemaAvailable(%q) = true", version)
		}
	}
}

func TestCheckDefConcurrent(t *testing.T) {
	needSchema(t, v20251125)

	// Definitions no other test touches, so that first compilations race
	// with each other; each requires members the data lacks.
	defs := []string{"ListToolsResult", "Tool", "ListPromptsResult", "ReadResourceResult"}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			def := defs[i%len(defs)]
			err := CheckDef(v20251125, def, []byte(`{"unexpected": true}`))
			if !errors.As(err, new(*SchemaViolationError)) {
				t.Errorf("%s: got %v, want a violation", def, err)
			}
		})
	}
	wg.Wait()
}

func TestSpecDirFromModuleRoot(t *testing.T) {
	t.Setenv(SpecDirEnv, "")
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s has no go.mod: %v", root, err)
	}
	dir, err := SpecDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(root), "shared", "spec"); dir != want {
		t.Errorf("SpecDir() = %s, want %s", dir, want)
	}
	path, err := SchemaPath(v20251125)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, v20251125, "schema.json"); path != want {
		t.Errorf("SchemaPath = %s, want %s", path, want)
	}
}

func TestMissingSchemaSkips(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(SpecDirEnv, dir)

	if SchemaAvailable(v20251125) {
		t.Fatalf("SchemaAvailable true for an empty %s", SpecDirEnv)
	}
	err := CheckDef(v20251125, "InitializeResult", []byte(minimalInitializeResult))
	if !errors.Is(err, ErrSchemaUnavailable) {
		t.Fatalf("got %v, want ErrSchemaUnavailable", err)
	}
	if want := filepath.Join(dir, v20251125, "schema.json"); !strings.Contains(err.Error(), want) {
		t.Errorf("error does not name the path looked for (%s): %v", want, err)
	}

	// Only the check is skipped: the helper says why and returns, so the test's other
	// assertions (and subtests calling it with their parent's T) keep running.
	warnedUnavailable.Store(false)
	rec := &recordingTB{TB: t}
	returned := false
	rec.run(func() {
		ValidateDef(rec, v20251125, "InitializeResult", []byte(minimalInitializeResult))
		returned = true
	})
	if !returned || rec.skipped || len(rec.errors) != 0 || rec.fatal {
		t.Errorf("ValidateDef without schemas: returned=%v skipped=%v errors=%q fatal=%v", returned, rec.skipped, rec.errors, rec.fatal)
	}
	if len(rec.logs) != 1 || !strings.Contains(rec.logs[0], "not in this checkout") {
		t.Errorf("logs %q do not say once that the schemas are not in this checkout", rec.logs)
	}
	rec.run(func() { ValidateDef(rec, v20251125, "InitializeResult", []byte(minimalInitializeResult)) })
	if len(rec.logs) != 1 {
		t.Errorf("the reason was logged %d times, want once", len(rec.logs))
	}
}

// A small draft-07 schema keeping its definitions under "definitions",
// placed in a temporary folder named by MCPKIT_SPEC_DIR.
const draft07Schema = `{
	"$schema": "http://json-schema.org/draft-07/schema#",
	"definitions": {
		"Ping": {
			"type": "object",
			"properties": {"seq": {"$ref": "#/definitions/Seq"}},
			"required": ["seq"]
		},
		"Seq": {"type": "integer", "minimum": 1},
		"a/b~c": {"const": 9007199254740993}
	}
}`

func TestSpecDirOverrideDraft07(t *testing.T) {
	dir := t.TempDir()
	const version = "0000-01-01"
	if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, version, "schema.json"), []byte(draft07Schema), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SpecDirEnv, dir)

	if !SchemaAvailable(version) {
		t.Fatal("SchemaAvailable false for the override folder")
	}
	if err := CheckDef(version, "Ping", []byte(`{"seq": 3}`)); err != nil {
		t.Errorf("valid Ping rejected: %v", err)
	}
	wantViolation(t, CheckDef(version, "Ping", []byte(`{"seq": 0}`)), "/seq", "minimum")
	wantViolation(t, CheckDef(version, "Ping", []byte(`{}`)), "seq")
	wantViolation(t, CheckDef(version, "Ping", []byte(`{"seq": 1.5}`)), "/seq")

	// Definition names are escaped as JSON pointer tokens, and numbers are
	// compared exactly: the two below are equal once rounded to float64.
	if err := CheckDef(version, "a/b~c", []byte(`9007199254740993`)); err != nil {
		t.Errorf("def with pointer metacharacters: %v", err)
	}
	wantViolation(t, CheckDef(version, "a/b~c", []byte(`9007199254740992`)))
}

func TestValidateDefReportsViolation(t *testing.T) {
	needSchema(t, v20251125)

	rec := &recordingTB{TB: t}
	data := `{"protocolVersion": "2025-11-25", "capabilities": {}}`
	rec.run(func() { ValidateDef(rec, v20251125, "InitializeResult", []byte(data)) })
	if len(rec.errors) != 1 || rec.skipped || rec.fatal {
		t.Fatalf("errors=%q skipped=%v fatal=%v, want exactly one error", rec.errors, rec.skipped, rec.fatal)
	}
	msg := rec.errors[0]
	for _, want := range []string{"InitializeResult", "serverInfo", `"protocolVersion": "2025-11-25"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("report lacks %q:\n%s", want, msg)
		}
	}

	rec = &recordingTB{TB: t}
	rec.run(func() { ValidateDef(rec, v20251125, "NoSuchDef", []byte(`{}`)) })
	if !rec.fatal {
		t.Errorf("unknown def did not stop the test: errors=%q", rec.errors)
	}
}

// recordingTB captures what a helper reports instead of acting on it.
// Skipf and Fatalf end the helper's goroutine as the real ones would.
type recordingTB struct {
	testing.TB
	errors  []string
	logs    []string
	skipped bool
	skipMsg string
	fatal   bool
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped, r.skipMsg = true, fmt.Sprintf(format, args...)
	panic(errStopHelper)
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.fatal = true
	panic(errStopHelper)
}

var errStopHelper = errors.New("helper stopped")

// isStopHelper reports whether a recovered value is the stop raised by Skipf and Fatalf.
func isStopHelper(p any) bool {
	err, ok := p.(error)
	return ok && errors.Is(err, errStopHelper)
}

// run calls f, absorbing the stop raised by Skipf and Fatalf.
func (r *recordingTB) run(f func()) {
	defer func() {
		if p := recover(); p != nil && !isStopHelper(p) {
			panic(p)
		}
	}()
	f()
}
