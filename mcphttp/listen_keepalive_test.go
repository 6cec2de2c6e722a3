package mcphttp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// waitPing reads a stream until a keepalive comment arrives (each read is time-bounded).
func waitPing(t *testing.T, ls *listenStream) {
	t.Helper()
	for {
		ev, err := nextEvent(t, ls.sr, false)
		if err != nil {
			t.Fatal(err)
		}
		if ev.IsComment() {
			if !strings.HasPrefix(ev.CommentText(), "ping ") {
				t.Fatalf("keepalive comment %q", ev.Comment)
			}
			return
		}
	}
}

// One timer keeps every stream alive: each open stream gets its keepalive comments, and so does
// a stream that opens once every other has closed (when the timer may have been disarmed).
func TestListenKeepAliveSharedTimer(t *testing.T) {
	f := newFixture(t, mcphttp.Options{Listen: mcphttp.ListenersOptions{KeepAlive: 10 * time.Millisecond}})
	streams := make([]*listenStream, 3)
	for i := range streams {
		streams[i], _ = f.listen(t, i, toolsOnly)
	}
	for _, ls := range streams {
		waitPing(t, ls)
		waitPing(t, ls) // and again: the sweep keeps coming back
	}
	for _, ls := range streams {
		ls.close()
	}
	for range streams {
		recv(t, f.connClosed, "a closed stream's connection to close")
	}
	if n := f.h.Listeners().Len(); n != 0 {
		t.Fatalf("Len = %d once every stream closed", n)
	}
	again, _ := f.listen(t, "again", toolsOnly)
	defer again.close()
	waitPing(t, again)
}
