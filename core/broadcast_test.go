package core

import (
	"context"
	"strings"
	"testing"
)

// The in-process broadcaster calls its subscribers in the order they subscribed, stops calling
// one once it unsubscribed (twice is harmless), and allocates nothing to publish.
func TestLocalBroadcaster(t *testing.T) {
	b := newLocalBroadcaster()
	if err := b.Publish(context.Background(), Change{Method: ToolsListChanged}); err != nil {
		t.Fatal(err) // nobody subscribed yet
	}
	var got []string
	sub := func(name string) func() {
		return b.Subscribe(func(c Change) { got = append(got, name+":"+c.Method) })
	}
	sub("a")
	unsubB := sub("b")
	sub("c")
	_ = b.Publish(context.Background(), Change{Method: ToolsListChanged})
	unsubB()
	unsubB()
	_ = b.Publish(context.Background(), Change{Method: PromptsListChanged})
	want := "a:" + ToolsListChanged + " b:" + ToolsListChanged + " c:" + ToolsListChanged +
		" a:" + PromptsListChanged + " c:" + PromptsListChanged
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("delivered\n %s\nwant\n %s", s, want)
	}
	quiet := newLocalBroadcaster()
	quiet.Subscribe(func(Change) {})
	if n := testing.AllocsPerRun(100, func() { _ = quiet.Publish(context.Background(), Change{Method: ToolsListChanged}) }); n != 0 {
		t.Fatalf("Publish allocates %v times", n)
	}
}
