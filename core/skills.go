package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	yaml "go.yaml.in/yaml/v3"
)

// The skills extension (SEP-2640): Agent Skills served as resources. Each file of a skill
// directory is a resource skill://<skill-path>/<file-path>; skills/list enumerates the skills
// with their frontmatter and the digest and size of every file; skills/get returns one entry by
// the URI of its SKILL.md; resources/directory/read lists the direct children of a directory of
// the skill namespace.

// SkillsExtension is the extension identifier of skills.
const SkillsExtension = "io.modelcontextprotocol/skills"

// DirectoryMimeType is the mimeType of a directory resource.
const DirectoryMimeType = "inode/directory"

// SkillOptions bound the skills a server registers (SEP-2640 asks servers not to serve more).
type SkillOptions struct {
	// MaxFiles caps the files of one skill, SKILL.md included. Zero means DefaultMaxSkillFiles
	// (512); negative removes the cap. AddSkill refuses a larger skill.
	MaxFiles int
	// MaxBytes caps the total size of one skill's files. Zero means DefaultMaxSkillBytes
	// (16 MiB); negative removes the cap. AddSkill refuses a larger skill.
	MaxBytes int64
}

// Defaults of SkillOptions.
const (
	DefaultMaxSkillFiles       = 512
	DefaultMaxSkillBytes int64 = 16 << 20
)

// Skill is a registered skill as skills/list and skills/get describe it.
type Skill struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string
	// Name and Description are the frontmatter's name and description.
	Name, Description string
	// Frontmatter is the SKILL.md frontmatter rendered as a JSON object.
	Frontmatter json.RawMessage
	// Files are the skill's files, SKILL.md first, then by path.
	Files []SkillFile
}

// SkillFile is one file of a skill.
type SkillFile struct {
	URI      string
	MimeType string
	Size     int64
	// Digest is "sha256:" and the lowercase hex SHA-256 of the content.
	Digest  string
	content []byte
}

type skillEntry struct {
	skill Skill
	root  string // skill://<skill-path>
}

// AddSkill registers the skill whose directory is the root of fsys (use fs.Sub to pick a
// sub-directory of an embed.FS) at skill://<skillPath>, replacing a skill at the same path. The
// directory must hold a SKILL.md that begins with YAML frontmatter naming the skill (name and
// description); the last segment of skillPath must be that name, which follows the Agent Skills
// naming rules (1-64 characters of a-z, 0-9 and '-', no leading, trailing or doubled '-');
// earlier segments are an organizational prefix. Every file becomes a resource (read once, now),
// and the skill is announced by skills/list. It returns an error for a skill that breaks these
// rules or the SkillOptions limits.
func (s *Server) AddSkill(skillPath string, fsys fs.FS) error {
	if fsys == nil {
		return errors.New("mcpkit: AddSkill needs a file system")
	}
	segs, name, err := checkSkillPath(skillPath)
	if err != nil {
		return err
	}
	root := "skill://" + skillPath
	files, dirs, err := readSkillFiles(fsys, root, s.opts.Skills)
	if err != nil {
		return fmt.Errorf("mcpkit: AddSkill %q: %w", skillPath, err)
	}
	if !putSkillMDFirst(files, root) {
		return fmt.Errorf("mcpkit: AddSkill %q: the directory has no SKILL.md", skillPath)
	}
	fm, fmName, fmDesc, err := parseFrontmatter(files[0].content)
	if err != nil {
		return fmt.Errorf("mcpkit: AddSkill %q: SKILL.md: %w", skillPath, err)
	}
	if fmName != name {
		return fmt.Errorf("mcpkit: AddSkill %q: the frontmatter names the skill %q, but the last segment of its path is %q", skillPath, fmName, name)
	}
	e := &skillEntry{root: root, skill: Skill{URI: files[0].URI, Name: fmName, Description: fmDesc, Frontmatter: json.RawMessage(fm), Files: files}}
	s.installSkill(skillPath, e, skillTree(segs, root, dirs, files))
	_ = s.notifyListChanged(context.Background(), ResourcesListChanged)
	return nil
}

// checkSkillPath checks a skill path for AddSkill and returns its segments and the skill name
// (the last segment).
func checkSkillPath(skillPath string) (segs []string, name string, err error) {
	segs = strings.Split(skillPath, "/")
	for i, seg := range segs {
		if !validPathSegment(seg) {
			return nil, "", fmt.Errorf("mcpkit: AddSkill: skill path %q: segment %d (%q) must be 1 or more of A-Z a-z 0-9 . _ ~ - (and not . or ..)", skillPath, i+1, seg)
		}
	}
	name = segs[len(segs)-1]
	if !ValidSkillName(name) {
		return nil, "", fmt.Errorf("mcpkit: AddSkill: skill name %q (the last segment of %q) must be 1-64 characters of a-z, 0-9 and '-', without a leading, trailing or doubled '-'", name, skillPath)
	}
	return segs, name, nil
}

// readSkillFiles reads every regular file of fsys as a file of the skill at root, within the
// limits, and lists its sub-directories. Files come in walk order.
func readSkillFiles(fsys fs.FS, root string, limits SkillOptions) (files []SkillFile, dirs []string, err error) {
	var total int64
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." {
				dirs = append(dirs, p)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks and devices are not part of a skill
		}
		if !uriSafeFilePath(p) {
			return fmt.Errorf("file %q: its name cannot be part of a resource URI", p)
		}
		if limits.MaxFiles >= 0 && len(files) >= limits.MaxFiles {
			return fmt.Errorf("more than %d files (SkillOptions.MaxFiles)", limits.MaxFiles)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += int64(len(b))
		if limits.MaxBytes >= 0 && total > limits.MaxBytes {
			return fmt.Errorf("more than %d bytes (SkillOptions.MaxBytes)", limits.MaxBytes)
		}
		sum := sha256.Sum256(b)
		files = append(files, SkillFile{URI: root + "/" + p, MimeType: skillMimeType(p, b), Size: int64(len(b)),
			Digest: "sha256:" + hex.EncodeToString(sum[:]), content: b})
		return nil
	})
	return files, dirs, err
}

// uriSafeFilePath reports whether every segment of a slash-separated file path can stand in a
// resource URI as it is.
func uriSafeFilePath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || strings.ContainsAny(seg, "?#%\\") {
			return false
		}
	}
	return true
}

// putSkillMDFirst orders a skill's files SKILL.md first (as text/markdown), then by URI. It
// reports false when there is no SKILL.md.
func putSkillMDFirst(files []SkillFile, root string) bool {
	idx := slices.IndexFunc(files, func(f SkillFile) bool { return f.URI == root+"/SKILL.md" })
	if idx < 0 {
		return false
	}
	files[0], files[idx] = files[idx], files[0]
	slices.SortFunc(files[1:], func(a, b SkillFile) int { return strings.Compare(a.URI, b.URI) })
	files[0].MimeType = "text/markdown"
	return true
}

// skillTree builds the directory resources of a skill: the prefix above its root (from the path
// segments), its root and sub-directories, each mapped to its direct children by URI.
func skillTree(segs []string, root string, dirs []string, files []SkillFile) map[string]map[string]Resource {
	tree := map[string]map[string]Resource{}
	addChild := func(dir string, r Resource) {
		if tree[dir] == nil {
			tree[dir] = map[string]Resource{}
		}
		tree[dir][r.URI] = r
	}
	for i := 1; i < len(segs); i++ {
		parent := "skill://" + strings.Join(segs[:i], "/")
		child := "skill://" + strings.Join(segs[:i+1], "/")
		addChild(parent, Resource{URI: child, Name: segs[i], MimeType: DirectoryMimeType})
	}
	parentOf := func(rel string) string {
		if d := path.Dir(rel); d != "." {
			return root + "/" + d
		}
		return root
	}
	tree[root] = map[string]Resource{}
	for _, d := range dirs {
		addChild(parentOf(d), Resource{URI: root + "/" + d, Name: path.Base(d), MimeType: DirectoryMimeType})
	}
	for _, f := range files {
		size := f.Size
		rel := strings.TrimPrefix(f.URI, root+"/")
		addChild(parentOf(rel), Resource{URI: f.URI, Name: path.Base(rel), MimeType: f.MimeType, Size: &size})
	}
	return tree
}

// installSkill registers a read skill, its directories and its files as resources, replacing a
// skill at the same path.
func (s *Server) installSkill(skillPath string, e *skillEntry, tree map[string]map[string]Resource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.skills.get(skillPath); ok {
		for _, f := range old.skill.Files {
			s.resources.remove(f.URI)
		}
		s.dropSkillDirs(old)
	}
	s.skills.set(skillPath, e)
	if s.skillDirs == nil {
		s.skillDirs = map[string]map[string]Resource{}
	}
	for dir, kids := range tree {
		if s.skillDirs[dir] == nil {
			s.skillDirs[dir] = map[string]Resource{}
		}
		for uri, r := range kids {
			s.skillDirs[dir][uri] = r
		}
	}
	for i, f := range e.skill.Files {
		size := f.Size
		r := Resource{URI: f.URI, Name: path.Base(f.URI), MimeType: f.MimeType, Size: &size}
		if i == 0 {
			r.Name, r.Description = e.skill.Name, e.skill.Description
		}
		s.resources.set(f.URI, &resourceEntry{resource: r, handler: f.serve})
	}
}

// dropSkillDirs removes the directory entries of a replaced skill; s.mu is held.
func (s *Server) dropSkillDirs(e *skillEntry) {
	for dir := range s.skillDirs {
		if dir == e.root || strings.HasPrefix(dir, e.root+"/") {
			delete(s.skillDirs, dir)
		}
	}
}

// serve answers resources/read of the file: text when it is UTF-8 text, base64 otherwise.
func (f SkillFile) serve(_ context.Context, req *ResourceRequest) (*ReadResourceResult, error) {
	c := ResourceContents{URI: f.URI, MimeType: f.MimeType}
	if textual(f.MimeType) && utf8.Valid(f.content) {
		c.Text = string(f.content)
	} else {
		c.Blob = base64.StdEncoding.EncodeToString(f.content)
	}
	return &ReadResourceResult{Contents: []ResourceContents{c}}, nil
}

// Skills returns the registered skills, in registration order.
func (s *Server) Skills() []Skill {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Skill, 0, s.skills.len())
	for _, e := range s.skills.values() {
		out = append(out, e.skill)
	}
	return out
}

// ValidSkillName reports whether name follows the Agent Skills naming rules: 1 to 64 characters
// of a-z, 0-9 and '-', with no leading, trailing or consecutive '-'.
func ValidSkillName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validPathSegment accepts the unreserved URI characters only, so a segment is valid both as a
// reg-name (the first one is the URI's authority) and as a path segment.
func validPathSegment(seg string) bool {
	if seg == "" || seg == "." || seg == ".." {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	return true
}

// skillMimeTypes are the media types of common skill files, by extension: fixed, so a skill is
// described the same on every machine.
var skillMimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".csv": "text/csv",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".js": "text/javascript",
	".mjs": "text/javascript", ".ts": "text/x-typescript", ".py": "text/x-python",
	".sh": "text/x-shellscript", ".rb": "text/x-ruby", ".go": "text/x-go",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".xml": "application/xml", ".svg": "image/svg+xml",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".pdf": "application/pdf", ".zip": "application/zip",
}

func skillMimeType(p string, content []byte) string {
	if t, ok := skillMimeTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	if utf8.Valid(content) && !bytes.ContainsRune(content, 0) {
		return "text/plain"
	}
	return "application/octet-stream"
}

func textual(mimeType string) bool {
	switch {
	case strings.HasPrefix(mimeType, "text/"):
		return true
	case mimeType == "application/json", mimeType == "application/yaml", mimeType == "application/toml",
		mimeType == "application/xml", mimeType == "image/svg+xml":
		return true
	}
	return false
}

// parseFrontmatter reads the YAML frontmatter at the start of a SKILL.md (between two "---"
// lines) and renders it as a JSON object, returning its name and description, which are
// required.
func parseFrontmatter(md []byte) (jsontext.Value, string, string, error) {
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	rest, ok := cutLine(md, "---")
	if !ok {
		return nil, "", "", errors.New("it must begin with YAML frontmatter (a --- line)")
	}
	var block []byte
	found := false
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if strings.TrimRight(string(bytes.TrimSuffix(line, []byte("\r"))), " \t") == "---" {
			found = true
			break
		}
		block = append(block, line...)
		block = append(block, '\n')
		rest = after
	}
	if !found {
		return nil, "", "", errors.New("the frontmatter has no closing --- line")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(block, &doc); err != nil {
		return nil, "", "", fmt.Errorf("the frontmatter is not valid YAML: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, "", "", errors.New("the frontmatter must be a YAML mapping")
	}
	v, err := yamlValue(doc.Content[0], 0)
	if err != nil {
		return nil, "", "", fmt.Errorf("the frontmatter: %w", err)
	}
	m := v.(map[string]any)
	name, _ := m["name"].(string)
	desc, _ := m["description"].(string)
	if name == "" || desc == "" {
		return nil, "", "", errors.New("the frontmatter needs a name and a description (non-empty strings)")
	}
	b, err := marshal(m)
	if err != nil {
		return nil, "", "", err
	}
	return jsontext.Value(b), name, desc, nil
}

// cutLine returns what follows the first line of b when that line is want.
func cutLine(b []byte, want string) ([]byte, bool) {
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	if strings.TrimRight(string(bytes.TrimSuffix(line, []byte("\r"))), " \t") != want {
		return nil, false
	}
	return rest, true
}

// yamlValue turns a YAML node into JSON values the way YAML 1.2's core schema reads them:
// timestamps and other tags stay strings.
func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlValue(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := yamlValue(n.Content[i], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = v
		}
		return m, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return n.Value, nil
			}
			return v, nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("unsupported YAML node at line %d", n.Line)
}

// skillEntryWire is a skill entry of skills/list and skills/get.
type skillEntryWire struct {
	URI         string              `json:"uri"`
	Frontmatter jsontext.Value      `json:"frontmatter"`
	Resources   []skillResourceWire `json:"resources"`
}

type skillResourceWire struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

func (e *skillEntry) wire() skillEntryWire {
	w := skillEntryWire{URI: e.skill.URI, Frontmatter: jsontext.Value(e.skill.Frontmatter), Resources: make([]skillResourceWire, len(e.skill.Files))}
	for i, f := range e.skill.Files {
		w.Resources[i] = skillResourceWire{URI: f.URI, Digest: f.Digest, Size: f.Size}
	}
	return w
}

type listSkillsResult struct {
	Skills     []skillEntryWire `json:"skills"`
	NextCursor string           `json:"nextCursor,omitzero"`
	Meta       Meta             `json:"_meta,omitzero"`
}

func handleListSkills(c *Call) (any, error) {
	items, next, err := listPage(c, &c.session.server.skills, (*skillEntry).wire)
	if err != nil {
		return nil, err
	}
	return &listSkillsResult{Skills: items, NextCursor: next}, nil
}

type getSkillResult struct {
	Skill skillEntryWire `json:"skill"`
	Meta  Meta           `json:"_meta,omitzero"`
}

func handleGetSkill(c *Call) (any, error) {
	uri, err := uriParam(c)
	if err != nil {
		return nil, err
	}
	s := c.session.server
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.skills.values() {
		if e.skill.URI == uri {
			return &getSkillResult{Skill: e.wire()}, nil
		}
	}
	return nil, &Error{Code: CodeInvalidParams, Message: "Skill not found: " + uri, Data: map[string]string{"uri": uri}}
}

type directoryReadResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
}

func handleReadDirectory(c *Call) (any, error) {
	var p struct {
		URI    jsontext.Value `json:"uri"`
		Cursor jsontext.Value `json:"cursor"`
	}
	if !rawObject(c.params) || unmarshal(c.params, &p) != nil {
		return nil, InvalidParams("Invalid params")
	}
	var uri string
	if p.URI.Kind() != '"' || unmarshal(p.URI, &uri) != nil {
		return nil, InvalidParams("Missing or invalid uri")
	}
	cursor, err := listParams(c)
	if err != nil {
		return nil, err
	}
	s := c.session.server
	s.mu.RLock()
	kids, ok := s.skillDirs[uri]
	items := make([]Resource, 0, len(kids))
	for _, r := range kids {
		items = append(items, r)
	}
	s.mu.RUnlock()
	if !ok {
		return nil, &Error{Code: CodeInvalidParams, Message: "Not a directory: " + uri, Data: map[string]string{"uri": uri}}
	}
	slices.SortFunc(items, func(a, b Resource) int { return strings.Compare(a.URI, b.URI) })
	page, next, err := paginate(items, cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return &directoryReadResult{Resources: page, NextCursor: next}, nil
}
