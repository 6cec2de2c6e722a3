package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// Event is one item read from a Server-Sent Events stream: either a
// dispatched event or a comment line.
//
// For a dispatched event, Data holds the data lines joined with "\n", Event
// the value of the event field ("" when the stream gave none, which a
// browser treats as "message"; see [Event.Type]), ID the value of an id
// field sent within this event's own block (see [SSEReader.LastEventID] for
// the value that persists across events), and Retry the value of a valid
// retry field in the block. Comment is empty.
//
// For a comment line, Comment holds the whole line, leading colon included
// (so a bare ":" keepalive still yields a non-empty Comment), and the other
// fields are empty. [Event.CommentText] strips the colon.
type Event struct {
	ID      string
	Event   string
	Data    string
	Retry   string
	Comment string
}

// IsComment reports whether e stands for a comment line.
func (e Event) IsComment() bool { return e.Comment != "" }

// CommentText returns the text of a comment line without its leading colon
// and without the one space that may follow the colon.
func (e Event) CommentText() string {
	text := strings.TrimPrefix(e.Comment, ":")
	return strings.TrimPrefix(text, " ")
}

// Type returns the event type, "message" when the stream named none.
func (e Event) Type() string {
	if e.Event == "" {
		return "message"
	}
	return e.Event
}

// maxSSELine bounds one line of the stream, so that a runaway server makes a
// test fail instead of exhausting memory.
const maxSSELine = 32 << 20

// ErrSSELineTooLong is returned by [SSEReader.Next] when a line exceeds the
// reader's limit of 32 MiB.
var ErrSSELineTooLong = errors.New("testutil: SSE line too long")

// SSEReader parses a Server-Sent Events stream as the WHATWG HTML standard
// describes: lines end in CRLF, LF or CR; a line "name: value" sets a field
// (one space after the colon is dropped, and a line without a colon is a
// field with an empty value); the fields event, data, id and retry are
// understood and others ignored; a blank line dispatches the pending event,
// unless it has no data lines; a leading byte order mark is skipped; and an
// event left incomplete at the end of the stream is dropped.
//
// Two departures serve tests: comment lines are reported (see [Event]), and
// each event's ID is only the id sent in its own block. Bytes are passed
// through as received, without replacing invalid UTF-8.
//
// The reader works on live streams: [SSEReader.Next] returns as soon as the
// line that completes an item has arrived, without reading further. An
// SSEReader is not safe for concurrent use.
type SSEReader struct {
	r   *bufio.Reader
	err error // sticky error from the underlying reader

	started bool // a line has been read, so no byte order mark can follow
	skipLF  bool // the last line ended in CR, so a following LF is part of it
	line    []byte
	lastID  string
	retry   string
	pending pendingEvent
}

type pendingEvent struct {
	data    []byte // data lines, each followed by "\n"
	hasData bool
	event   string
	id      string
	retry   string
}

// NewSSEReader returns a reader of the Server-Sent Events stream r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReader(r)}
}

// LastEventID returns the last event ID in the sense of the standard: the
// value of the most recent id field read so far, which lasts across events
// until another id field replaces it. It is what a client would send as
// Last-Event-ID when reconnecting.
func (s *SSEReader) LastEventID() string { return s.lastID }

// Retry returns the value of the most recent valid retry field read so far,
// including one sent in a block without data, or "" if none was.
func (s *SSEReader) Retry() string { return s.retry }

// Next returns the next dispatched event or comment line. At the end of the
// stream it returns io.EOF, discarding any incomplete event; any other read
// error is returned as is. Once Next has returned an error it returns the
// same error on every later call.
func (s *SSEReader) Next() (Event, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return Event{}, err
		}
		if ev, ok := s.processLine(line); ok {
			return ev, nil
		}
	}
}

// NextMessage is like [SSEReader.Next] but passes over comment lines.
func (s *SSEReader) NextMessage() (Event, error) {
	for {
		ev, err := s.Next()
		if err != nil || !ev.IsComment() {
			return ev, err
		}
	}
}

// processLine applies one line to the pending event and reports the item it
// completes, if any.
func (s *SSEReader) processLine(line []byte) (Event, bool) {
	if len(line) == 0 {
		return s.dispatch()
	}
	if line[0] == ':' {
		return Event{Comment: string(line)}, true
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	p := &s.pending
	switch string(name) {
	case "event":
		p.event = string(value)
	case "data":
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
		p.hasData = true
	case "id":
		// An id containing NUL is ignored entirely.
		if bytes.IndexByte(value, 0) < 0 {
			p.id = string(value)
			s.lastID = p.id
		}
	case "retry":
		if isASCIIDigits(value) {
			p.retry = string(value)
			s.retry = p.retry
		}
	}
	return Event{}, false
}

// dispatch ends the current block, returning its event if it had data.
func (s *SSEReader) dispatch() (Event, bool) {
	p := &s.pending
	ev := Event{ID: p.id, Event: p.event, Retry: p.retry}
	ok := p.hasData
	if ok {
		ev.Data = string(p.data[:len(p.data)-1])
	}
	*p = pendingEvent{data: p.data[:0]}
	return ev, ok
}

// readLine returns the next complete line without its terminator. It reads
// only as far as the terminator, so a line is available as soon as its end
// has been received. The returned slice is valid until the next call.
func (s *SSEReader) readLine() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.line = s.line[:0]
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			// A final line without a terminator belongs to an event that
			// never completed, so it is dropped along with that event.
			s.err = err
			return nil, err
		}
		if s.skipLF {
			s.skipLF = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\r':
			s.skipLF = true
			return s.finishLine(), nil
		case '\n':
			return s.finishLine(), nil
		}
		if len(s.line) >= maxSSELine {
			s.err = ErrSSELineTooLong
			return nil, s.err
		}
		s.line = append(s.line, b)
	}
}

func (s *SSEReader) finishLine() []byte {
	if !s.started {
		s.started = true
		s.line = bytes.TrimPrefix(s.line, []byte("\xEF\xBB\xBF"))
	}
	return s.line
}

func isASCIIDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
