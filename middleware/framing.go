package middleware

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
)

// GuardFraming wraps l so that every connection it accepts follows the HTTP/1.1 framing of the
// requests it carries and notes a request whose header block declares both Content-Length and
// Transfer-Encoding. net/http serves such a request by its chunked body and drops the
// Content-Length, so whatever a front end that frames by Content-Length counts as the body
// would be served here as a further request on the same connection (request smuggling; RFC 9112
// section 6.1 says to treat it as an error and close the connection). The Decode layer refuses a
// request on a connection marked this way with 400 and closes the connection; it needs the
// connection in the request context, which FramingConnContext puts there (set it as the
// http.Server's ConnContext). mcphttp.NewHTTPServer does both. The same bookkeeping tells the
// Decode layer when a request's body was read from the connection with its headers, so that
// reading it needs no deadline (see DecodeOptions.BodyReadTimeout).
//
// The guard only reads what the server reads, in the same Read calls, and keeps a few bytes of
// state per connection. It stops looking at a connection that leaves HTTP/1.1 (an Upgrade, a
// CONNECT, the HTTP/2 preface) or sends framing it cannot follow; net/http closes those
// itself. It does not see inside TLS: wrap the listener that yields the decrypted connections.
func GuardFraming(l net.Listener) net.Listener { return framingListener{l} }

// FramingConnContext is an http.Server ConnContext hook: it records in ctx the connection that
// GuardFraming accepted, for the Decode layer. Connections from other listeners leave ctx as it
// is.
func FramingConnContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framingConn); ok {
		return context.WithValue(ctx, framingKey{}, fc)
	}
	return ctx
}

// framingConnFrom returns the guarded connection of a request (see FramingConnContext), or nil.
func framingConnFrom(ctx context.Context) *framingConn {
	fc, _ := ctx.Value(framingKey{}).(*framingConn)
	return fc
}

// isAmbiguous reports whether the connection was seen carrying a request with both
// Content-Length and Transfer-Encoding. A nil connection (not guarded) never was.
func (c *framingConn) isAmbiguous() bool { return c != nil && c.ambiguous.Load() }

// bodyRead reports whether every byte of the bodies of the requests the connection carried so
// far has been read from it: the last read ended at a message boundary (or inside a later
// request's header block). A handler of the connection's current request then reads its body
// from memory only, however the client paces its bytes. False for a nil connection and for one
// the guard stopped following.
func (c *framingConn) bodyRead() bool { return c != nil && c.atBoundary.Load() }

type framingKey struct{}

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c}, nil
}

// framingConn watches the bytes read from a connection. net/http never reads one connection
// from two goroutines at once, so the parser state needs no lock; only the verdicts are read by
// handlers concurrently.
type framingConn struct {
	net.Conn
	ambiguous atomic.Bool
	// atBoundary is whether the parser, after the last read, is outside every body: between
	// requests or in a request line or header block (see bodyRead).
	atBoundary atomic.Bool
	p          framingParser
}

func (c *framingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		if c.p.feed(b[:n]) {
			c.ambiguous.Store(true)
		}
		c.atBoundary.Store(c.p.state == fpStart || c.p.state == fpHeaders)
	}
	return n, err
}

// States of framingParser.
const (
	fpStart     = iota // before a request line (blank lines allowed)
	fpHeaders          // in a header block
	fpFixed            // in a Content-Length body
	fpChunkSize        // at a chunk-size line
	fpChunkData        // in chunk data
	fpChunkEnd         // at the CRLF after chunk data
	fpTrailers         // in the trailer section
	fpOff              // gave up (or found what it looks for): no more parsing
)

// framingLineMax is how much of each line the parser keeps: enough for the header names it
// looks for and any valid Content-Length or chunk size.
const framingLineMax = 64

// framingParser follows HTTP/1.1 message framing over a byte stream (RFC 9112 sections 2-7).
type framingParser struct {
	state  uint8
	line   [framingLineMax]byte
	n      int  // bytes of the current line kept in line
	long   bool // the current line is longer than line
	hasCL  bool
	hasTE  bool
	chunk  bool // the Transfer-Encoding is chunked
	leave  bool // the request leaves HTTP/1.1 framing (Upgrade)
	clen   int64
	remain int64 // body or chunk bytes still to skip
}

// feed parses b and reports whether a header block with both framing headers ended in it.
func (p *framingParser) feed(b []byte) bool {
	for len(b) > 0 {
		switch p.state {
		case fpOff:
			return false
		case fpFixed, fpChunkData:
			k := int64(len(b))
			if k > p.remain {
				k = p.remain
			}
			p.remain -= k
			b = b[k:]
			if p.remain == 0 {
				if p.state == fpFixed {
					p.state = fpStart
				} else {
					p.state = fpChunkEnd
				}
			}
			continue
		}
		// A line: keep what fits of it up to its LF (found with one scan, not byte by byte).
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		k := copy(p.line[p.n:], part)
		p.n += k
		p.long = p.long || k < len(part)
		if i < 0 {
			return false // the line goes on in the next read
		}
		b = b[i+1:]
		line := p.line[:p.n]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		long := p.long
		p.n, p.long = 0, false
		if p.endLine(line, long) {
			p.state = fpOff
			return true
		}
	}
	return false
}

// endLine handles one complete line (without its line ending; long when only its start was
// kept) and reports an ambiguous header block.
func (p *framingParser) endLine(line []byte, long bool) bool {
	switch p.state {
	case fpStart:
		if len(line) == 0 && !long {
			return false
		}
		if hasPrefixFold(line, "CONNECT ") || hasPrefixFold(line, "PRI ") {
			p.state = fpOff
			return false
		}
		p.hasCL, p.hasTE, p.chunk, p.leave, p.clen = false, false, false, false, 0
		p.state = fpHeaders
	case fpHeaders:
		if len(line) > 0 || long {
			p.header(line, long)
			return false
		}
		switch {
		case p.hasCL && p.hasTE:
			return true
		case p.leave:
			p.state = fpOff
		case p.hasTE && p.chunk:
			p.state = fpChunkSize
		case p.hasTE:
			p.state = fpOff // net/http refuses other codings and closes
		case p.clen > 0:
			p.state, p.remain = fpFixed, p.clen
		default:
			p.state = fpStart
		}
	case fpChunkSize:
		size, ok := chunkSize(line, long)
		switch {
		case !ok:
			p.state = fpOff
		case size == 0:
			p.state = fpTrailers
		default:
			p.state, p.remain = fpChunkData, size
		}
	case fpChunkEnd:
		if len(line) > 0 || long {
			p.state = fpOff
			return false
		}
		p.state = fpChunkSize
	case fpTrailers:
		if len(line) == 0 && !long {
			p.state = fpStart
		}
	}
	return false
}

// header notes the framing headers of one header line.
func (p *framingParser) header(line []byte, long bool) {
	switch {
	case hasPrefixFold(line, "content-length:"):
		p.hasCL = true
		v := trimOWS(line[len("content-length:"):])
		n, ok := parseLength(v)
		if !ok || long {
			p.leave = true // net/http refuses a bad length; stop following this connection
			return
		}
		if p.clen == 0 {
			p.clen = n
		}
	case hasPrefixFold(line, "transfer-encoding:"):
		p.hasTE = true
		v := trimOWS(line[len("transfer-encoding:"):])
		p.chunk = !long && equalFold(v, "chunked")
	case hasPrefixFold(line, "upgrade:"):
		p.leave = true
	}
}

func chunkSize(line []byte, long bool) (int64, bool) {
	if long {
		return 0, false
	}
	var n int64
	digits := 0
	for _, c := range line {
		var d int64
		switch {
		case c >= '0' && c <= '9':
			d = int64(c - '0')
		case c >= 'a' && c <= 'f':
			d = int64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int64(c-'A') + 10
		case c == ';' || c == ' ' || c == '\t':
			return n, digits > 0
		default:
			return 0, false
		}
		if digits == 15 {
			return 0, false // beyond any body this server accepts
		}
		n = n<<4 | d
		digits++
	}
	return n, digits > 0
}

func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && equalFold(b[:len(prefix)], prefix)
}

// equalFold reports whether b equals s, ignoring ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lowerASCII(b[i]) != lowerASCII(s[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
