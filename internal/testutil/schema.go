package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SpecDirEnv names the environment variable that, when non-empty, overrides
// the folder holding the official schemas. That folder must contain one
// sub-folder per protocol version, each with a schema.json file.
const SpecDirEnv = "MCPKIT_SPEC_DIR"

// ErrSchemaUnavailable is wrapped by the errors of [CheckDef] and
// [SchemaPath] when the official schema for a version cannot be located.
// [ValidateDef] turns such errors into a skipped test.
var ErrSchemaUnavailable = errors.New("the official MCP schemas are not in this checkout")

// errBadData marks data that is not one well-formed JSON value.
var errBadData = errors.New("data is not a single JSON value")

// SchemaViolationError reports that a message does not conform to a
// definition of the official schema.
type SchemaViolationError struct {
	Version string // protocol version, e.g. "2025-11-25"
	Def     string // definition name, e.g. "InitializeResult"
	// Err is the validator's report, a *jsonschema.ValidationError.
	Err error
}

func (e *SchemaViolationError) Error() string {
	var ve *jsonschema.ValidationError
	detail := e.Err.Error()
	if errors.As(e.Err, &ve) {
		// The verbose form names the schema keyword behind each failure.
		detail = fmt.Sprintf("%#v", ve)
	}
	return fmt.Sprintf("message does not conform to %s of the MCP %s schema:\n%s", e.Def, e.Version, detail)
}

func (e *SchemaViolationError) Unwrap() error { return e.Err }

// SpecDir returns the folder expected to hold <version>/schema.json: the
// value of $MCPKIT_SPEC_DIR when set, otherwise shared/spec in the parent of
// the repository root. The repository root is the nearest folder, starting
// from the working directory and walking up, that contains a go.mod file.
// The folder is not required to exist.
func SpecDir() (string, error) {
	if dir := os.Getenv(SpecDirEnv); dir != "" {
		return filepath.Abs(dir)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(root), "shared", "spec"), nil
}

// SchemaPath returns the path where the official schema of version is
// expected. It does not check that the file exists.
func SchemaPath(version string) (string, error) {
	if err := checkVersionName(version); err != nil {
		return "", err
	}
	dir, err := SpecDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, version, "schema.json"), nil
}

// SchemaAvailable reports whether the official schema file of version is
// present. It does not parse the file.
func SchemaAvailable(version string) bool {
	path, err := SchemaPath(version)
	if err != nil {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// warnedUnavailable keeps the "schemas absent" note to one line per test binary.
var warnedUnavailable atomic.Bool

// ValidateDef checks that data, one JSON value, conforms to the definition
// def (the name under "$defs", such as "InitializeResult", "JSONRPCResponse"
// or "CallToolResult") of the official MCP schema for version (such as
// "2025-11-25").
//
// A violation, or data that is not JSON, fails the test with t.Errorf,
// showing the validator's report and the data; the test goes on. When the
// schema file is absent only this check is skipped: it logs why (once per
// process) and the test's other assertions still run. Other problems, such as
// an unknown def or an unreadable schema, stop the test with t.Fatalf, so call
// it from the test's own goroutine.
func ValidateDef(t testing.TB, version, def string, data []byte) {
	t.Helper()
	err := CheckDef(version, def, data)
	if err == nil {
		return
	}
	var violation *SchemaViolationError
	switch {
	case errors.Is(err, ErrSchemaUnavailable):
		if !warnedUnavailable.Swap(true) {
			t.Logf("skipping MCP schema checks: %v", err)
		}
	case errors.As(err, &violation), errors.Is(err, errBadData):
		t.Errorf("%v\ndata:\n%s", err, showJSON(data))
	default:
		t.Fatalf("cannot check data against %s of the MCP %s schema: %v", def, version, err)
	}
}

// CheckDef is the error-returning form of [ValidateDef]. It returns nil when
// data conforms, a *[SchemaViolationError] when it does not, an error
// wrapping [ErrSchemaUnavailable] when the schema file is absent, and some
// other error when data is not JSON, def is unknown or the schema cannot be
// loaded. It is safe for concurrent use.
func CheckDef(version, def string, data []byte) error {
	sch, err := defSchema(version, def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %w", errBadData, err)
	}
	if err := sch.Validate(inst); err != nil {
		return &SchemaViolationError{Version: version, Def: def, Err: err}
	}
	return nil
}

// defSchema returns the compiled schema of one definition, compiling the
// schema file and the definition on first use.
func defSchema(version, def string) (*jsonschema.Schema, error) {
	path, err := SchemaPath(version)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: looked for the %s schema at %s (they belong in shared/spec/<version>/schema.json beside the repository checkout, or in $%s/<version>/schema.json)",
			ErrSchemaUnavailable, version, path, SpecDirEnv)
	case err != nil:
		return nil, err
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("schema path %s is not a regular file", path)
	}
	sf, err := loadSpecFile(path)
	if err != nil {
		return nil, err
	}
	return sf.compileDef(def)
}

// specFile is one parsed schema file together with the compiler that owns
// its compiled definitions.
type specFile struct {
	path    string
	url     string          // the resource location given to the compiler
	defsKey string          // "$defs" (2019-09 and later) or "definitions"
	defs    map[string]bool // names of the definitions in the file

	mu       sync.Mutex // guards compiler and compiled
	compiler *jsonschema.Compiler
	compiled map[string]compiledDef
}

type compiledDef struct {
	schema *jsonschema.Schema
	err    error
}

// specFiles caches the schema files by path so that each is read and
// compiled once per process, even when several versions or overriding
// folders are in play.
var specFiles struct {
	mu    sync.Mutex
	byKey map[string]*specLoad
}

type specLoad struct {
	once sync.Once
	file *specFile
	err  error
}

func loadSpecFile(path string) (*specFile, error) {
	specFiles.mu.Lock()
	if specFiles.byKey == nil {
		specFiles.byKey = make(map[string]*specLoad)
	}
	ld := specFiles.byKey[path]
	if ld == nil {
		ld = new(specLoad)
		specFiles.byKey[path] = ld
	}
	specFiles.mu.Unlock()

	ld.once.Do(func() { ld.file, ld.err = readSpecFile(path) })
	return ld.file, ld.err
}

func readSpecFile(path string) (*specFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: top level is not a JSON object", path)
	}

	// The files published so far declare draft 2020-12 and keep their
	// definitions under "$defs"; older drafts used "definitions". Accept
	// either, and let the compiler pick the draft from "$schema".
	sf := &specFile{path: path, compiled: make(map[string]compiledDef)}
	for _, key := range []string{"$defs", "definitions"} {
		if m, ok := top[key].(map[string]any); ok {
			sf.defsKey = key
			sf.defs = make(map[string]bool, len(m))
			for name := range m {
				sf.defs[name] = true
			}
			break
		}
	}
	if sf.defsKey == "" {
		return nil, fmt.Errorf("%s: no \"$defs\" or \"definitions\" object", path)
	}

	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	sf.url = abs
	c := jsonschema.NewCompiler()
	// Only used when the file has no "$schema"; the current MCP schemas
	// are written for 2020-12.
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(sf.url, doc); err != nil {
		return nil, fmt.Errorf("register %s: %w", path, err)
	}
	// Compiling the root checks the whole document against its metaschema
	// once, so a damaged file is reported up front.
	if _, err := c.Compile(sf.url); err != nil {
		return nil, fmt.Errorf("compile %s: %w", path, err)
	}
	sf.compiler = c
	return sf, nil
}

func (sf *specFile) compileDef(def string) (*jsonschema.Schema, error) {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if cd, ok := sf.compiled[def]; ok {
		return cd.schema, cd.err
	}
	var cd compiledDef
	if !sf.defs[def] {
		cd.err = fmt.Errorf("%s has no definition %q%s", sf.path, def, sf.suggest(def))
	} else {
		// Build a JSON pointer to the definition, escaping it first as a
		// pointer token and then for use inside a URL fragment.
		tok := strings.NewReplacer("~", "~0", "/", "~1").Replace(def)
		loc := sf.url + "#/" + sf.defsKey + "/" + url.PathEscape(tok)
		cd.schema, cd.err = sf.compiler.Compile(loc)
		if cd.err != nil {
			cd.err = fmt.Errorf("compile %s: %w", loc, cd.err)
		}
	}
	sf.compiled[def] = cd
	return cd.schema, cd.err
}

// suggest lists definitions whose names resemble def, for error messages.
func (sf *specFile) suggest(def string) string {
	want := strings.ToLower(def)
	var near []string
	for name := range sf.defs {
		low := strings.ToLower(name)
		if strings.Contains(low, want) || strings.Contains(want, low) {
			near = append(near, name)
		}
	}
	if len(near) == 0 {
		return ""
	}
	sort.Strings(near)
	if len(near) > 8 {
		near = append(near[:8], "...")
	}
	return " (similar: " + strings.Join(near, ", ") + ")"
}

func checkVersionName(version string) error {
	if version == "" || version == "." || version == ".." || strings.ContainsAny(version, `/\`) {
		return fmt.Errorf("invalid MCP protocol version %q: want a plain name such as 2025-11-25", version)
	}
	return nil
}

// moduleRoot walks up from the working directory to the nearest folder that
// holds a go.mod file.
func moduleRoot() (string, error) {
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := start; ; {
		if info, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && info.Mode().IsRegular() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod found above %s, so the shared/spec folder beside the repository cannot be located (set %s)",
				ErrSchemaUnavailable, start, SpecDirEnv)
		}
		dir = parent
	}
}

// maxShownData bounds how much of a message a failure report repeats.
const maxShownData = 16 << 10

// showJSON renders data for a failure report: indented when it is valid
// JSON, verbatim otherwise, and cut short when very long.
func showJSON(data []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		buf.Reset()
		buf.Write(data)
	}
	out := buf.String()
	if len(out) > maxShownData {
		out = fmt.Sprintf("%s\n... (%d more bytes)", out[:maxShownData], len(out)-maxShownData)
	}
	return out
}
