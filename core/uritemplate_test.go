package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
)

// TestURITemplateMatching: RFC 6570 levels 1 to 3 through resources/read, the variables
// percent-decoded; what does not match is -32602 with data.uri, on both lifecycles.
func TestURITemplateMatching(t *testing.T) {
	tests := []struct {
		tpl, uri string
		vars     string // "k=v;k=v" in sorted order, or "-" for no match
	}{
		{"test://t/{id}", "test://t/42", "id=42"},
		{"test://t/{id}", "test://t/a%20b", "id=a b"},
		{"test://t/{id}", "test://t/4/2", "-"},
		{"test://t/{id}", "test://t/", "-"},
		{"file:///{+path}", "file:///a/b/c.txt", "path=a/b/c.txt"},
		{"file:///{+path}", "file:///docs/a%20b.md", "path=docs/a b.md"},
		{"file:///{+path}", "file:///", "-"},
		{"file:///{+path}{?q}", "file:///a/b?q=x%20y", "path=a/b;q=x y"},
		{"file:///{+path}{?q}", "file:///a/b", "path=a/b"},
		{"search://items{?q,lang}", "search://items?q=go&lang=en", "lang=en;q=go"},
		{"search://items{?q,lang}", "search://items?lang=en&q=go", "lang=en;q=go"},
		{"search://items{?q,lang}", "search://items?q=go", "q=go"},
		{"search://items{?q,lang}", "search://items", ""},
		{"search://items{?q,lang}", "search://items?q=go&page=2", "-"},
		{"search://items{?q,lang}", "search://items?q=a&q=b", "-"},
		{"search://items{?q}{&page}", "search://items?page=2&q=a", "page=2;q=a"},
		{"x://p{/seg}", "x://p/a", "seg=a"},
		{"x://p{/seg}", "x://p", ""},
		{"x://p{.ext}", "x://p.json", "ext=json"},
		{"x://p{#frag}", "x://p#top", "frag=top"},
		{"x://p{;v}", "x://p;v=1", "v=1"},
		{"x://{a}/{b}", "x://1/2", "a=1;b=2"},
		{"x://{a,b}", "x://1,2", "a=1;b=2"},
		{"x://p{/a,b}", "x://p/1/2", "a=1;b=2"},
		{"x://p{.a,b}", "x://p.1.2", "a=1;b=2"},
		{"x://p{;a,b}", "x://p;b=2;a=1", "a=1;b=2"},
		{"x://p{;a,b}", "x://p;c=3", "-"},
		{"x://p{#a,b}", "x://p#1,2", "a=1;b=2"},
		{"x://{dir}/{name}.txt", "x://docs/read.me.txt", "dir=docs;name=read.me"},
	}
	for _, tt := range tests {
		t.Run(tt.tpl+" "+tt.uri, func(t *testing.T) {
			srv := newServer(nil)
			srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: tt.tpl, Name: "t"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
				keys := make([]string, 0, len(req.Vars))
				for k, v := range req.Vars {
					keys = append(keys, k+"="+v)
				}
				slices.Sort(keys)
				return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: strings.Join(keys, ";")}}}, nil
			})
			legacy := newClient(t, srv)
			legacy.initialize("2025-11-25")
			modern := newClient(t, srv)
			params := map[string]any{"uri": tt.uri}
			if tt.vars == "-" {
				wantError(t, legacy.call("resources/read", params), -32602, "Resource not found: "+tt.uri, map[string]any{"uri": tt.uri})
				wantModernError(t, modern.call("resources/read", withMeta(params, modernMeta(nil))), -32602)
				return
			}
			var r struct {
				Contents []struct {
					Text string `json:"text"`
				} `json:"contents"`
			}
			legacy.result("resources/read", params, "ReadResourceResult", &r)
			if len(r.Contents) != 1 || r.Contents[0].Text != tt.vars {
				t.Errorf("vars %+v, want %q", r.Contents, tt.vars)
			}
			checkModernResult(t, modern.call("resources/read", withMeta(params, modernMeta(nil))), "ReadResourceResult")
		})
	}
}

// TestURITemplateRejectedAtRegistration: a template that cannot be parsed or matched panics in
// AddResourceTemplate with a message naming it.
func TestURITemplateRejectedAtRegistration(t *testing.T) {
	for _, tpl := range []string{"x://{", "x://a}", "x://{}", "x://{a b}", "x://{!a}", "x://{a}{b}", "x://{+a}{b}", "x://{a:3}", "x://{/a*}"} {
		t.Run(tpl, func(t *testing.T) {
			defer func() {
				v := recover()
				msg, _ := v.(error)
				if v == nil || msg == nil || !strings.Contains(msg.Error(), `resource template "`+tpl+`"`) {
					t.Errorf("panic %v, want one naming %q", v, tpl)
				}
			}()
			newServer(nil).AddResourceTemplate(&core.ResourceTemplate{URITemplate: tpl, Name: "n"}, okResource)
		})
	}
}

func TestURITemplateExpand(t *testing.T) {
	for _, tt := range []struct {
		tpl  string
		vars map[string]string
		want string
	}{
		{"test://t/{id}", map[string]string{"id": "a b/c"}, "test://t/a%20b%2Fc"},
		{"file:///{+path}", map[string]string{"path": "docs/a b.md"}, "file:///docs/a%20b.md"},
		{"search://items{?q,lang}", map[string]string{"q": "go & rust"}, "search://items?q=go%20%26%20rust"},
		{"search://items{?q,lang}", map[string]string{"q": "go", "lang": "en"}, "search://items?q=go&lang=en"},
		{"x://p{/seg}{.ext}", map[string]string{"seg": "a", "ext": "json"}, "x://p/a.json"},
	} {
		got, err := core.ResourceTemplate{URITemplate: tt.tpl}.Expand(tt.vars)
		if err != nil || got != tt.want {
			t.Errorf("%s %v = %q, %v; want %q", tt.tpl, tt.vars, got, err, tt.want)
		}
	}
	if _, err := (core.ResourceTemplate{URITemplate: "x://{a:3}"}).Expand(nil); err == nil {
		t.Error("a level 4 template expanded")
	}
}

// TestURITemplateCompletion: completion/complete of a template's argument names the template by
// its text, whatever the operators in it.
func TestURITemplateCompletion(t *testing.T) {
	var seen []string
	srv := newServer(&core.Options{CompletionHandler: func(_ context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
		seen = append(seen, req.Ref.URI+" "+req.Argument.Name+"="+req.Argument.Value)
		return &core.CompleteResult{Completion: core.Completion{Values: []string{req.Argument.Value + "/readme.md"}}}, nil
	}})
	srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "file:///{+path}{?rev}", Name: "files"}, okResource)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	var r struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	c.result("completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/resource", "uri": "file:///{+path}{?rev}"},
		"argument": map[string]any{"name": "path", "value": "docs"},
	}, "CompleteResult", &r)
	if len(r.Completion.Values) != 1 || r.Completion.Values[0] != "docs/readme.md" || len(seen) != 1 || seen[0] != "file:///{+path}{?rev} path=docs" {
		t.Errorf("completion %+v, handler saw %v", r, seen)
	}
	wantError(t, c.call("completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/resource", "uri": "file:///{path}"},
		"argument": map[string]any{"name": "path", "value": "docs"},
	}), -32602, "Resource not found: file:///{path}", map[string]any{"uri": "file:///{path}"})
}
