package core_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
)

func TestMatchResourceResolvesLikeDispatch(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "m", Version: "1"}, core.Options{})
	h := func(context.Context, *core.ResourceRequest) (*core.ReadResourceResult, error) { return nil, nil }
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "notes://{owner}/{id}", Name: "note"}, h)
	s.AddResourceTemplate(&core.ResourceTemplate{URITemplate: "notes://{any}", Name: "any"}, h)
	s.AddResource(&core.Resource{URI: "notes://alice/1", Name: "pinned"}, h)

	if tpl, vars, ok := transport.Core.MatchResource(s, "notes://alice/1"); !ok || tpl != "" || vars != nil {
		t.Errorf("exact resource: %q %v %v, want the resource itself", tpl, vars, ok)
	}
	if tpl, vars, ok := transport.Core.MatchResource(s, "notes://bob/2"); !ok || tpl != "notes://{owner}/{id}" || vars["owner"] != "bob" || vars["id"] != "2" {
		t.Errorf("template: %q %v %v", tpl, vars, ok)
	}
	if tpl, _, ok := transport.Core.MatchResource(s, "notes://solo"); !ok || tpl != "notes://{any}" {
		t.Errorf("second template: %q %v", tpl, ok)
	}
	if _, _, ok := transport.Core.MatchResource(s, "other://x"); ok {
		t.Error("unknown URI matched")
	}
}
