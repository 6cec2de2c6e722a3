package stdio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

func (c *conn) readLoop() error {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var frame []byte
	for {
		line, err := r.ReadSlice('\n')
		n := len(frame) + len(line)
		if err == nil {
			n-- // the newline does not count
		}
		if n > c.maxLine {
			frame = append(frame, line[:c.maxLine-len(frame)]...)
			c.tooLarge(frame)
			frame = frame[:0]
			if err = skipLine(r, err); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if c.ctx.Err() != nil || c.failed() {
				return nil
			}
			continue
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			frame = append(frame, line...)
			continue
		case err == nil:
			frame = append(frame, line...)
			c.serveFrame(frame)
			frame = frame[:0]
		case errors.Is(err, io.EOF):
			frame = append(frame, line...)
			if len(bytes.TrimSpace(frame)) > 0 {
				c.serveFrame(frame)
			}
			return nil
		default:
			return err
		}
		if c.ctx.Err() != nil || c.failed() {
			return nil // Serve is already returning
		}
	}
}

// tooLarge answers a frame over MaxLineBytes, given its first MaxLineBytes bytes.
func (c *conn) tooLarge(prefix []byte) {
	id := leadingID(prefix)
	c.log.Error().Int("max_line_bytes", c.maxLine).Str("id", id.String()).Msg("stdio: frame exceeds MaxLineBytes: skipped to its newline")
	msg := "Payload too large: frame exceeds " + strconv.Itoa(c.maxLine) + " bytes"
	_ = c.send(c.ctx, transport.Core.EncodeError(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}))
}

// skipLine drops the rest of a frame: what ReadSlice returns up to and including the next
// newline. err is the error of the read that returned the frame's last bytes so far (nil when
// they ended with the newline). It returns nil once the newline is read, else the read's error.
func skipLine(r *bufio.Reader, err error) error {
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = r.ReadSlice('\n')
	}
	return err
}

// leadingID reads the id member of a JSON-RPC object from the first bytes of a frame, skipping
// the members before it; it returns the zero (null) ID when those bytes do not name a valid one.
func leadingID(prefix []byte) jsonrpc.ID {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return jsonrpc.ID{}
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}
		}
		if key != "id" {
			if skipValue(dec) != nil {
				return jsonrpc.ID{}
			}
			continue
		}
		var raw json.RawMessage
		var id jsonrpc.ID
		if dec.Decode(&raw) != nil || id.UnmarshalJSON(raw) != nil {
			return jsonrpc.ID{}
		}
		return id
	}
	return jsonrpc.ID{}
}

// skipValue reads one JSON value from dec, however deeply nested.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
