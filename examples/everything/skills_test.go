package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// withoutSkills drops the skill:// entries of a resources/list result.
func withoutSkills(t *testing.T, res json.RawMessage) json.RawMessage {
	t.Helper()
	var r struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	kept := []json.RawMessage{}
	for _, x := range r.Resources {
		if !strings.Contains(string(x), `"uri":"skill://`) {
			kept = append(kept, x)
		}
	}
	return mustJSON(t, map[string]any{"resources": kept})
}

// raw sends a request and returns its result, without a schema check (the skills methods have
// no definition in the schema).
func (c *client) raw(method string, params any) json.RawMessage {
	c.t.Helper()
	req := c.request(method, params)
	return c.resultOf(c.readMessages(c.post(req)), req, method)
}

// TestSkills: the fixture's skill over real HTTP (a legacy session): listed with the digest and
// size of each embedded file, its directories readable, its files served.
func TestSkills(t *testing.T) {
	c, _ := newClient(t)
	res := c.raw("skills/list", nil)
	var list struct {
		Skills []struct {
			URI         string         `json:"uri"`
			Frontmatter map[string]any `json:"frontmatter"`
			Resources   []struct {
				URI    string `json:"uri"`
				Digest string `json:"digest"`
				Size   int    `json:"size"`
			} `json:"resources"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(res, &list); err != nil || len(list.Skills) != 1 {
		t.Fatalf("skills/list = %s (%v)", res, err)
	}
	sk := list.Skills[0]
	if sk.URI != "skill://greeting-style/SKILL.md" || sk.Frontmatter["name"] != "greeting-style" || len(sk.Resources) != 2 {
		t.Fatalf("skill = %+v", sk)
	}
	for _, r := range sk.Resources {
		b, err := skillFiles.ReadFile("skills/greeting-style/" + r.URI[len("skill://greeting-style/"):])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if r.Digest != "sha256:"+hex.EncodeToString(sum[:]) || r.Size != len(b) {
			t.Errorf("%s: digest %s size %d, want the embedded file's", r.URI, r.Digest, r.Size)
		}
	}
	dir := c.raw("resources/directory/read", map[string]any{"uri": "skill://greeting-style"})
	var d struct {
		Resources []struct {
			URI, MimeType string
		} `json:"resources"`
	}
	if err := json.Unmarshal(dir, &d); err != nil || len(d.Resources) != 2 || d.Resources[1].URI != "skill://greeting-style/references" || d.Resources[1].MimeType != "inode/directory" {
		t.Errorf("directory = %s", dir)
	}
	read, _ := c.call("resources/read", map[string]any{"uri": "skill://greeting-style/references/TONE.md"}, "ReadResourceResult")
	var r struct {
		Contents []struct{ Text, MimeType string } `json:"contents"`
	}
	if err := json.Unmarshal(read, &r); err != nil || len(r.Contents) != 1 || r.Contents[0].MimeType != "text/markdown" || r.Contents[0].Text == "" {
		t.Errorf("TONE.md = %s", read)
	}
}
