package middleware

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/jsonbody"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// DefaultMaxRequestBytes is the request body cap the decode layer applies when
// DecodeOptions.MaxRequestBytes is zero: 4 MiB.
const DefaultMaxRequestBytes int64 = 4 << 20

// DefaultBodyReadTimeout is how long the decode layer waits for a whole request body when
// DecodeOptions.BodyReadTimeout is zero: 30 s.
const DefaultBodyReadTimeout = 30 * time.Second

// DecodeOptions configures the Decode layer. The zero value caps bodies at
// DefaultMaxRequestBytes (4 MiB) and gives each one DefaultBodyReadTimeout (30 s) to arrive.
type DecodeOptions struct {
	// MaxRequestBytes is the largest request body accepted, in bytes. Zero means
	// DefaultMaxRequestBytes (4194304); a negative value is a programming error and makes Decode
	// panic.
	MaxRequestBytes int64
	// BodyReadTimeout bounds the time from the moment the layer starts reading a body to its
	// last byte: a client that sends its headers and then trickles or withholds the body gets
	// 408 and loses the connection. Zero means DefaultBodyReadTimeout (30 s); negative turns
	// the bound off (the server's own ReadTimeout, if any, then applies). The deadline is set on
	// the connection as http.ResponseController sets it (the ResponseWriter's SetReadDeadline,
	// or that of the writer its Unwrap chain leads to) and cleared once the body is read, before
	// any response streams; a ResponseWriter that cannot set read deadlines gets no bound. On a
	// connection the framing guard watches (GuardFraming, as mcphttp.NewHTTPServer serves), a
	// body the server already read from the connection with the headers, as a small request
	// usually is, is in memory: it needs no bound and gets no deadline.
	BodyReadTimeout time.Duration
}

// Decode returns the layer that reads a POST body once, bounded, and decodes it into one JSON-RPC
// message that later layers read with MessageFrom (and the raw bytes with BodyFrom). Requests
// with any other method pass through untouched, and so does a POST whose message an earlier
// layer already decoded.
//
// A POST is refused, in this order, with a JSON-RPC error body:
//   - 415, -32600 "Unsupported Media Type: Content-Type must be application/json" when the media
//     type of Content-Type (before any ";", trimmed, compared case-insensitively) is not
//     application/json;
//   - 413, -32600 "Payload too large: request body exceeds N bytes" when a declared Content-Length
//     is over the cap (the body is not read at all), or when more than N bytes arrive (reading
//     stops at N+1 bytes, whatever length was declared);
//   - 408, -32600 "Request timeout: the request body did not arrive within D", with the
//     connection closed, when the body is not complete within BodyReadTimeout;
//   - 400, -32700 "Parse error" with data "Invalid JSON" (naming a repeated member), id null, as
//     stdio answers, when the body is not valid JSON, is nested
//     deeper than 64 levels, repeats a member name, or could not be read to its end;
//   - 400, -32600 "Invalid Request: JSON-RPC body must be a single request object", id null, when
//     the body is an array or a scalar;
//   - 400 with the JSON-RPC framing error of core.DecodeMessage (code, message and detail data, id
//     echoed when it could be read) when the object is not an acceptable JSON-RPC message, for
//     example a wrong "jsonrpc" member.
//
// Before any of these, and for every method, a request on a connection that carried a request
// with both Content-Length and Transfer-Encoding (see GuardFraming) is refused with 400, -32600
// "Bad Request: both Content-Length and Transfer-Encoding", id null, and the connection is
// closed; its body is not read.
//
// On success the message and body are stored in the request's Exchange, the Exchange's message
// hooks run, and the next handler is called with the context they returned. Decode panics when
// opts.MaxRequestBytes is negative.
func Decode(opts DecodeOptions) func(http.Handler) http.Handler {
	limit := opts.MaxRequestBytes
	if limit < 0 {
		panic("middleware: DecodeOptions.MaxRequestBytes must not be negative")
	}
	if limit == 0 {
		limit = DefaultMaxRequestBytes
	}
	timeout := opts.BodyReadTimeout
	if timeout == 0 {
		timeout = DefaultBodyReadTimeout
	}
	d := &decoder{
		limit:    limit,
		timeout:  timeout,
		tooLarge: tooLargeMessage(limit),
		timedOut: "Request timeout: the request body did not arrive within " + timeout.String(),
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fc := framingConnFrom(r.Context())
			if fc.isAmbiguous() {
				w.Header().Set("Connection", "close")
				refuse(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgAmbiguousFraming)
				return
			}
			if r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			if ex := ExchangeFrom(r.Context()); ex != nil && ex.msg != nil {
				next.ServeHTTP(w, r)
				return
			}
			if m, body, ok := d.decode(w, r, fc); ok {
				next.ServeHTTP(w, WithMessage(r, m, body))
			}
		})
	}
}

// decoder is the configuration of one Decode layer, resolved once.
type decoder struct {
	limit    int64
	timeout  time.Duration
	tooLarge string // the 413 message for limit
	timedOut string // the 408 message for timeout
}

// decode reads and decodes the body of a POST arriving on fc (nil when the connection is not
// guarded). It answers the request itself and reports false when the body is refused.
func (d *decoder) decode(w http.ResponseWriter, r *http.Request, fc *framingConn) (*jsonrpc.Message, []byte, bool) {
	if !isJSONMediaType(headerValue(r.Header, "Content-Type")) {
		refuse(w, r, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgUnsupportedMediaType)
		return nil, nil, false
	}
	if r.ContentLength > d.limit {
		refuse(w, r, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, d.tooLarge)
		return nil, nil, false
	}
	timeout := d.timeout
	if fc.bodyRead() {
		timeout = -1 // the body is in memory already: there is no read to bound
	}
	body, err := readBodyWithin(w, r, d.limit, timeout)
	if err != nil {
		d.refuseRead(w, r, err)
		return nil, nil, false
	}
	if !jsonbody.StartsObject(body) && jsonbody.Kind(body) != jsonbody.Invalid {
		// An array or a scalar (rare, so the extra validation pass costs nothing on the usual
		// path); invalid JSON is left to DecodeMessage, which says what is wrong.
		refuse(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgNotSingleObject)
		return nil, nil, false
	}
	// The body is the exchange's and nobody modifies it (BodyFrom): the message points into it.
	m, err := transport.Core.DecodeOwned(body)
	if err != nil {
		refuseMessage(w, r, err)
		return nil, nil, false
	}
	return m, body, true
}

// refuseRead answers a body that could not be read whole: 408 past the deadline (closing the
// connection), 413 past a cap, 400 otherwise.
func (d *decoder) refuseRead(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		refuse(w, r, http.StatusRequestTimeout, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, d.timedOut)
	case errors.Is(err, errBodyTooLarge):
		refuse(w, r, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, d.tooLarge)
	case errors.As(err, &mbe):
		// An outer http.MaxBytesReader with a smaller cap stopped the read.
		refuse(w, r, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, tooLargeMessage(mbe.Limit))
	default:
		refuseError(w, r, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.ParseError(msgInvalidJSON))
	}
}

// refuseMessage answers a body that core.DecodeMessage refused with its error as stdio sends it
// (a parse error, say, is "Parse error" with what is wrong in data), echoing the id when it
// could be read.
func refuseMessage(w http.ResponseWriter, r *http.Request, err error) {
	var derr *jsonrpc.DecodeError
	errors.As(err, &derr) // DecodeMessage fails with a *DecodeError only
	refuseError(w, r, http.StatusBadRequest, derr.ID, derr.Err)
}

// refuseError is refuse for a core error: its code, message and data, recorded in the Exchange.
func refuseError(w http.ResponseWriter, r *http.Request, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	if ex := ExchangeFrom(r.Context()); ex != nil {
		ex.SetError(e.Code, e.Message)
	}
	WriteErrorData(w, status, id, e.Code, e.Message, e.Data)
}

// readBodyWithin is readBody under a read deadline of timeout (none when negative), cleared
// once the body is read so that a streamed response is not cut by it. After a failure the
// deadline stays: net/http reads on to discard the rest of a refused body, and that must stay
// bounded too.
func readBodyWithin(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) ([]byte, error) {
	if timeout < 0 || r.Body == nil || r.Body == http.NoBody {
		return readBody(r.Body, r.ContentLength, limit)
	}
	rd := readDeadliner(w)
	if rd == nil || rd.SetReadDeadline(time.Now().Add(timeout)) != nil {
		return readBody(r.Body, r.ContentLength, limit)
	}
	body, err := readBody(r.Body, r.ContentLength, limit)
	if err == nil {
		_ = rd.SetReadDeadline(time.Time{})
	}
	return body, err
}

// readDeadliner finds what http.ResponseController.SetReadDeadline would call, the same way
// (w, or the writer its Unwrap chain leads to, that has SetReadDeadline), or nil when there is
// none: a writer that cannot set deadlines then costs no clock reading and none of the error
// value the controller makes for each refusal.
func readDeadliner(w http.ResponseWriter) interface{ SetReadDeadline(time.Time) error } {
	for {
		switch t := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

func tooLargeMessage(limit int64) string {
	return "Payload too large: request body exceeds " + strconv.FormatInt(limit, 10) + " bytes"
}

// isJSONMediaType reports whether a Content-Type value names application/json, ignoring
// parameters, surrounding spaces and case.
func isJSONMediaType(contentType string) bool {
	if contentType == mediaJSON {
		return true // as clients send it: nothing to cut or fold
	}
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

var errBodyTooLarge = errors.New("middleware: request body too large")

// eagerAlloc is the largest declared Content-Length read straight into a slice of that size;
// bigger bodies grow their buffer as bytes arrive.
const eagerAlloc = 64 << 10

// poolMaxBuffer is the largest scratch buffer returned to the pool; bigger ones (rare, large
// bodies of unknown length) are left to the garbage collector rather than pinned.
const poolMaxBuffer = 256 << 10

var scratchPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 8<<10)
	return &b
}}

// readBody reads the whole body, failing with errBodyTooLarge once more than limit bytes arrive.
// With a declared length (declared >= 0, at most limit) it reads straight into a slice of that
// size; otherwise it reads through a pooled scratch buffer and returns an exact-size copy. The
// returned slice is owned by the caller.
func readBody(body io.Reader, declared, limit int64) ([]byte, error) {
	if body == nil || body == http.NoBody {
		return nil, nil
	}
	if declared > eagerAlloc {
		// A large declared length is trusted only as far as bytes actually arrive: a client
		// that declares 4 MiB and sends one byte must not pin 4 MiB per connection.
		b, err := readUpTo(body, make([]byte, 0, eagerAlloc), limit)
		if err == nil && int64(len(b)) != declared {
			return nil, io.ErrUnexpectedEOF
		}
		return b, err
	}
	if declared >= 0 {
		buf := make([]byte, declared, declared+1)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err // shorter than declared, or a read failure
		}
		// The declared length is normally enforced by the server; a reader that keeps going is
		// read on, still bounded, as if no length had been declared.
		n, _ := readSome(body, buf[declared:declared+1])
		if n == 0 {
			return buf, nil
		}
		return readUpTo(body, buf[:declared+1], limit)
	}
	bp := scratchPool.Get().(*[]byte)
	b, err := readUpTo(body, (*bp)[:0], limit)
	var out []byte
	if err == nil {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= poolMaxBuffer {
		*bp = b[:0]
		scratchPool.Put(bp)
	}
	return out, err
}

// readSome reads into p, retrying a few times on reads that return nothing and no error.
func readSome(r io.Reader, p []byte) (int, error) {
	for range 8 {
		n, err := r.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// readUpTo appends the rest of r to b, reading at most limit+1 bytes in all, and fails with
// errBodyTooLarge when b grows past limit.
func readUpTo(r io.Reader, b []byte, limit int64) ([]byte, error) {
	for {
		if int64(len(b)) > limit {
			return b, errBodyTooLarge
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		end := cap(b)
		if room := limit + 1 - int64(len(b)); int64(end-len(b)) > room {
			end = len(b) + int(room)
		}
		n, err := r.Read(b[len(b):end])
		b = b[:len(b)+n]
		if err == io.EOF {
			if int64(len(b)) > limit {
				return b, errBodyTooLarge
			}
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
