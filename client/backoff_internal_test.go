package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestStandaloneStreamBackoff: a server that answers the session's GET with retry: 0 and closes
// it at once gets reconnections no sooner than the floor, the wait doubling while its streams
// deliver nothing and back at the floor once one delivers a message. The link's waits are
// recorded instead of slept, over real HTTP.
func TestStandaloneStreamBackoff(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "retry: 0\n\n: nothing here\n\n")
		if n == 6 {
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n")
		}
	}))
	defer srv.Close()
	const waits = 9
	var got []time.Duration
	stopped := make(chan struct{})
	ht := &HTTPTransport{URL: srv.URL}
	l, err := ht.open(context.Background(), discard{})
	if err != nil {
		t.Fatal(err)
	}
	hl := l.(*httpLink)
	hl.sleep = func(ctx context.Context, d time.Duration) error {
		got = append(got, d)
		if len(got) == waits {
			close(stopped)
			return context.Canceled
		}
		return nil
	}
	hl.ready(context.Background())
	<-stopped
	_ = l.close(context.Background())
	ms := time.Millisecond
	want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 100 * ms, 100 * ms, 200 * ms, 400 * ms}
	if len(got) != len(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("waits %v, want %v (the sixth stream delivered a message)", got, want)
			break
		}
	}
	t.Logf("%d GETs, waits %v", gets.Load(), got)
	// The backoff stops at MaxReconnectDelay; a longer retry of the server's own is kept.
	long := &httpLink{minDelay: 100 * ms, maxDelay: time.Second}
	if d := long.delay(0, 20); d != time.Second {
		t.Errorf("delay after 20 empty streams = %v, want the cap", d)
	}
	if d := long.delay(5*time.Second, 1); d != 5*time.Second {
		t.Errorf("delay with retry 5 s = %v, want 5 s", d)
	}
}

// TestHTTPTransportPanics: each invalid HTTPTransport option panics at Connect, naming it.
func TestHTTPTransportPanics(t *testing.T) {
	for option, ht := range map[string]HTTPTransport{
		"HTTPTransport.URL":                                          {},
		"HTTPTransport.MaxMessageBytes":                              {URL: "http://127.0.0.1:1", MaxMessageBytes: -1},
		"HTTPTransport.MinReconnectDelay":                            {URL: "http://127.0.0.1:1", MinReconnectDelay: -1},
		"HTTPTransport.MaxReconnectDelay":                            {URL: "http://127.0.0.1:1", MaxReconnectDelay: -1},
		"MaxReconnectDelay: must not be less than MinReconnectDelay": {URL: "http://127.0.0.1:1", MinReconnectDelay: time.Minute, MaxReconnectDelay: time.Second},
	} {
		t.Run(option, func(t *testing.T) {
			testutil.WantPanic(t, option, func() { _, _ = ht.open(context.Background(), discard{}) })
		})
	}
}
