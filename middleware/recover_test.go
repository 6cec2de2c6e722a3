package middleware

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
)

// syncBuffer is a bytes.Buffer safe for a logger writing from server goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRecoverAnswers500AndKeepsServing(t *testing.T) {
	var logBuf syncBuffer
	logger := zerolog.New(&logBuf)
	var mu sync.Mutex
	var reported []any
	h := Recover(RecoverOptions{Logger: &logger, OnPanic: func(r *http.Request, v any) {
		mu.Lock()
		reported = append(reported, v)
		mu.Unlock()
	}})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			w.Header().Set("Content-Length", "999") // must not survive into the 500
			panic("secret database password hunter2")
		}
		_, _ = io.WriteString(w, "fine")
	}))
	url := newServer(t, h).URL
	for range 2 {
		status, hdr, body := post(t, url+"/panic", "application/json", `{}`)
		wantError(t, status, hdr, body, 500, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal server error"}}`)
		if strings.Contains(body, "hunter2") {
			t.Error("the panic value reached the client")
		}
		status, _, body = post(t, url+"/ok", "application/json", `{}`)
		if status != 200 || body != "fine" {
			t.Fatalf("after a panic the server answered %d %q", status, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 2 || reported[0] != "secret database password hunter2" {
		t.Errorf("OnPanic got %v", reported)
	}
	logs := logBuf.String()
	if !strings.Contains(logs, `"level":"error"`) || !strings.Contains(logs, "hunter2") || !strings.Contains(logs, `"stack":`) {
		t.Errorf("panic not logged with value and stack: %s", logs)
	}
}

func TestRecoverAfterResponseStartedAborts(t *testing.T) {
	logger := zerolog.New(io.Discard)
	h := Recover(RecoverOptions{Logger: &logger})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "partial")
		http.NewResponseController(w).Flush()
		panic(errors.New("late failure"))
	}))
	url := newServer(t, h).URL
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("the truncated response read cleanly as %q; want the connection aborted", b)
	}
	if strings.Contains(string(b), "Internal server error") {
		t.Error("an error body was appended to a started response")
	}
}

func TestRecoverPassesErrAbortHandler(t *testing.T) {
	var logBuf syncBuffer
	logger := zerolog.New(&logBuf)
	var called atomic.Bool
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	passedCh := make(chan any, 2)
	probe := func(next http.Handler) http.Handler {
		// Observes what leaves Recover, then lets net/http handle it.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				passedCh <- v
				panic(v)
			}()
			next.ServeHTTP(w, r)
		})
	}
	h := probe(Recover(RecoverOptions{Logger: &logger, OnPanic: func(*http.Request, any) { called.Store(true) }})(inner))
	url := newServer(t, h).URL
	if _, err := http.Get(url); err == nil {
		t.Fatal("got a response; want the connection aborted")
	}
	if passed := <-passedCh; passed != http.ErrAbortHandler { //nolint:errorlint // net/http recognises this exact value, not a wrapper
		t.Errorf("Recover let %v through, want http.ErrAbortHandler", passed)
	}
	// The server still serves: the same handler aborts again rather than the server being gone.
	if _, err := http.Get(url); err == nil {
		t.Fatal("second request got a response")
	}
	if passed := <-passedCh; passed != http.ErrAbortHandler { //nolint:errorlint // net/http recognises this exact value, not a wrapper
		t.Errorf("second time Recover let %v through", passed)
	}
	if called.Load() || logBuf.String() != "" {
		t.Errorf("an abort was reported (OnPanic %v, log %q)", called.Load(), logBuf.String())
	}
}

func TestRecoverSurvivesPanickingReporter(t *testing.T) {
	logger := zerolog.New(io.Discard)
	h := Recover(RecoverOptions{Logger: &logger, OnPanic: func(*http.Request, any) { panic("reporter broke") }})(
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	url := newServer(t, h).URL
	status, _, _ := post(t, url, "application/json", `{}`)
	if status != 500 {
		t.Fatalf("status %d, want 500", status)
	}
}

// Recover starts the request's Exchange, with its writer in the record; a Recover inside another
// finds the record's room taken and wraps the response in a writer of its own: a panic after the
// inner one's handler started the response still aborts it, and one before answers 500 once.
func TestRecoverNestedSharesTheExchange(t *testing.T) {
	logger := zerolog.New(io.Discard)
	var sawExchange atomic.Bool
	inner := func(late bool) http.Handler {
		return Recover(RecoverOptions{Logger: &logger})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ex := ExchangeFrom(r.Context())
			sawExchange.Store(ex != nil && ex.recoverW.ResponseWriter != nil && w != http.ResponseWriter(&ex.recoverW))
			if late {
				_, _ = io.WriteString(w, "partial")
				http.NewResponseController(w).Flush()
			}
			panic("boom")
		}))
	}
	for _, late := range []bool{false, true} {
		h := Recover(RecoverOptions{Logger: &logger})(inner(late))
		resp, err := http.Get(newServer(t, h).URL)
		if err != nil {
			t.Fatal(err)
		}
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !sawExchange.Load() {
			t.Fatal("the handler inside two Recovers saw no Exchange holding the outer one's writer, or the outer writer twice")
		}
		switch {
		case late && rerr == nil:
			t.Errorf("a started response read cleanly as %q; want the connection aborted", b)
		case !late && (resp.StatusCode != http.StatusInternalServerError || strings.Count(string(b), "Internal server error") != 1):
			t.Errorf("status %d, body %q; want one 500 answer", resp.StatusCode, b)
		}
	}
}
