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
// dropping trailing line breaks), then the blank line that ends the frame. It finds the breaks
// with byte scans (the kit's JSON has none, and passes them at memory speed) and looks for the
// next LF again only once it passed the last one found, so text of many CR-separated lines is
// scanned once, not once per line.
func appendLines(b []byte, prefix string, text []byte) []byte {
	n := len(text)
	for n > 0 && (text[n-1] == '\n' || text[n-1] == '\r') {
		n--
	}
	text = text[:n]
	lf := bytes.IndexByte(text, '\n') // the next LF in text, -1 when there is none
	for {
		i, head := lf, text
		if lf >= 0 {
			head = text[:lf]
		}
		if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
			i = cr
		}
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
		if lf >= 0 {
			if lf -= i + 1; lf < 0 {
				lf = bytes.IndexByte(text, '\n')
			}
		}
	}
	return append(b, '\n')
}
