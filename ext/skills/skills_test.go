package skills_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/internal/coretest"
)

const refundsMD = "---\nname: refunds\ndescription: Process refunds per policy\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  since: 2026-01-02\n  count: 3\n  tags: [a, b]\n  nothing: ~\n---\n\n# Refunds\nSee references/POLICY.md.\n"

func refundsFS() fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":               {Data: []byte(refundsMD)},
		"references/POLICY.md":   {Data: []byte("# Policy\n")},
		"templates/email.txt":    {Data: []byte("Dear customer")},
		"templates/eu/form.json": {Data: []byte(`{"a":1}`)},
		"assets/logo.bin":        {Data: []byte{0xff, 0x00, 0x01}},
	}
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// client sends 2026-07-28 requests to one server.
type client struct {
	t   *testing.T
	srv *core.Server
}

func (c *client) send(method string, params map[string]any) *coretest.Wire {
	c.t.Helper()
	return coretest.Send(c.t, c.srv, "", nil, method, params)
}

func (c *client) ok(method string, params map[string]any) map[string]any {
	c.t.Helper()
	return coretest.OK(c.t, c.srv, "", nil, method, params)
}

// newSkills returns a server with opts and the skills extension configured by sopts.
func newSkills(opts core.Options, sopts skills.Options) (*skills.Extension, *core.Server) {
	sk := skills.New(sopts)
	opts.Extensions = append(opts.Extensions, sk)
	return sk, core.NewServer(core.Implementation{Name: "skills", Version: "1"}, opts)
}

func skillServer(t *testing.T, opts core.Options) (*skills.Extension, *client) {
	t.Helper()
	sk, s := newSkills(opts, skills.Options{})
	if err := sk.Add("acme/billing/refunds", refundsFS()); err != nil {
		t.Fatal(err)
	}
	return sk, &client{t: t, srv: s}
}

func TestSkillsListAndGet(t *testing.T) {
	s, c := skillServer(t, core.Options{})
	caps := c.ok("server/discover", nil)["capabilities"].(map[string]any)
	if ext, _ := caps["extensions"].(map[string]any)[skills.ExtensionID].(map[string]any); ext["directoryRead"] != true {
		t.Errorf("capabilities = %v", caps)
	}
	if caps["resources"] == nil {
		t.Errorf("the skills extension without the resources capability: %v", caps)
	}
	l := c.ok("skills/list", nil)
	if l["ttlMs"] == nil || l["cacheScope"] == nil || l["nextCursor"] != nil {
		t.Errorf("skills/list result = %v", l)
	}
	skills := l["skills"].([]any)
	if len(skills) != 1 {
		t.Fatalf("skills = %v", skills)
	}
	e := skills[0].(map[string]any)
	if e["uri"] != "skill://acme/billing/refunds/SKILL.md" {
		t.Errorf("uri = %v", e["uri"])
	}
	fm, _ := json.Marshal(e["frontmatter"])
	want := `{"description":"Process refunds per policy","license":"Apache-2.0","metadata":{"count":3,"nothing":null,"since":"2026-01-02","tags":["a","b"],"version":"2.1"},"name":"refunds"}`
	if string(fm) != want {
		t.Errorf("frontmatter = %s, want %s", fm, want)
	}
	res := e["resources"].([]any)
	wantFiles := map[string][]byte{}
	for p, f := range refundsFS() {
		wantFiles["skill://acme/billing/refunds/"+p] = f.Data
	}
	if len(res) != len(wantFiles) || res[0].(map[string]any)["uri"] != e["uri"] {
		t.Errorf("resources = %v (SKILL.md first, every file once)", res)
	}
	for _, r := range res {
		m := r.(map[string]any)
		data, ok := wantFiles[m["uri"].(string)]
		if !ok || m["digest"] != digest(data) || m["size"] != float64(len(data)) {
			t.Errorf("resource %v, want digest %s size %d", m, digest(data), len(data))
		}
	}
	g := c.ok("skills/get", map[string]any{"uri": "skill://acme/billing/refunds/SKILL.md"})
	if g["nextCursor"] != nil || g["ttlMs"] == nil || g["cacheScope"] == nil {
		t.Errorf("skills/get result = %v", g)
	}
	got, _ := json.Marshal(g["skill"])
	listed, _ := json.Marshal(e)
	if string(got) != string(listed) {
		t.Errorf("skills/get entry %s differs from the listing's %s", got, listed)
	}
	for _, uri := range []string{"skill://acme/billing/refunds", "skill://nope/SKILL.md", "skill://acme/billing/refunds/references/POLICY.md"} {
		w := c.send("skills/get", map[string]any{"uri": uri})
		coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Skill not found: "+uri, map[string]any{"uri": uri})
	}
	if got := s.Skills(); len(got) != 1 || got[0].Name != "refunds" || len(got[0].Files) != 5 {
		t.Errorf("Skills() = %+v", got)
	}
}

func TestSkillsPagination(t *testing.T) {
	s, c := skillServer(t, core.Options{PageSize: 1})
	other := fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: second\ndescription: d\n---\n")}}
	if err := s.Add("second", other); err != nil {
		t.Fatal(err)
	}
	p1 := c.ok("skills/list", nil)
	cursor, _ := p1["nextCursor"].(string)
	if len(p1["skills"].([]any)) != 1 || cursor == "" {
		t.Fatalf("page 1 = %v", p1)
	}
	p2 := c.ok("skills/list", map[string]any{"cursor": cursor})
	if s := p2["skills"].([]any); len(s) != 1 || s[0].(map[string]any)["uri"] != "skill://second/SKILL.md" || p2["nextCursor"] != nil {
		t.Errorf("page 2 = %v", p2)
	}
	w := c.send("skills/list", map[string]any{"cursor": "bogus"})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Invalid params", "Invalid cursor")
	// Directory pages: the skill root holds SKILL.md and three directories.
	var uris []string
	var next any = nil
	for {
		params := map[string]any{"uri": "skill://acme/billing/refunds"}
		if next != nil {
			params["cursor"] = next
		}
		r := c.ok("resources/directory/read", params)
		for _, x := range r["resources"].([]any) {
			uris = append(uris, x.(map[string]any)["uri"].(string))
		}
		if next = r["nextCursor"]; next == nil {
			break
		}
	}
	if strings.Join(uris, " ") != "skill://acme/billing/refunds/SKILL.md skill://acme/billing/refunds/assets skill://acme/billing/refunds/references skill://acme/billing/refunds/templates" {
		t.Errorf("directory pages = %v", uris)
	}
}

func TestSkillsDirectoryAndRead(t *testing.T) {
	_, c := skillServer(t, core.Options{})
	r := c.ok("resources/directory/read", map[string]any{"uri": "skill://acme/billing/refunds/templates"})
	kids := r["resources"].([]any)
	if len(kids) != 2 {
		t.Fatalf("templates/ = %v", kids)
	}
	if d := kids[0].(map[string]any); d["uri"] != "skill://acme/billing/refunds/templates/email.txt" || d["mimeType"] != "text/plain" || d["size"] != float64(13) || d["name"] != "email.txt" {
		t.Errorf("file child = %v", d)
	}
	if d := kids[1].(map[string]any); d["uri"] != "skill://acme/billing/refunds/templates/eu" || d["mimeType"] != skills.DirectoryMimeType || d["name"] != "eu" {
		t.Errorf("directory child = %v", d)
	}
	// The organizational prefix is a directory too.
	r = c.ok("resources/directory/read", map[string]any{"uri": "skill://acme"})
	if kids := r["resources"].([]any); len(kids) != 1 || kids[0].(map[string]any)["uri"] != "skill://acme/billing" {
		t.Errorf("skill://acme = %v", kids)
	}
	// The form with a trailing slash names the same directory.
	for _, uri := range []string{"skill://acme/billing/refunds/templates/", "skill://acme/"} {
		want := strings.TrimSuffix(uri, "/")
		again := c.ok("resources/directory/read", map[string]any{"uri": uri})
		other := c.ok("resources/directory/read", map[string]any{"uri": want})
		if fmt.Sprint(again["resources"]) != fmt.Sprint(other["resources"]) {
			t.Errorf("%s = %v, want the children of %s", uri, again["resources"], want)
		}
	}
	for _, uri := range []string{"skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds/templates//", "skill://acme/billing/refunds/SKILL.md/", "skill://other"} {
		w := c.send("resources/directory/read", map[string]any{"uri": uri})
		coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Not a directory: "+uri, map[string]any{"uri": uri})
	}
	w := c.send("resources/directory/read", map[string]any{})
	coretest.WantError(t, w, jsonrpc.CodeInvalidParams, "Invalid params", "Missing or invalid uri")

	// resources/read serves every file: text as is, anything else in base64.
	md := c.ok("resources/read", map[string]any{"uri": "skill://acme/billing/refunds/SKILL.md"})
	content := md["contents"].([]any)[0].(map[string]any)
	if content["text"] != refundsMD || content["mimeType"] != "text/markdown" {
		t.Errorf("SKILL.md = %v", content)
	}
	bin := c.ok("resources/read", map[string]any{"uri": "skill://acme/billing/refunds/assets/logo.bin"})
	content = bin["contents"].([]any)[0].(map[string]any)
	if content["blob"] != base64.StdEncoding.EncodeToString([]byte{0xff, 0, 1}) || content["mimeType"] != "application/octet-stream" {
		t.Errorf("logo.bin = %v", content)
	}
	// resources/list names the SKILL.md after its frontmatter.
	for _, x := range c.ok("resources/list", nil)["resources"].([]any) {
		m := x.(map[string]any)
		if m["uri"] == "skill://acme/billing/refunds/SKILL.md" && (m["name"] != "refunds" || m["description"] != "Process refunds per policy" || m["mimeType"] != "text/markdown") {
			t.Errorf("SKILL.md resource = %v", m)
		}
	}
}

func TestAddSkillRules(t *testing.T) {
	md := func(fm string) fstest.MapFS { return fstest.MapFS{"SKILL.md": {Data: []byte(fm)}} }
	cases := []struct {
		name, path string
		fsys       fstest.MapFS
		opts       skills.Options
		want       string
	}{
		{"no SKILL.md", "x", fstest.MapFS{"README.md": {Data: []byte("hi")}}, skills.Options{}, "has no SKILL.md"},
		{"no frontmatter", "x", md("# x\n"), skills.Options{}, "must begin with YAML frontmatter"},
		{"unclosed", "x", md("---\nname: x\n"), skills.Options{}, "no closing ---"},
		{"no description", "x", md("---\nname: x\n---\n"), skills.Options{}, "needs a name and a description"},
		{"not a mapping", "x", md("---\n- a\n---\n"), skills.Options{}, "must be a YAML mapping"},
		{"bad yaml", "x", md("---\nname: [\n---\n"), skills.Options{}, "not valid YAML"},
		{"name mismatch", "a/x", md("---\nname: y\ndescription: d\n---\n"), skills.Options{}, `names the skill "y"`},
		{"bad name", "X_y", md("---\nname: X_y\ndescription: d\n---\n"), skills.Options{}, "skill name"},
		{"doubled hyphen", "a--b", md("---\nname: a--b\ndescription: d\n---\n"), skills.Options{}, "skill name"},
		{"bad segment", "a b/x", md("---\nname: x\ndescription: d\n---\n"), skills.Options{}, "segment 1"},
		{"dot segment", "../x", md("---\nname: x\ndescription: d\n---\n"), skills.Options{}, "segment 1"},
		{"too many files", "x", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\ndescription: d\n---\n")}, "a": {Data: []byte("a")}}, skills.Options{MaxFiles: 1}, "more than 1 files"},
		{"too big", "x", md("---\nname: x\ndescription: d\n---\n"), skills.Options{MaxBytes: 10}, "more than 10 bytes"},
		{"bad file name", "x", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\ndescription: d\n---\n")}, "a?b": {Data: []byte("a")}}, skills.Options{}, `holds "?", which a resource URI cannot carry`},
		{"newline in a file name", "x", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\ndescription: d\n---\n")}, "new\nline.md": {Data: []byte("a")}}, skills.Options{}, `holds "\n", which a resource URI cannot carry`},
		{"space in a directory name", "x", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\ndescription: d\n---\n")}, "my docs/a.md": {Data: []byte("a")}}, skills.Options{}, `holds " ", which a resource URI cannot carry`},
		{"percent in a file name", "x", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\ndescription: d\n---\n")}, "a%20b": {Data: []byte("a")}}, skills.Options{}, `holds "%"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sk, s := newSkills(core.Options{}, tc.opts)
			err := sk.Add(tc.path, tc.fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("AddSkill = %v, want an error containing %q", err, tc.want)
			}
			if len(sk.Skills()) != 0 || s.Capabilities().Extensions != nil {
				t.Errorf("a refused skill was registered")
			}
		})
	}
	// Unlimited when negative; a BOM and CRLF line ends are fine; replacing a skill drops its old files.
	sk, s := newSkills(core.Options{}, skills.Options{MaxFiles: -1, MaxBytes: -1})
	if err := sk.Add("x", fstest.MapFS{"SKILL.md": {Data: []byte("\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\n")}, "old.txt": {Data: []byte("o")}}); err != nil {
		t.Fatal(err)
	}
	if err := sk.Add("x", md("---\nname: x\ndescription: new\n---\n")); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, srv: s}
	w := c.send("resources/read", map[string]any{"uri": "skill://x/old.txt"})
	if w.Error == nil {
		t.Errorf("the replaced skill's file is still served: %s", w)
	}
	if got := sk.Skills(); len(got) != 1 || got[0].Description != "new" {
		t.Errorf("Skills() = %+v", sk)
	}
}

// swapFS replaces the file name on disk by a symbolic link to target just before it is opened:
// the swap an attacker makes between the walk and the read.
type swapFS struct {
	fs.FS
	dir, name, target string
}

func (s swapFS) Open(name string) (fs.File, error) {
	if name == s.name {
		p := filepath.Join(s.dir, name)
		if err := os.Remove(p); err != nil {
			return nil, err
		}
		if err := os.Symlink(s.target, p); err != nil {
			return nil, err
		}
	}
	return s.FS.Open(name)
}

// TestSkillsAddDir: AddDir serves a skill from disk, and the FS it reads through (an os.Root's)
// refuses a file swapped for a link leading out of the directory, where os.DirFS reads the
// secret. AddDir did not exist before.
func TestSkillsAddDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "skill")
	secret := filepath.Join(base, "secret.txt")
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "SKILL.md"), "---\nname: disk\ndescription: d\n---\n")
	write(filepath.Join(dir, "notes.md"), "notes")
	write(secret, "SECRET")
	sk, s := newSkills(core.Options{}, skills.Options{})
	if err := sk.AddDir("disk", dir); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, srv: s}
	got := c.ok("resources/read", map[string]any{"uri": "skill://disk/notes.md"})
	if text := got["contents"].([]any)[0].(map[string]any)["text"]; text != "notes" {
		t.Errorf("notes.md = %v", text)
	}
	if err := sk.AddDir("nowhere", filepath.Join(base, "missing")); err == nil || !strings.Contains(err.Error(), `skills: AddDir "nowhere"`) {
		t.Errorf("AddDir of a missing directory = %v", err)
	}

	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := sk.Add("disk", swapFS{FS: root.FS(), dir: dir, name: "notes.md", target: secret}); err == nil {
		t.Error("a file swapped for a link out of the root was read")
	}
	if err := os.Remove(filepath.Join(dir, "notes.md")); err != nil { // undo the swap
		t.Fatal(err)
	}
	write(filepath.Join(dir, "notes.md"), "notes")
	if err := sk.Add("disk", swapFS{FS: os.DirFS(dir), dir: dir, name: "notes.md", target: secret}); err != nil {
		t.Fatal(err)
	}
	got = c.ok("resources/read", map[string]any{"uri": "skill://disk/notes.md"})
	if text := got["contents"].([]any)[0].(map[string]any)["text"]; text != "SECRET" {
		t.Errorf("os.DirFS read %v, not the secret the swapped link leads to: the docs of Add say it follows links", text)
	}
}
