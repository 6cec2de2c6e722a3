package listen

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// listenTestServer advertises every change type a listen filter can ask for.
func listenTestServer() *core.Server {
	return core.NewServer(core.Implementation{Name: "listen", Version: "1"}, core.Options{Capabilities: &core.ServerCapabilities{
		Tools:     &core.ListChangedCapability{ListChanged: true},
		Prompts:   &core.ListChangedCapability{ListChanged: true},
		Resources: &core.ResourcesCapability{ListChanged: true, Subscribe: true},
	}})
}

// A change is encoded once for every subscription that wants it: the subscriptions share the
// encoded bytes, each splicing in its own id, and a subscription whose filter does not want the
// change gets nothing.
func TestListenDeliverEncodesOnce(t *testing.T) {
	s := listenTestServer()
	reg := New(s, 0)
	defer reg.Close(nil)
	open := func(id int64, f core.SubscriptionFilter) *Listener {
		sub, err := reg.Open("", jsonrpc.IntID(id), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
		return sub
	}
	a := open(1, core.SubscriptionFilter{ToolsListChanged: true})
	b := open(2, core.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
	other := open(3, core.SubscriptionFilter{PromptsListChanged: true})
	if err := s.NotifyToolsListChanged(context.Background()); err != nil {
		t.Fatal(err)
	}
	ca, _ := a.Take(nil)
	cb, _ := b.Take(nil)
	co, _ := other.Take(nil)
	if len(ca) != 1 || len(cb) != 1 || len(co) != 0 {
		t.Fatalf("queued %d, %d, %d changes; want 1, 1, 0", len(ca), len(cb), len(co))
	}
	if &ca[0].head[0] != &cb[0].head[0] {
		t.Fatal("the change was encoded once per subscription, not once for all")
	}
	for _, c := range []struct {
		sub  *Listener
		enc  EncodedChange
		want string
	}{
		{a, ca[0], `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`},
		{b, cb[0], `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`},
	} {
		if got := string(c.enc.AppendTo(nil, c.sub.IDJSON)); got != c.want {
			t.Fatalf("frame\n got %s\nwant %s", got, c.want)
		}
	}
	select {
	case <-other.Wake():
		t.Fatal("a subscription that does not want the change was woken")
	default:
	}
}

// The shared encoding is exactly what AppendChange writes for one subscription, for every
// kind of change; it is valid JSON on one line even for a URI that needs escaping or task params
// that were indented.
func TestEncodeChangeMatchesAppendListenChange(t *testing.T) {
	id := []byte(`"listen-7"`)
	for _, c := range []core.Change{
		{Method: core.ToolsListChanged},
		{Method: core.PromptsListChanged},
		{Method: core.ResourcesListChanged},
		{Method: core.ResourceUpdated, URI: "file:///a \"quoted\"\n\u2028name"},
		{Method: core.ResourceUpdated, URI: "file:///bad\xffutf8"},
		{Method: "notifications/ext", Key: "t1", Params: json.RawMessage("{\n  \"taskId\": \"t1\",\n  \"status\": \"working\"\n}")},
	} {
		shared := string(EncodeChange(c).AppendTo([]byte("prefix:"), id))
		if !strings.HasPrefix(shared, "prefix:") {
			t.Fatalf("%s: AppendTo dropped what b held: %s", c.Method, shared)
		}
		shared = strings.TrimPrefix(shared, "prefix:")
		if single := string(AppendChange(nil, c, id)); single != shared {
			t.Fatalf("%s: shared encoding %s, single %s", c.Method, shared, single)
		}
		if strings.ContainsAny(shared, "\r\n") {
			t.Fatalf("%s: a line break in %q", c.Method, shared)
		}
		var w struct {
			Method string
			Params map[string]json.RawMessage
		}
		if err := json.Unmarshal([]byte(shared), &w); err != nil || w.Method != c.Method {
			t.Fatalf("%s: not a valid notification: %v %s", c.Method, err, shared)
		}
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(w.Params["_meta"], &meta); err != nil || string(meta[metakey.SubscriptionID]) != string(id) {
			t.Fatalf("%s: _meta %s", c.Method, w.Params["_meta"])
		}
		switch c.Method {
		case core.ResourceUpdated:
			var uri string
			if err := json.Unmarshal(w.Params["uri"], &uri); err != nil || (uri != c.URI && !strings.ContainsRune(uri, '\uFFFD')) {
				t.Fatalf("uri %s for %q", w.Params["uri"], c.URI)
			}
		case "notifications/ext":
			if string(w.Params["status"]) != `"working"` || string(w.Params["taskId"]) != `"t1"` {
				t.Fatalf("task params %s", shared)
			}
		}
	}
	if b := (EncodedChange{}).AppendTo([]byte("x"), id); string(b) != "x" {
		t.Fatalf("the zero EncodedChange appended %q", b)
	}
}

// Nudge wakes the writer without queueing anything, and never blocks, however often it is called.
func TestListenerNudge(t *testing.T) {
	reg := New(listenTestServer(), 0)
	defer reg.Close(nil)
	sub, err := reg.Open("", jsonrpc.IntID(1), core.SubscriptionFilter{ToolsListChanged: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sub.Nudge()
	sub.Nudge()
	<-sub.Wake()
	if changes, behind := sub.Take(nil); len(changes) != 0 || behind {
		t.Fatalf("after a nudge: %d changes, behind %v", len(changes), behind)
	}
	select {
	case <-sub.Wake():
		t.Fatal("two nudges woke the writer twice")
	default:
	}
	var seen []int
	reg.Each(func(l *Listener) { seen = append(seen, len(l.IDJSON)) })
	if len(seen) != 1 {
		t.Fatalf("Each saw %d subscriptions, want 1", len(seen))
	}
}

// The acknowledgement names the honored filter exactly as its JSON encoding does, with the
// members that are set only, and strings quoted like every other.
func TestListenAckFilter(t *testing.T) {
	for _, f := range []core.SubscriptionFilter{
		{},
		{ToolsListChanged: true},
		{PromptsListChanged: true, ResourcesListChanged: true},
		{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///a", "file:///\"b\"\n"}},
		{ResourceSubscriptions: []string{"x"}, Extensions: map[string][]string{"taskIds": {"t1", "t2"}}},
		{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: []string{"u"},
			Extensions: map[string][]string{"taskIds": {"t"}, "zz": {"a\"b"}}},
	} {
		sub := &Listener{Filter: f, IDJSON: []byte(`"a"`)}
		var got struct {
			Params struct {
				Notifications json.RawMessage `json:"notifications"`
			} `json:"params"`
		}
		ack := AppendAck(nil, sub)
		if err := json.Unmarshal(ack, &got); err != nil {
			t.Fatalf("%+v: %v in %s", f, err, ack)
		}
		// The extensions' members come last, as an object member each.
		var all map[string]any
		b, err := json.Marshal(f)
		if err == nil {
			err = json.Unmarshal(b, &all)
		}
		if err != nil {
			t.Fatal(err)
		}
		for name, ids := range f.Extensions {
			all[name] = ids
		}
		want, _ := json.Marshal(all)
		var gotAll map[string]any
		if err := json.Unmarshal(got.Params.Notifications, &gotAll); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(gotAll); string(again) != string(want) {
			t.Fatalf("filter in the acknowledgement %s, want %s", got.Params.Notifications, want)
		}
	}
}

// New's max: zero is the documented default, a negative one panics naming it.
func TestNewDefaults(t *testing.T) {
	reg := New(listenTestServer(), 0)
	defer reg.Close(nil)
	testutil.CheckDefaults(t, []testutil.Default{{Option: "New max", Given: 0, Got: reg.Max(), Doc: 1000}})
	testutil.WantPanic(t, "must not be negative", func() { New(listenTestServer(), -1) })
}
