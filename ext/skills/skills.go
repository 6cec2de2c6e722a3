// Package skills is the skills extension (SEP-2640) of an MCP server: Agent Skills served as
// resources. Each file of a skill directory is a resource skill://<skill-path>/<file-path>;
// skills/list enumerates the skills with their frontmatter and the digest and size of every
// file; skills/get returns one entry by the URI of its SKILL.md; resources/directory/read lists
// the direct children of a directory of the skill namespace.
//
// Give the extension to the server, then add skills:
//
//	sk := skills.New(skills.Options{})
//	srv := core.NewServer(impl, core.Options{Extensions: []core.Extension{sk}})
//	if err := sk.Add("acme/release-notes", os.DirFS("skills/release-notes")); err != nil {
//		log.Fatal(err)
//	}
//
// The extension is offered (capabilities.extensions, with directoryRead) once a skill is added.
package skills

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ExtensionID is the extension identifier of skills, its key in capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/skills"

// The methods of the extension: MethodList lists the skills (params: an optional cursor),
// MethodGet returns one (params: the uri of its SKILL.md), MethodDirectoryRead lists a directory
// of the skill:// namespace (params: its uri, with or without a trailing slash, and an optional
// cursor).
const (
	MethodList          = "skills/list"
	MethodGet           = "skills/get"
	MethodDirectoryRead = "resources/directory/read"
)

// DirectoryMimeType is the mimeType of a directory resource.
const DirectoryMimeType = "inode/directory"

// Scheme is the URI scheme of skill resources.
const Scheme = "skill"

// Options bound the skills the extension serves (SEP-2640 asks servers not to serve more).
type Options struct {
	// MaxFiles caps the files of one skill, SKILL.md included. Zero means DefaultMaxFiles (512);
	// negative removes the cap. Add refuses a larger skill.
	MaxFiles int
	// MaxBytes caps the total size of one skill's files. Zero means DefaultMaxBytes (16 MiB);
	// negative removes the cap. Add refuses a larger skill.
	MaxBytes int64
}

// Defaults of Options.
const (
	DefaultMaxFiles       = 512
	DefaultMaxBytes int64 = 16 << 20
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
	Files []File
}

// File is one file of a skill.
type File struct {
	URI      string
	MimeType string
	Size     int64
	// Digest is "sha256:" and the lowercase hex SHA-256 of the content.
	Digest  string
	content []byte
}

type entry struct {
	skill Skill
	root  string // skill://<skill-path>
}

// Extension is the skills extension of one server (New): give it to core.Options.Extensions,
// then Add skills.
type Extension struct {
	opts   Options
	server atomic.Pointer[core.Server]

	mu     sync.RWMutex
	paths  []string          // skill paths, in registration order
	skills map[string]*entry // by skill path
	files  map[string]*File  // by URI
	dirs   map[string]map[string]core.Resource
	// listed is every file of every skill as resources/list lists it, skill by skill: built
	// when a skill is installed, copied by Resources.
	listed  []core.Resource
	offered atomic.Bool
}

// New returns the skills extension configured by opts (the zero Options is the documented
// default).
func New(opts Options) *Extension {
	if opts.MaxFiles == 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	return &Extension{opts: opts, skills: map[string]*entry{}, files: map[string]*File{}, dirs: map[string]map[string]core.Resource{}}
}

// Bind implements core.Extension. It panics when the extension is bound to a second server.
func (x *Extension) Bind(s *core.Server) core.ExtensionSpec {
	if !x.server.CompareAndSwap(nil, s) {
		panic("skills: the extension is bound to a server already: give each server its own skills.New")
	}
	return core.ExtensionSpec{
		ID:       ExtensionID,
		Name:     "skills",
		Settings: map[string]any{"directoryRead": true},
		Offered:  x.offered.Load,
		Methods: []core.ExtensionMethod{
			{Method: MethodList, Handle: x.handleList, Cacheable: true},
			{Method: MethodGet, Handle: x.handleGet, Cacheable: true},
			{Method: MethodDirectoryRead, Handle: x.handleReadDirectory},
		},
		Resources: source{x},
	}
}

// Add registers the skill whose directory is the root of fsys (use fs.Sub to pick a
// sub-directory of an embed.FS) at skill://<skillPath>, replacing a skill at the same path.
// Add reads only regular files and reads each through fsys, so fsys must never resolve a name
// outside the skill's directory: an embed.FS or an fstest.MapFS cannot, the FS of an os.Root
// cannot (AddDir), but os.DirFS follows symbolic links anywhere, also one swapped in between
// the walk and the read. The
// directory must hold a SKILL.md that begins with YAML frontmatter naming the skill (name and
// description); the last segment of skillPath must be that name, which follows the Agent Skills
// naming rules (1-64 characters of a-z, 0-9 and '-', no leading, trailing or doubled '-');
// earlier segments are an organizational prefix. Every file becomes a resource (read once, now),
// and the skill is announced by skills/list. It returns an error for a skill that breaks these
// rules or the Options limits, and when the extension is not given to a server yet.
func (x *Extension) Add(skillPath string, fsys fs.FS) error {
	s := x.server.Load()
	if s == nil {
		return errors.New("skills: Add: the extension is not given to a server (core.Options.Extensions) yet")
	}
	if fsys == nil {
		return errors.New("skills: Add needs a file system")
	}
	segs, name, err := checkSkillPath(skillPath)
	if err != nil {
		return err
	}
	root := Scheme + "://" + skillPath
	files, dirs, err := readFiles(fsys, root, x.opts)
	if err != nil {
		return fmt.Errorf("skills: Add %q: %w", skillPath, err)
	}
	if !putSkillMDFirst(files, root) {
		return fmt.Errorf("skills: Add %q: the directory has no SKILL.md", skillPath)
	}
	fm, fmName, fmDesc, err := parseFrontmatter(files[0].content)
	if err != nil {
		return fmt.Errorf("skills: Add %q: SKILL.md: %w", skillPath, err)
	}
	if fmName != name {
		return fmt.Errorf("skills: Add %q: the frontmatter names the skill %q, but the last segment of its path is %q", skillPath, fmName, name)
	}
	e := &entry{root: root, skill: Skill{URI: files[0].URI, Name: fmName, Description: fmDesc, Frontmatter: json.RawMessage(fm), Files: files}}
	x.install(skillPath, e, skillTree(segs, root, dirs, files))
	_ = s.NotifyResourcesListChanged(context.Background())
	return nil
}

// AddDir registers the skill in the directory dir of the local file system, as Add does, reading
// it through os.OpenRoot: no file is read from outside dir, even when a file is replaced by a
// symbolic link (or a directory by one) while the skill is read. It is the recommended way to
// serve skills from disk; os.DirFS follows links wherever they lead.
func (x *Extension) AddDir(skillPath, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("skills: AddDir %q: %w", skillPath, err)
	}
	defer func() { _ = root.Close() }()
	return x.Add(skillPath, root.FS())
}

// install registers a read skill, its directories and its files, replacing a skill at the same
// path.
func (x *Extension) install(skillPath string, e *entry, tree map[string]map[string]core.Resource) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.skills[skillPath]; ok {
		for _, f := range old.skill.Files {
			delete(x.files, f.URI)
		}
		for dir := range x.dirs {
			if dir == old.root || strings.HasPrefix(dir, old.root+"/") {
				delete(x.dirs, dir)
			}
		}
	} else {
		x.paths = append(x.paths, skillPath)
	}
	x.skills[skillPath] = e
	for dir, kids := range tree {
		if x.dirs[dir] == nil {
			x.dirs[dir] = map[string]core.Resource{}
		}
		for uri, r := range kids {
			x.dirs[dir][uri] = r
		}
	}
	for i := range e.skill.Files {
		x.files[e.skill.Files[i].URI] = &e.skill.Files[i]
	}
	x.listed = x.listed[:0:0] // a fresh array: copies handed out keep theirs
	for _, p := range x.paths {
		e := x.skills[p]
		for i := range e.skill.Files {
			x.listed = append(x.listed, e.resource(i))
		}
	}
	x.offered.Store(true)
}

// Skills returns the registered skills, in registration order.
func (x *Extension) Skills() []Skill {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]Skill, 0, len(x.paths))
	for _, p := range x.paths {
		out = append(out, x.skills[p].skill)
	}
	return out
}

// source serves the files of the skills as resources of the skill scheme.
type source struct{ x *Extension }

func (source) Scheme() string { return Scheme }

// Resources lists every file of every skill, skill by skill; SKILL.md carries the skill's name
// and description. The list is built when a skill is added; each call returns a copy of it (one
// allocation), which the caller may filter in place, as core does.
func (src source) Resources() []core.Resource {
	x := src.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	return slices.Clone(x.listed)
}

// resource is the skill's file i as resources/list lists it.
func (e *entry) resource(i int) core.Resource {
	f := e.skill.Files[i]
	size := f.Size
	r := core.Resource{URI: f.URI, Name: path.Base(f.URI), MimeType: f.MimeType, Size: &size}
	if i == 0 {
		r.Name, r.Description = e.skill.Name, e.skill.Description
	}
	return r
}

// sees reports whether the caller of c may see the skill's file i, as resources/list decides
// (core.Call.Sees): skills/list, skills/get and the directory reads keep to the same view. A
// skill is seen when its SKILL.md (file 0) is.
func (e *entry) sees(c *core.Call, i int) bool {
	r := e.resource(i)
	return c.Sees(&core.View{Resource: &r})
}

// Read answers resources/read of a file: text when it is UTF-8 text, base64 otherwise.
func (src source) Read(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
	x := src.x
	x.mu.RLock()
	f := x.files[req.URI]
	x.mu.RUnlock()
	if f == nil {
		return nil, core.ResourceNotFound(req.URI)
	}
	c := core.ResourceContents{URI: f.URI, MimeType: f.MimeType}
	if textual(f.MimeType) && utf8.Valid(f.content) {
		c.Text = string(f.content)
	} else {
		c.Blob = base64.StdEncoding.EncodeToString(f.content)
	}
	return &core.ReadResourceResult{Contents: []core.ResourceContents{c}}, nil
}

// Entry is a skill as skills/list and skills/get describe it on the wire: the URI of its
// SKILL.md, its frontmatter as a JSON object, and its files. The kit's client decodes it too.
type Entry struct {
	// URI is the URI of the skill's SKILL.md, what skills/get takes.
	URI string `json:"uri"`
	// Frontmatter is the YAML frontmatter of the SKILL.md as a JSON object (name, description
	// and whatever else it holds).
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources are the skill's files.
	Resources []EntryFile `json:"resources"`
}

// EntryFile is one file of a skill entry: its resource URI (read it with resources/read), its
// digest ("sha256:<hex>") and its size in bytes.
type EntryFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// wire is the entry as the caller of c may see it: the files it sees.
func (e *entry) wire(c *core.Call) Entry {
	w := Entry{URI: e.skill.URI, Frontmatter: e.skill.Frontmatter, Resources: make([]EntryFile, 0, len(e.skill.Files))}
	for i, f := range e.skill.Files {
		if i == 0 || e.sees(c, i) {
			w.Resources = append(w.Resources, EntryFile{URI: f.URI, Digest: f.Digest, Size: f.Size})
		}
	}
	return w
}

type listResult struct {
	Skills     []Entry `json:"skills"`
	NextCursor string  `json:"nextCursor,omitzero"`
}

func (x *Extension) handleList(_ context.Context, c *core.Call) (any, error) {
	x.mu.RLock()
	items := make([]Entry, 0, len(x.paths))
	for _, p := range x.paths {
		if e := x.skills[p]; e.sees(c, 0) {
			items = append(items, e.wire(c))
		}
	}
	x.mu.RUnlock()
	page, next, err := core.Page(c, items)
	if err != nil {
		return nil, err
	}
	return &listResult{Skills: page, NextCursor: next}, nil
}

type getResult struct {
	Skill Entry `json:"skill"`
}

// object reports whether v is a JSON object.
func object(v []byte) bool { return len(v) > 0 && jsontext.Value(v).Kind() == '{' }

// uriParam reads params.uri: -32602 when params are not an object or uri not a string.
func uriParam(c *core.Call) (string, error) {
	var p struct {
		URI jsontext.Value `json:"uri"`
	}
	if !object(c.Params()) || jsonv2.Unmarshal(c.Params(), &p) != nil {
		return "", jsonrpc.InvalidParams("Invalid params")
	}
	var uri string
	if p.URI.Kind() != '"' || jsonv2.Unmarshal(p.URI, &uri) != nil {
		return "", jsonrpc.InvalidParams("Missing or invalid uri")
	}
	return uri, nil
}

func (x *Extension) handleGet(_ context.Context, c *core.Call) (any, error) {
	uri, err := uriParam(c)
	if err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, p := range x.paths {
		if e := x.skills[p]; e.skill.URI == uri && e.sees(c, 0) {
			return &getResult{Skill: e.wire(c)}, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Skill not found: " + uri, Data: map[string]string{"uri": uri}}
}

type directoryReadResult struct {
	Resources  []core.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitzero"`
}

func (x *Extension) handleReadDirectory(_ context.Context, c *core.Call) (any, error) {
	uri, err := uriParam(c)
	if err != nil {
		return nil, err
	}
	x.mu.RLock()
	kids, ok := x.dirs[uri]
	if !ok && strings.HasSuffix(uri, "/") {
		// skill://<path>/ names the directory skill://<path> (the form the docs give).
		kids, ok = x.dirs[strings.TrimSuffix(uri, "/")]
	}
	items := make([]core.Resource, 0, len(kids))
	for _, r := range kids {
		if c.Sees(&core.View{Resource: &r}) {
			items = append(items, r)
		}
	}
	x.mu.RUnlock()
	// A directory whose files the caller may not see (core.Call.Sees) is none.
	if !ok || len(items) == 0 && len(kids) > 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Not a directory: " + uri, Data: map[string]string{"uri": uri}}
	}
	slices.SortFunc(items, func(a, b core.Resource) int { return strings.Compare(a.URI, b.URI) })
	page, next, err := core.Page(c, items)
	if err != nil {
		return nil, err
	}
	return &directoryReadResult{Resources: page, NextCursor: next}, nil
}
