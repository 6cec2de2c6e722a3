// Package snippets compiles every Go snippet the kit's documentation shows, so a README or package
// doc example can never drift from the API it describes.
//
// What is compiled:
//
//   - every ```go fenced block of the Markdown pages at the top of the repository (*.md) and under
//     docs/ (so a new page is covered without touching this test);
//   - every code block of a doc comment (the package comment and the comments of declarations) in
//     the module's non-test Go files, when it is Go: a block that parses as Go, or one that fails
//     to parse but reads like Go (it has ":=", "func", or a line ending in "{" or "("), which is
//     then reported as broken.
//     Other blocks (shell commands, diagrams) are prose.
//
// How a block becomes a package (one package per block, all built by one go build and one go vet
// in a temporary module that uses the repository through a replace directive):
//
//   - a block that starts with a package clause is a whole file and compiles as it is;
//   - a block of declarations (types, funcs, vars) goes at file level;
//   - anything else is a fragment of statements and goes inside a function body returning error;
//     a //go:embed variable is lifted to file level (its pattern gets a placeholder file), and
//     every variable the fragment declares at its top level is marked used (`_ = x`);
//   - the standard and kit packages a block names (core, client, mcphttp, context, http, ...) are
//     imported for it, and the identifiers snippets assume (ctx, s, server, mux, impl, tp, ...)
//     are declared by a prelude file, see prelude below.
//
// Each generated file carries //line directives, so a failure names the documentation file and
// line of the snippet (README.md:273:46: ...).
//
// Opting out: a Markdown block meant as illustration only is preceded, on the line right before its
// fence, by the HTML comment <!-- snippet: not compiled, REASON --> (the reason is required). Use it
// sparingly: a block that can compile should.
package snippets

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

const modulePath = "github.com/mcpkit/mcpkit"

// optOut marks a Markdown block that is not compiled; it must be on the line before the fence.
var optOut = regexp.MustCompile(`^<!--\s*snippet:\s*not compiled,\s*(\S.*?)\s*-->$`)

// snippet is one code block of the documentation.
type snippet struct {
	file string // path relative to the repository root
	line int    // line of the block's first code line in file, 1-based
	code string
	doc  bool // from a Go doc comment (not Markdown)
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

// packages maps the package names a snippet may use without importing them to their import paths.
var packages = map[string]string{
	"core": modulePath + "/core", "jsonrpc": modulePath + "/core/jsonrpc", "client": modulePath + "/client", "stdio": modulePath + "/stdio",
	"mcphttp": modulePath + "/mcphttp", "middleware": modulePath + "/middleware",
	"session": modulePath + "/session", "auth": modulePath + "/auth",
	"tasks": modulePath + "/ext/tasks", "skills": modulePath + "/ext/skills",
	"redisstore": modulePath + "/redisstore", "otelmcp": modulePath + "/otelmcp", "apps": modulePath + "/ext/apps",
	"context": "context", "fmt": "fmt", "time": "time", "log": "log", "errors": "errors", "os": "os",
	"io": "io", "fs": "io/fs", "embed": "embed", "json": "encoding/json", "http": "net/http",
	"httptest": "net/http/httptest", "strings": "strings", "signal": "os/signal", "syscall": "syscall",
	"sync": "sync", "slog": "log/slog", "zerolog": "github.com/rs/zerolog", "chi": "github.com/go-chi/chi/v5",
	"jsonschema": "github.com/google/jsonschema-go/jsonschema", "otel": "go.opentelemetry.io/otel",
}

// preludeEntry declares one identifier snippets assume, with the imports its declaration needs.
type preludeEntry struct {
	name, decl string
	imports    []string
}

// prelude is what a snippet may use without declaring it. An entry is left out of a snippet that
// declares the same name at file level.
var prelude = []preludeEntry{
	{"ctx", "var ctx = context.Background()", []string{"context"}},
	{"s", "var s = core.NewServer(core.Implementation{Name: \"snippet\", Version: \"1\"}, core.Options{})", []string{modulePath + "/core"}},
	{"server", "var server = s", nil},
	{"impl", "var impl = core.Implementation{Name: \"snippet\", Version: \"1\"}", []string{modulePath + "/core"}},
	{"info", "var info = impl", nil},
	{"mux", "var mux = http.NewServeMux()", []string{"net/http"}},
	{"myAuth", "func myAuth(next http.Handler) http.Handler { return next }", []string{"net/http"}},
	{"userOf", "func userOf(r *http.Request) string { return r.Header.Get(\"X-User\") }", []string{"net/http"}},
	{"tp", "var tp trace.TracerProvider", []string{"go.opentelemetry.io/otel/trace"}},
	{"mp", "var mp metric.MeterProvider", []string{"go.opentelemetry.io/otel/metric"}},
	{"key", "var key = make([]byte, 32)", nil},
	{"sharedKey", "var sharedKey = key", nil},
	{"retired", "var retired [][]byte", nil},
	{"issuer", "var issuer = \"https://as.example.com\"", nil},
	{"resource", "var resource = \"https://mcp.example.com/mcp\"", nil},
	{"Weather", "type Weather struct {\n\tCity  string  `json:\"city\"`\n\tTempC float64 `json:\"tempC\"`\n}", nil},
}

// repoRoot is the directory of the module's go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+modulePath+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of " + modulePath + " above the test's directory")
		}
		dir = parent
	}
}

// markdownFiles lists the pages users read: *.md at the root and every .md under docs/.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return fs.SkipDir
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// markdownSnippets returns the ```go blocks of one Markdown file.
func markdownSnippets(rel, text string) ([]snippet, error) {
	var out []snippet
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		fence := trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		info := strings.Fields(strings.TrimPrefix(trimmed, fence))
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != fence {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: unclosed code fence", rel, i+1)
		}
		i = end
		if len(info) == 0 || info[0] != "go" {
			continue
		}
		if start >= 2 {
			prev := strings.TrimSpace(lines[start-2])
			if optOut.MatchString(prev) {
				continue
			}
			if strings.Contains(prev, "snippet:") && strings.HasPrefix(prev, "<!--") {
				return nil, fmt.Errorf("%s:%d: malformed opt-out %q, want <!-- snippet: not compiled, REASON -->", rel, start-1, prev)
			}
		}
		var b strings.Builder
		for _, l := range lines[start:end] {
			b.WriteString(l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):])
			b.WriteByte('\n')
		}
		out = append(out, snippet{file: rel, line: start + 1, code: b.String()})
	}
	return out, nil
}

// goFiles lists the module's non-test Go files, leaving out nested modules, testdata, hidden
// folders and node_modules.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return fs.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// docSnippets returns the Go code blocks of the doc comments of one Go file.
func docSnippets(fset *token.FileSet, rel string, f *ast.File) []snippet {
	var groups []*ast.CommentGroup
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.File:
			groups = append(groups, n.Doc)
		case *ast.GenDecl:
			groups = append(groups, n.Doc)
		case *ast.FuncDecl:
			groups = append(groups, n.Doc)
		case *ast.TypeSpec:
			groups = append(groups, n.Doc)
		case *ast.ValueSpec:
			groups = append(groups, n.Doc)
		case *ast.Field:
			groups = append(groups, n.Doc)
		}
		return true
	})
	var out []snippet
	for _, g := range groups {
		if g == nil {
			continue
		}
		var text []string
		var lineOf []int
		for _, c := range g.List {
			if !strings.HasPrefix(c.Text, "//") {
				continue // block comments hold no examples here
			}
			text = append(text, strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), " "))
			lineOf = append(lineOf, fset.Position(c.Pos()).Line)
		}
		var p comment.Parser
		doc := p.Parse(strings.Join(text, "\n"))
		next := 0
		for _, b := range doc.Content {
			code, ok := b.(*comment.Code)
			if !ok {
				continue
			}
			first := strings.TrimSpace(strings.SplitN(code.Text, "\n", 2)[0])
			line := 0
			for i := next; i < len(text); i++ {
				if strings.TrimSpace(text[i]) == first {
					line, next = lineOf[i], i+1
					break
				}
			}
			if isGo(code.Text) {
				out = append(out, snippet{file: rel, line: line, code: code.Text, doc: true})
			}
		}
	}
	return out
}

// isGo reports whether a doc comment's code block is Go: it parses as Go, or it has the marks of
// Go (then it is compiled, and fails).
func isGo(code string) bool {
	if _, err := wrap(snippet{file: "doc.go", line: 1, code: code}, "x"); err == nil {
		return true
	}
	return goMarks.MatchString(code)
}

// goMarks are what a code block that means to be Go has: a short variable declaration, the func
// keyword, or a line that opens a brace or parenthesis.
var goMarks = regexp.MustCompile(`:=|\bfunc\b|(?m)[{(]\s*$`)

// generated is one snippet made into a package.
type generated struct {
	files map[string]string // file name (slash-separated, may be in a sub-folder) -> contents
}

var embedDirective = regexp.MustCompile(`^//go:embed\s+(.+)$`)

// wrap turns a snippet into the files of package pkg, or explains why the block is not Go.
func wrap(sn snippet, pkg string) (generated, error) {
	g := generated{files: map[string]string{}}
	fset := token.NewFileSet()

	// A whole file.
	if f, err := parser.ParseFile(fset, "", sn.code, parser.PackageClauseOnly); err == nil && f.Name != nil {
		if _, err := parser.ParseFile(fset, "", sn.code, parser.ParseComments); err != nil {
			return g, err
		}
		g.files["snippet.go"] = lineDirective(sn.file, sn.line) + sn.code
		return g, nil
	}

	// Declarations at file level, else statements inside a function body.
	src := lineDirective(sn.file, sn.line) + sn.code
	if _, err := parser.ParseFile(fset, "", "package "+pkg+"\n"+sn.code, parser.ParseComments); err != nil {
		fr, err := newFragment(sn)
		if err != nil {
			return g, err
		}
		src = fr.source()
	}
	f, err := parser.ParseFile(fset, "", "package "+pkg+"\n"+src, parser.ParseComments)
	if err != nil {
		return g, err
	}
	declared := map[string]bool{}
	for name := range f.Scope.Objects {
		declared[name] = true
	}
	g.files["snippet.go"] = "package " + pkg + "\n\n" + imports(f.Unresolved, declared) + src
	g.files["prelude.go"] = preludeFile(pkg, declared)
	addEmbeds(g, f)
	return g, nil
}

// lineDirective makes what follows it report positions from line of file.
func lineDirective(file string, line int) string { return fmt.Sprintf("//line %s:%d:1\n", file, line) }

// fragment is a snippet of statements on its way into a function body.
type fragment struct {
	sn     snippet
	lines  []string     // the snippet's lines; lines[0] is line 1
	lifted map[int]bool // lines moved to file level (//go:embed variables)
	top    strings.Builder
	used   []string // variables the fragment declares at its top level
	usedAt int      // line before which they are marked used: its final return, else past the end
}

func newFragment(sn snippet) (*fragment, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package x\nfunc snippet() error {\n"+sn.code+"\n}\n", parser.ParseComments)
	if err != nil {
		return nil, err
	}
	fr := &fragment{sn: sn, lines: strings.Split(strings.TrimSuffix(sn.code, "\n"), "\n"), lifted: map[int]bool{}}
	codeLine := func(p token.Pos) int { return fset.Position(p).Line - 2 } // 1-based line in sn.code
	body := f.Decls[0].(*ast.FuncDecl).Body
	fr.usedAt = len(fr.lines) + 1
	if n := len(body.List); n > 0 && isReturn(body.List[n-1]) {
		fr.usedAt = codeLine(body.List[n-1].Pos())
	}
	for _, st := range body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					fr.use(e)
				}
			}
		case *ast.DeclStmt:
			gd, ok := st.Decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			if gd.Doc != nil && slices.ContainsFunc(gd.Doc.List, func(c *ast.Comment) bool { return embedDirective.MatchString(c.Text) }) {
				fr.lift(codeLine(gd.Doc.Pos()), codeLine(gd.End())) // a //go:embed variable: package level
				continue
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					fr.use(id)
				}
			}
		}
	}
	return fr, nil
}

// use notes a variable the fragment declares, to mark it used.
func (fr *fragment) use(e ast.Expr) {
	if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
		fr.used = append(fr.used, id.Name)
	}
}

// lift moves lines from..to (inclusive) to file level.
func (fr *fragment) lift(from, to int) {
	fr.top.WriteString(lineDirective(fr.sn.file, fr.sn.line+from-1))
	for l := from; l <= to; l++ {
		fr.top.WriteString(fr.lines[l-1] + "\n")
		fr.lifted[l] = true
	}
}

// source is the fragment as file-level declarations and one function.
func (fr *fragment) source() string {
	var fn strings.Builder
	fn.WriteString("func snippet() error {\n")
	inRun := false
	for l := 1; l <= len(fr.lines)+1; l++ {
		if l == fr.usedAt && len(fr.used) > 0 {
			fn.WriteString(lineDirective("snippet-wrapper.go", 1))
			for _, name := range fr.used {
				fn.WriteString("\t_ = " + name + "\n")
			}
			inRun = false
		}
		if l > len(fr.lines) || fr.lifted[l] {
			inRun = false
			continue
		}
		if !inRun {
			fn.WriteString(lineDirective(fr.sn.file, fr.sn.line+l-1))
			inRun = true
		}
		fn.WriteString(fr.lines[l-1] + "\n")
	}
	if fr.usedAt > len(fr.lines) {
		fn.WriteString(lineDirective("snippet-wrapper.go", 1) + "\treturn nil\n")
	}
	fn.WriteString("}\n")
	return fr.top.String() + fn.String()
}

func isReturn(st ast.Stmt) bool {
	_, ok := st.(*ast.ReturnStmt)
	return ok
}

// imports is the import block for the packages a snippet names.
func imports(unresolved []*ast.Ident, declared map[string]bool) string {
	var paths []string
	for _, id := range unresolved {
		if p, ok := packages[id.Name]; ok && !declared[id.Name] && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return ""
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("import (\n")
	for _, p := range paths {
		b.WriteString("\t" + strconv.Quote(p) + "\n")
	}
	b.WriteString(")\n\n")
	return b.String()
}

// preludeFile declares the prelude's names a snippet does not declare itself.
func preludeFile(pkg string, declared map[string]bool) string {
	var decls []string
	var paths []string
	for _, e := range prelude {
		if declared[e.name] {
			continue
		}
		decls = append(decls, e.decl)
		for _, p := range e.imports {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("package " + pkg + "\n\nimport (\n")
	for _, p := range paths {
		b.WriteString("\t" + strconv.Quote(p) + "\n")
	}
	b.WriteString(")\n\n" + strings.Join(decls, "\n") + "\n")
	return b.String()
}

// addEmbeds gives every //go:embed pattern of f a placeholder file to embed.
func addEmbeds(g generated, f *ast.File) {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			m := embedDirective.FindStringSubmatch(c.Text)
			if m == nil {
				continue
			}
			for _, pattern := range strings.Fields(m[1]) {
				pattern = strings.TrimPrefix(strings.Trim(pattern, "\"`"), "all:")
				if strings.ContainsAny(pattern, "*?[") {
					g.files[strings.NewReplacer("*", "x", "?", "x", "[", "", "]", "").Replace(pattern)] = "placeholder\n"
				} else {
					g.files[pattern+"/placeholder.txt"] = "placeholder\n"
				}
			}
		}
	}
}

// collect gathers every snippet of the documentation.
func collect(t *testing.T, root string) []snippet {
	t.Helper()
	var all []snippet
	for _, path := range markdownFiles(t, root) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		sns, err := markdownSnippets(filepath.ToSlash(rel), string(b))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sns...)
	}
	fset := token.NewFileSet()
	for _, path := range goFiles(t, root) {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		all = append(all, docSnippets(fset, filepath.ToSlash(rel), f)...)
	}
	return all
}

// selfCheck is a broken snippet built with the others: its error must come back naming its
// made-up position, which proves the build ran and that positions map back to the docs.
var selfCheck = snippet{file: "selfcheck.md", line: 41, code: "var n int = \"not a number\"\n"}

// TestSnippetsCompile builds every Go snippet of the README, the docs pages and the package docs.
func TestSnippetsCompile(t *testing.T) {
	goTool := testutil.NeedBinary(t, "go", "golang-go")
	root := repoRoot(t)
	sns := collect(t, root)
	if len(sns) == 0 {
		t.Fatal("no snippets found")
	}
	tmp := t.TempDir()
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.Replace(string(goMod), "module "+modulePath+"\n", "module snippets\n", 1) +
		"\nrequire " + modulePath + " v0.0.0\n\nreplace " + modulePath + " => " + root + "\n"
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "go.mod"), mod)
	writeFile(t, filepath.Join(tmp, "go.sum"), string(goSum))

	for i, sn := range append(sns, selfCheck) {
		pkg := fmt.Sprintf("s%03d", i)
		abs := sn
		abs.file = filepath.Join(root, filepath.FromSlash(sn.file))
		g, err := wrap(abs, pkg)
		if err != nil {
			t.Errorf("%s: snippet is not Go: %v", sn, err)
			continue
		}
		for name, body := range g.files {
			writeFile(t, filepath.Join(tmp, pkg, filepath.FromSlash(name)), body)
		}
	}

	var out bytes.Buffer
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		cmd.Stdout, cmd.Stderr = &out, &out
		_ = cmd.Run() // failures are read from the output
	}
	report := strings.ReplaceAll(out.String(), root+string(filepath.Separator), "")
	selfCheckPos := filepath.Join(root, selfCheck.file)
	var failures []string
	sawSelfCheck := false
	seen := map[string]bool{}
	for _, line := range strings.Split(report, "\n") {
		line = strings.TrimPrefix(line, "vet: ") // go vet repeats the type errors go build found
		if seen[line] {
			continue
		}
		seen[line] = true
		switch {
		case strings.Contains(line, selfCheckPos) || strings.Contains(line, selfCheck.file+":"):
			sawSelfCheck = sawSelfCheck || strings.Contains(line, fmt.Sprintf("%s:%d:", selfCheck.file, selfCheck.line))
		case strings.HasPrefix(line, "# ") || strings.TrimSpace(line) == "":
		default:
			failures = append(failures, line)
		}
	}
	if !sawSelfCheck {
		t.Fatalf("the deliberately broken snippet was not reported at %s; go build and go vet said:\n%s", selfCheck, report)
	}
	if len(failures) > 0 {
		t.Errorf("documentation snippets that do not compile or do not pass go vet (%d of %d: %s):\n%s",
			len(failedSnippets(failures, sns)), len(sns), strings.Join(failedSnippets(failures, sns), ", "), strings.Join(failures, "\n"))
	}
}

// failedSnippets lists the snippets the failure lines point into.
func failedSnippets(failures []string, sns []snippet) []string {
	pos := regexp.MustCompile(`^([^:\s]+\.(?:md|go)):(\d+)`)
	var names []string
	for _, f := range failures {
		m := pos.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		for _, sn := range sns {
			if sn.file == m[1] && line >= sn.line && line < sn.line+strings.Count(sn.code, "\n") && !slices.Contains(names, sn.String()) {
				names = append(names, sn.String())
			}
		}
	}
	return names
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMarkdownSnippets checks which fenced blocks are taken, where they start, and the opt-out.
func TestMarkdownSnippets(t *testing.T) {
	page := "# t\n\n```go\nx := 1\n```\n\n```sh\nmake run\n```\n\n<!-- snippet: not compiled, shows a shape only -->\n```go\nnot go\n```\n\n  ```go\n  y := 2\n  ```\n"
	sns, err := markdownSnippets("p.md", page)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sn := range sns {
		got = append(got, fmt.Sprintf("%s %q", sn, sn.code))
	}
	want := []string{`p.md:4 "x := 1\n"`, `p.md:17 "y := 2\n"`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := markdownSnippets("p.md", "<!-- snippet: not compiled -->\n```go\nx\n```\n"); err == nil {
		t.Fatal("an opt-out without a reason was accepted")
	}
	if _, err := markdownSnippets("p.md", "```go\nx := 1\n"); err == nil {
		t.Fatal("an unclosed fence was accepted")
	}
}

// TestIsGo checks the classification of doc comment code blocks.
func TestIsGo(t *testing.T) {
	for code, want := range map[string]bool{
		"go run ./examples/hello -http 127.0.0.1:8080  # HTTP\n":                              false,
		"recover -> tracing -> decode\n        -> handler (JSON or SSE; GET stream)\n":        false,
		"POST /token   form: subject; answers\n              {\"access_token\", \"scope\"}\n": false,
		"h := mcphttp.New(server, mcphttp.Options{})\n":                                       true,
		"type T struct{ A int }\n":                                                            true,
		"h := mcphttp.New(server,\n":                                                          true, // broken Go is still Go
	} {
		if got := isGo(code); got != want {
			t.Errorf("isGo(%q) = %v, want %v", code, got, want)
		}
	}
}

// TestWrap checks the three shapes a block becomes.
func TestWrap(t *testing.T) {
	g, err := wrap(snippet{file: "R.md", line: 10, code: "//go:embed skills\nvar files embed.FS\n\nout, err := f(files)\nreturn err\n"}, "p")
	if err != nil {
		t.Fatal(err)
	}
	src := g.files["snippet.go"]
	for _, want := range []string{"\t\"embed\"\n", "//line R.md:10:1\n//go:embed skills\nvar files embed.FS\n", "func snippet() error {\n//line R.md:12:1\n", "\t_ = out\n\t_ = err\n//line R.md:14:1\nreturn err\n}\n"} {
		if !strings.Contains(src, want) {
			t.Errorf("statements: %q not in\n%s", want, src)
		}
	}
	if strings.Contains(src, "return nil") {
		t.Errorf("a return was added after the fragment's own:\n%s", src)
	}
	if _, ok := g.files["skills/placeholder.txt"]; !ok {
		t.Errorf("no placeholder for the embed pattern: %v", g.files)
	}
	g, err = wrap(snippet{file: "R.md", line: 3, code: "type ctx struct{}\n\nfunc F(c ctx) *core.Server { return s }\n"}, "p")
	if err != nil {
		t.Fatal(err)
	}
	if src := g.files["snippet.go"]; !strings.Contains(src, "package p\n\nimport (\n\t\""+modulePath+"/core\"\n)\n\n//line R.md:3:1\ntype ctx struct{}") {
		t.Errorf("declarations:\n%s", src)
	}
	if p := g.files["prelude.go"]; strings.Contains(p, "var ctx") || !strings.Contains(p, "var s = ") {
		t.Errorf("the prelude must leave out what the snippet declares and keep the rest:\n%s", p)
	}
	g, err = wrap(snippet{file: "R.md", line: 1, code: "package main\n\nfunc main() {}\n"}, "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.files) != 1 || g.files["snippet.go"] != "//line R.md:1:1\npackage main\n\nfunc main() {}\n" {
		t.Errorf("a whole file must compile as it is: %q", g.files)
	}
}
