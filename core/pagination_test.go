package core_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
)

func pagedServer() *core.Server {
	srv := newServer(&core.Options{PageSize: 2})
	for i := range 5 {
		srv.AddTool(&core.Tool{Name: fmt.Sprintf("tool%d", i)}, okTool)
		srv.AddPrompt(&core.Prompt{Name: fmt.Sprintf("prompt%d", i)}, okPrompt)
		srv.AddResource(&core.Resource{URI: fmt.Sprintf("test://r%d", i), Name: fmt.Sprintf("r%d", i)}, okResource)
		srv.AddResourceTemplate(&core.ResourceTemplate{URITemplate: fmt.Sprintf("test://t%d/{x}", i), Name: fmt.Sprintf("t%d", i)}, okResource)
	}
	return srv
}

// TestPagination walks every list through its nextCursor chain.
func TestPagination(t *testing.T) {
	c := newClient(t, pagedServer())
	tests := []struct {
		method, def, key, field, prefix string
	}{
		{"tools/list", "ListToolsResult", "tools", "name", "tool"},
		{"prompts/list", "ListPromptsResult", "prompts", "name", "prompt"},
		{"resources/list", "ListResourcesResult", "resources", "name", "r"},
		{"resources/templates/list", "ListResourceTemplatesResult", "resourceTemplates", "name", "t"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			var names []string
			var sizes []int
			var params any
			for page := 0; ; page++ {
				if page > 5 {
					t.Fatal("the cursor chain does not end")
				}
				var r map[string]json.RawMessage
				c.result(tt.method, params, tt.def, &r)
				var items []map[string]any
				if err := jsonv2.Unmarshal(r[tt.key], &items); err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(items))
				for _, it := range items {
					names = append(names, fmt.Sprint(it[tt.field]))
				}
				next, ok := r["nextCursor"]
				if !ok {
					break
				}
				var cursor string
				if err := jsonv2.Unmarshal(next, &cursor); err != nil || cursor == "" {
					t.Fatalf("nextCursor %s", next)
				}
				params = map[string]any{"cursor": cursor}
			}
			want := fmt.Sprint([]string{tt.prefix + "0", tt.prefix + "1", tt.prefix + "2", tt.prefix + "3", tt.prefix + "4"})
			if fmt.Sprint(names) != want || fmt.Sprint(sizes) != "[2 2 1]" {
				t.Errorf("walked %v in pages %v, want %s in [2 2 1]", names, sizes, want)
			}
		})
	}
}

func TestPaginationInvalidCursor(t *testing.T) {
	srv := pagedServer()
	c := newClient(t, srv)
	var first struct {
		NextCursor string `json:"nextCursor"`
	}
	c.result("tools/list", nil, "", &first)
	// A cursor from a longer list points past the end of a shorter one.
	small := newServer(nil)
	small.AddTool(&core.Tool{Name: "only"}, okTool)
	small.AddPrompt(&core.Prompt{Name: "only"}, okPrompt)
	sc := newClient(t, small)
	wantError(t, sc.call("tools/list", map[string]any{"cursor": first.NextCursor}), -32602, "Invalid params", "Invalid cursor")
	// A cursor exactly at the end of the list (offset 1 of a one-item list) is past it too.
	one := newServer(&core.Options{PageSize: 1})
	one.AddTool(&core.Tool{Name: "a"}, okTool)
	one.AddTool(&core.Tool{Name: "b"}, okTool)
	var atOne struct {
		NextCursor string `json:"nextCursor"`
	}
	newClient(t, one).result("tools/list", nil, "", &atOne)
	wantError(t, sc.call("tools/list", map[string]any{"cursor": atOne.NextCursor}), -32602, "Invalid params", "Invalid cursor")
	if w := newClient(t, one).call("tools/list", map[string]any{"cursor": atOne.NextCursor}); w.Error != nil || !contains(w.Result, `"name":"b"`) {
		t.Errorf("the same cursor on its own list: %s", w)
	}

	for _, cursor := range []any{"garbage", "", "bWNwa2l0OjA", "bWNwa2l0Oi0x", "bWNwa2l0Ojk5", 5, true, map[string]any{}} {
		t.Run(fmt.Sprint(cursor), func(t *testing.T) {
			wantError(t, c.call("prompts/list", map[string]any{"cursor": cursor}), -32602, "Invalid params", "Invalid cursor")
		})
	}
	wantError(t, c.call("tools/list", []any{}), -32602, "Invalid params", "Invalid params")
	// A null cursor is no cursor.
	if w := c.call("tools/list", map[string]any{"cursor": nil}); w.Error != nil {
		t.Errorf("null cursor: %s", w)
	}
}

func contains(b []byte, sub string) bool { return strings.Contains(string(b), sub) }
