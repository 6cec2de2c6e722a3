package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	yaml "go.yaml.in/yaml/v3"

	"github.com/mcpkit/mcpkit/core"
)

// checkSkillPath checks a skill path for Add and returns its segments and the skill name
// (the last segment).
func checkSkillPath(skillPath string) (segs []string, name string, err error) {
	segs = strings.Split(skillPath, "/")
	for i, seg := range segs {
		if !validPathSegment(seg) {
			return nil, "", fmt.Errorf("skills: Add: skill path %q: segment %d (%q) must be 1 or more of A-Z a-z 0-9 . _ ~ - (and not . or ..)", skillPath, i+1, seg)
		}
	}
	name = segs[len(segs)-1]
	if !ValidName(name) {
		return nil, "", fmt.Errorf("skills: Add: skill name %q (the last segment of %q) must be 1-64 characters of a-z, 0-9 and '-', without a leading, trailing or doubled '-'", name, skillPath)
	}
	return segs, name, nil
}

// readFiles reads every regular file of fsys as a file of the skill at root, within the
// limits, and lists its sub-directories. Files come in walk order.
func readFiles(fsys fs.FS, root string, limits Options) (files []File, dirs []string, err error) {
	var total int64
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil // symlinks and devices are not part of a skill
		}
		if bad, ok := uriSafeFilePath(p); p != "." && !ok {
			return fmt.Errorf("file %q: its path holds %q, which a resource URI cannot carry as it is (RFC 3986 path characters only: letters, digits and -._~!$&'()*+,;=:@); rename it", p, bad)
		}
		if d.IsDir() {
			if p != "." {
				dirs = append(dirs, p)
			}
			return nil
		}
		if limits.MaxFiles >= 0 && len(files) >= limits.MaxFiles {
			return fmt.Errorf("more than %d files (Options.MaxFiles)", limits.MaxFiles)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		total += int64(len(b))
		if limits.MaxBytes >= 0 && total > limits.MaxBytes {
			return fmt.Errorf("more than %d bytes (Options.MaxBytes)", limits.MaxBytes)
		}
		sum := sha256.Sum256(b)
		files = append(files, File{URI: root + "/" + p, MimeType: skillMimeType(p, b), Size: int64(len(b)),
			Digest: "sha256:" + hex.EncodeToString(sum[:]), content: b})
		return nil
	})
	return files, dirs, err
}

// uriSafeFilePath reports whether every segment of a slash-separated file path can stand in a
// resource URI as it is: non-empty, of RFC 3986 path characters (unreserved, sub-delims, ':'
// and '@'; no '%', so no name is taken for an escape). Otherwise it returns the first character
// that cannot ("" for an empty segment).
func uriSafeFilePath(p string) (string, bool) {
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			return "", false
		}
		for _, r := range seg {
			if !uriPathChar(r) {
				return string(r), false
			}
		}
	}
	return "", true
}

// uriPathChar reports whether r is an RFC 3986 pchar other than a percent-encoding.
func uriPathChar(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("-._~!$&'()*+,;=:@", r)
}

// putSkillMDFirst orders a skill's files SKILL.md first (as text/markdown), then by URI. It
// reports false when there is no SKILL.md.
func putSkillMDFirst(files []File, root string) bool {
	idx := slices.IndexFunc(files, func(f File) bool { return f.URI == root+"/SKILL.md" })
	if idx < 0 {
		return false
	}
	files[0], files[idx] = files[idx], files[0]
	slices.SortFunc(files[1:], func(a, b File) int { return strings.Compare(a.URI, b.URI) })
	files[0].MimeType = "text/markdown"
	return true
}

// skillTree builds the directory resources of a skill: the prefix above its root (from the path
// segments), its root and sub-directories, each mapped to its direct children by URI.
func skillTree(segs []string, root string, dirs []string, files []File) map[string]map[string]core.Resource {
	tree := map[string]map[string]core.Resource{}
	addChild := func(dir string, r core.Resource) {
		if tree[dir] == nil {
			tree[dir] = map[string]core.Resource{}
		}
		tree[dir][r.URI] = r
	}
	for i := 1; i < len(segs); i++ {
		parent := "skill://" + strings.Join(segs[:i], "/")
		child := "skill://" + strings.Join(segs[:i+1], "/")
		addChild(parent, core.Resource{URI: child, Name: segs[i], MimeType: DirectoryMimeType})
	}
	parentOf := func(rel string) string {
		if d := path.Dir(rel); d != "." {
			return root + "/" + d
		}
		return root
	}
	tree[root] = map[string]core.Resource{}
	for _, d := range dirs {
		addChild(parentOf(d), core.Resource{URI: root + "/" + d, Name: path.Base(d), MimeType: DirectoryMimeType})
	}
	for _, f := range files {
		size := f.Size
		rel := strings.TrimPrefix(f.URI, root+"/")
		addChild(parentOf(rel), core.Resource{URI: f.URI, Name: path.Base(rel), MimeType: f.MimeType, Size: &size})
	}
	return tree
}

// ValidName reports whether name follows the Agent Skills naming rules: 1 to 64 characters
// of a-z, 0-9 and '-', with no leading, trailing or consecutive '-'.
func ValidName(name string) bool {
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
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
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
