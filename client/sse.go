package client

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	event string
	data  []byte
	id    string
	hasID bool
	retry time.Duration // -1 when absent
}

// sseReader reads server-sent events with a bound on one event.
type sseReader struct {
	r   *bufio.Reader
	max int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10), max: max}
}

func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	for {
		part, err := s.r.ReadSlice('\n')
		if len(buf)+len(part) > s.max+2 {
			return nil, fmt.Errorf("SSE line longer than %d bytes", s.max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, part...)
			continue
		}
		if err != nil {
			if len(part) > 0 || len(buf) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if buf != nil {
			part = append(buf, part...)
		}
		part = bytes.TrimSuffix(part, []byte("\n"))
		return bytes.TrimSuffix(part, []byte("\r")), nil
	}
}

func (s *sseReader) next() (sseEvent, error) {
	ev := sseEvent{retry: -1}
	var data []byte
	seen := false
	for {
		ln, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && seen {
				err = io.ErrUnexpectedEOF
			}
			return ev, err
		}
		if len(ln) == 0 {
			if !seen {
				continue
			}
			ev.data = data
			return ev, nil
		}
		if ln[0] == ':' {
			continue // comment (keepalive)
		}
		seen = true
		if data, err = s.field(&ev, data, ln); err != nil {
			return ev, err
		}
	}
}

// field applies one "name: value" line of an event to ev, with data the event's data so far;
// it returns the data after the line.
func (s *sseReader) field(ev *sseEvent, data, ln []byte) ([]byte, error) {
	name, value, _ := bytes.Cut(ln, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "data":
		if data != nil {
			data = append(data, '\n')
		}
		if len(data)+len(value) > s.max {
			return data, fmt.Errorf("SSE event larger than %d bytes", s.max)
		}
		data = append(data, value...)
		if data == nil {
			data = []byte{}
		}
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			ev.id, ev.hasID = string(value), true
		}
	case "event":
		ev.event = string(value)
	case "retry":
		if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
			ev.retry = time.Duration(n) * time.Millisecond
		}
	}
	return data, nil
}

// headerValue encodes a value for an Mcp-Name or Mcp-Param-* header: as is when it is visible
// ASCII (inner spaces allowed) without leading or trailing whitespace, else as =?base64?...?=.
func headerValue(s string) string {
	plain := s == strings.TrimSpace(s)
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
