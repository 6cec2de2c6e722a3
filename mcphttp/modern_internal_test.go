package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/middleware"
)

// seal decides the shape of the answer in one step with the notifications: a notification that
// comes after it is refused and writes nothing, one that came before it is in the stream seal
// returns. The handler's sequence (seal, then the JSON answer or the final frame) is replayed
// here, behind the SSE layer, against notifications sent from another goroutine at the same
// moment; the recorder is not safe for concurrent use, so the race detector flags any write that
// escaped the seal.
func TestModernStreamSeal(t *testing.T) {
	t.Run("after seal", func(t *testing.T) {
		rec := httptest.NewRecorder()
		s := &modernStream{w: rec, ex: &middleware.Exchange{}, max: 10}
		if w := s.seal(); w != nil {
			t.Fatal("seal returned a writer though nothing was sent")
		}
		if err := s.Send(context.Background(), []byte(`{"n":1}`)); !errors.Is(err, middleware.ErrSSEClosed) {
			t.Fatalf("Send after seal: %v, want ErrSSEClosed", err)
		}
		if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
			t.Fatalf("Send after seal wrote %q %v", rec.Body.String(), rec.Header())
		}
	})
	t.Run("racing", func(t *testing.T) {
		const answer = `{"jsonrpc":"2.0","id":1,"result":{}}`
		var sealedSSE int
		for range 300 {
			rec := httptest.NewRecorder()
			middleware.SSE(middleware.SSEOptions{KeepAlive: -1, WriteTimeout: -1})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if replaySeal(t, &modernStream{w: w, ex: middleware.ExchangeFrom(r.Context()), max: 1000}, answer) {
					sealedSSE++
				}
			})).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			body := rec.Body.String()
			switch ct := rec.Header().Get("Content-Type"); ct {
			case "application/json":
				if body != answer {
					t.Fatalf("JSON answer %q", body)
				}
			case "text/event-stream":
				if !strings.HasSuffix(body, "event: message\ndata: "+answer+"\n\n") {
					t.Fatalf("the stream does not end with the answer: %q", body)
				}
				if n := bytes.Count(rec.Body.Bytes(), []byte(answer)); n != 1 {
					t.Fatalf("the answer appears %d times: %q", n, body)
				}
			default:
				t.Fatalf("Content-Type %q: %q", ct, body)
			}
		}
		t.Logf("%d of 300 answers were streams", sealedSSE)
	})
}

// replaySeal replays the handler's sequence on s (seal, then the JSON answer or the final frame)
// while another goroutine sends notifications, and reports whether the answer was a stream.
func replaySeal(t *testing.T, s *modernStream, answer string) (streamed bool) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		for range 20 {
			if s.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)) != nil {
				return
			}
		}
	})
	close(start)
	defer wg.Wait()
	sse := s.seal()
	if sse == nil {
		s.w.Header().Set("Content-Type", "application/json")
		_, _ = s.w.Write([]byte(answer))
		return false
	}
	if err := sse.WriteFinalSSE(middleware.SSEEvent{Event: "message", Data: []byte(answer)}); err != nil {
		t.Error(err)
	}
	return true
}
