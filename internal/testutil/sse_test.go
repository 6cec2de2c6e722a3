package testutil

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readAllEvents drains r, failing the test on any error other than io.EOF.
func readAllEvents(t *testing.T, r io.Reader) []Event {
	t.Helper()
	sr := NewSSEReader(r)
	var got []Event
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, ev)
	}
}

func TestSSEParse(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []Event
	}{
		{
			name:   "single event",
			stream: "data: hello\n\n",
			want:   []Event{{Data: "hello"}},
		},
		{
			name:   "multi-line data",
			stream: "data: one\ndata:two\ndata\ndata:  three\n\n",
			want:   []Event{{Data: "one\ntwo\n\n three"}},
		},
		{
			name:   "event and id fields",
			stream: "event: message\nid: 42\ndata: {\"jsonrpc\":\"2.0\"}\n\nevent: other\ndata: x\n\n",
			want: []Event{
				{Event: "message", ID: "42", Data: `{"jsonrpc":"2.0"}`},
				{Event: "other", Data: "x"},
			},
		},
		{
			name:   "CRLF line endings",
			stream: "event: e\r\nid: 7\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
			want:   []Event{{Event: "e", ID: "7", Data: "a\nb"}, {Data: "c"}},
		},
		{
			name:   "CR line endings",
			stream: "data: a\rdata: b\r\rdata: c\r\r",
			want:   []Event{{Data: "a\nb"}, {Data: "c"}},
		},
		{
			name:   "mixed line endings",
			stream: "data: a\r\ndata: b\rdata: c\n\r\n",
			want:   []Event{{Data: "a\nb\nc"}},
		},
		{
			name:   "comments",
			stream: ": keepalive\n\n:\n:no space\ndata: x\n: inside\ndata: y\n\n",
			want: []Event{
				{Comment: ": keepalive"},
				{Comment: ":"},
				{Comment: ":no space"},
				{Comment: ": inside"},
				{Data: "x\ny"},
			},
		},
		{
			name:   "blocks without data are not dispatched",
			stream: "event: lonely\n\nid: 9\n\ndata: after\n\n",
			want:   []Event{{Data: "after"}},
		},
		{
			name:   "empty data line dispatches an empty event",
			stream: "id: 1\ndata:\n\ndata\n\n",
			want:   []Event{{ID: "1"}, {}},
		},
		{
			name:   "retry",
			stream: "retry: 1500\ndata: a\n\nretry: 2s\ndata: b\n\nretry:\ndata: c\n\n",
			want:   []Event{{Retry: "1500", Data: "a"}, {Data: "b"}, {Data: "c"}},
		},
		{
			name:   "unknown fields and odd names are ignored",
			stream: "foo: bar\nData: no\n data: no\ndata : no\ndata: yes\n\n",
			want:   []Event{{Data: "yes"}},
		},
		{
			name:   "only the first space after the colon is dropped",
			stream: "event:  spaced\ndata:\tx \n\n",
			want:   []Event{{Event: " spaced", Data: "\tx "}},
		},
		{
			name:   "id with NUL is ignored",
			stream: "id: a\x00b\ndata: x\n\n",
			want:   []Event{{Data: "x"}},
		},
		{
			name:   "leading byte order mark",
			stream: "\xEF\xBB\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n",
			want:   []Event{{Data: "x"}},
		},
		{
			name:   "incomplete event at end of stream is dropped",
			stream: "data: done\n\ndata: partial\n",
			want:   []Event{{Data: "done"}},
		},
		{
			name:   "unterminated last line is dropped",
			stream: "data: done\n\n: no newline",
			want:   []Event{{Data: "done"}},
		},
		{
			name:   "empty stream",
			stream: "",
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAllEvents(t, strings.NewReader(tt.stream))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stream %q:\n got %#v\nwant %#v", tt.stream, got, tt.want)
			}
			// Delivering the stream a byte at a time must not change the
			// result, whatever the split between CR and LF.
			got = readAllEvents(t, iotest.OneByteReader(strings.NewReader(tt.stream)))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("byte at a time, stream %q:\n got %#v\nwant %#v", tt.stream, got, tt.want)
			}
		})
	}
}

func TestSSEEventHelpers(t *testing.T) {
	if got := (Event{}).Type(); got != "message" {
		t.Errorf("default Type() = %q, want message", got)
	}
	if got := (Event{Event: "ping"}).Type(); got != "ping" {
		t.Errorf("Type() = %q, want ping", got)
	}
	for comment, text := range map[string]string{": ping": "ping", ":ping": "ping", ":": "", ":  two": " two"} {
		ev := Event{Comment: comment}
		if !ev.IsComment() || ev.CommentText() != text {
			t.Errorf("comment %q: IsComment=%v CommentText=%q, want true %q", comment, ev.IsComment(), ev.CommentText(), text)
		}
	}
	if (Event{Data: ""}).IsComment() {
		t.Error("an empty data event counts as a comment")
	}
}

func TestSSELastEventIDAndRetry(t *testing.T) {
	sr := NewSSEReader(strings.NewReader(
		"id: 1\ndata: a\n\ndata: b\n\nretry: 3000\nid: 2\n\nid\ndata: c\n\n"))
	steps := []struct {
		ev     Event
		lastID string
		retry  string
	}{
		{Event{ID: "1", Data: "a"}, "1", ""},
		{Event{Data: "b"}, "1", ""},
		// The retry and id block has no data, so it is not dispatched, but
		// it still updates the reader; an empty id then clears the last ID.
		{Event{Data: "c"}, "", "3000"},
	}
	for i, st := range steps {
		ev, err := sr.Next()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if ev != st.ev || sr.LastEventID() != st.lastID || sr.Retry() != st.retry {
			t.Errorf("step %d: got %#v lastID=%q retry=%q, want %#v lastID=%q retry=%q",
				i, ev, sr.LastEventID(), sr.Retry(), st.ev, st.lastID, st.retry)
		}
	}

	sr = NewSSEReader(strings.NewReader("retry: 10\nid: x\n\n"))
	if _, err := sr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("got %v, want io.EOF", err)
	}
	if sr.LastEventID() != "x" || sr.Retry() != "10" {
		t.Errorf("after a data-less block: lastID=%q retry=%q, want x 10", sr.LastEventID(), sr.Retry())
	}
}

func TestSSENextMessageSkipsComments(t *testing.T) {
	sr := NewSSEReader(strings.NewReader(": a\n\n:\ndata: one\n\n: b\ndata: two\n\n: tail\n"))
	for _, want := range []string{"one", "two"} {
		ev, err := sr.NextMessage()
		if err != nil || ev.Data != want || ev.IsComment() {
			t.Fatalf("NextMessage = %#v, %v; want data %q", ev, err, want)
		}
	}
	if _, err := sr.NextMessage(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last message: got %v, want io.EOF", err)
	}
}

func TestSSEErrors(t *testing.T) {
	sr := NewSSEReader(strings.NewReader("data: x\n\n"))
	if _, err := sr.Next(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := sr.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("got %v, want io.EOF repeatedly at end of stream", err)
		}
	}

	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: x\n\ndata: y\n"), iotest.ErrReader(boom))
	sr = NewSSEReader(r)
	if ev, err := sr.Next(); err != nil || ev.Data != "x" {
		t.Fatalf("Next = %#v, %v; want data x", ev, err)
	}
	for range 2 {
		if _, err := sr.Next(); !errors.Is(err, boom) {
			t.Fatalf("got %v, want the read error", err)
		}
	}

	// A reader that returns its last bytes together with io.EOF.
	sr = NewSSEReader(iotest.DataErrReader(strings.NewReader("data: last\n\n")))
	if ev, err := sr.Next(); err != nil || ev.Data != "last" {
		t.Fatalf("Next = %#v, %v; want data last", ev, err)
	}
	if _, err := sr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("got %v, want io.EOF", err)
	}
}

// nextWithin calls sr.Next, failing the test if it does not return in time.
func nextWithin(t *testing.T, sr *SSEReader, d time.Duration) (Event, error) {
	t.Helper()
	type result struct {
		ev  Event
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ev, err := sr.Next()
		ch <- result{ev, err}
	}()
	select {
	case res := <-ch:
		return res.ev, res.err
	case <-time.After(d):
		t.Fatalf("Next did not return within %v; it seems to wait for more input", d)
		return Event{}, nil
	}
}

// TestSSELiveStream checks that items are returned while the stream is still
// open, as soon as the bytes that complete them have been written.
func TestSSELiveStream(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	sr := NewSSEReader(pr)

	// Each write completes exactly one item and is followed by nothing
	// until the reader has returned it. io.Pipe blocks a write until the
	// reader has consumed it, so the writes run in their own goroutine.
	steps := []struct {
		write string
		want  Event
	}{
		{"event: message\nid: 1\ndata: first\n\n", Event{Event: "message", ID: "1", Data: "first"}},
		// A comment is reported without waiting for a blank line.
		{": keepalive\n", Event{Comment: ": keepalive"}},
		// A CR could be followed by an LF, but the reader must not wait to
		// find out.
		{"data: second\r\r", Event{Data: "second"}},
		{"\ndata: third\r\n\r\n", Event{Data: "third"}},
	}
	next := make(chan string)
	writeErr := make(chan error, 1)
	go func() {
		for s := range next {
			if _, err := io.WriteString(pw, s); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- pw.Close()
	}()

	for i, st := range steps {
		next <- st.write
		ev, err := nextWithin(t, sr, 5*time.Second)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if ev != st.want {
			t.Fatalf("step %d: got %#v, want %#v", i, ev, st.want)
		}
	}
	close(next)
	if _, err := nextWithin(t, sr, 5*time.Second); !errors.Is(err, io.EOF) {
		t.Fatalf("after close: got %v, want io.EOF", err)
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("writer: %v", err)
	}
}
