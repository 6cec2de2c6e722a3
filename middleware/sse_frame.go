package middleware

import (
	"bytes"
	"strconv"
	"time"
)

// The encoding of the frames an SSEWriter sends (fields already validated by the writer).

// appendEvent appends the whole frame of ev (fields already validated).
func appendEvent(b []byte, ev SSEEvent) []byte {
	b = appendRetry(b, ev.Retry)
	if ev.ID != "" {
		b = append(b, "id: "...)
		b = append(b, ev.ID...)
		b = append(b, '\n')
	}
	if ev.Event != "" {
		b = append(b, "event: "...)
		b = append(b, ev.Event...)
		b = append(b, '\n')
	}
	return appendData(b, ev.Data)
}

// appendRetry appends "retry: <ms>\n" for a positive whole number of milliseconds.
func appendRetry(b []byte, d time.Duration) []byte {
	ms := d.Milliseconds()
	if ms <= 0 {
		return b
	}
	b = append(b, "retry: "...)
	b = strconv.AppendInt(b, ms, 10)
	return append(b, '\n')
}

// appendData appends data as "data: " lines followed by the blank line that ends the event.
func appendData(b, data []byte) []byte {
	return appendLines(b, "data: ", data)
}

// appendLines appends text as lines each starting with prefix (splitting at CR, LF or CRLF, after
// dropping trailing line breaks), then the blank line that ends the frame.
func appendLines(b []byte, prefix string, text []byte) []byte {
	n := len(text)
	for n > 0 && (text[n-1] == '\n' || text[n-1] == '\r') {
		n--
	}
	text = text[:n]
	for {
		i := lineBreak(text)
		b = append(b, prefix...)
		if i < 0 {
			b = append(b, text...)
			b = append(b, '\n')
			break
		}
		b = append(b, text[:i]...)
		b = append(b, '\n')
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return append(b, '\n')
}

// lineBreak returns the index of the first CR or LF in text, or -1: two byte scans, which a
// message without line breaks (the kit's JSON never has one) passes at memory speed, where
// bytes.IndexAny would build a set and test each byte against it.
func lineBreak(text []byte) int {
	i := bytes.IndexByte(text, '\n')
	head := text
	if i >= 0 {
		head = text[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j
	}
	return i
}
