package middleware

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/sessiontest"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/session"
)

// manualClock drives the store's idle clock.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// validatorFixture is a store with one live session, the validator over a recording stub, and a
// clock to age the session.
type validatorFixture struct {
	store *session.Memory
	clock *manualClock
	live  *session.Entry
	ended chan struct{} // closed when the live session's record ends
	h     http.Handler

	// principal is the principal of the requests serve makes ("" for nobody)
	principal string

	// what the stub saw on its last call
	called   bool
	sess     session.Live
	exchange string
}

func newValidatorFixture(t *testing.T, opts SessionValidatorOptions) *validatorFixture {
	t.Helper()
	f := &validatorFixture{clock: &manualClock{t: time.Unix(1_700_000_000, 0)}}
	f.store = session.NewMemory(session.MemoryOptions{IdleTimeout: time.Minute, Now: f.clock.Now})
	t.Cleanup(func() { _ = f.store.Close() })
	id := session.NewID()
	f.live = &session.Entry{ID: id, Origin: "https://app.example"}
	f.ended = make(chan struct{})
	f.live.OnClose(func() { close(f.ended) })
	if err := f.store.Add(context.Background(), f.live); err != nil {
		t.Fatal(err)
	}
	switch l := opts.Sessions.(type) {
	case nil:
		opts.Sessions = sessiontest.RecordSessions{Store: f.store}
	case sessiontest.RecordSessions:
		if l.Store == nil {
			opts.Sessions = sessiontest.RecordSessions{Store: f.store}
		} else if l.Store == (plainStore{}) {
			opts.Sessions = sessiontest.RecordSessions{Store: plainStore{f.store}} // the fixture's store without its Checker
		}
	}
	f.h = SessionValidator(opts)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.called = true
		f.sess = SessionFrom(r.Context())
		if ex := ExchangeFrom(r.Context()); ex != nil {
			f.exchange = ex.SessionID()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	return f
}

// serve runs one request through the validator. A non-empty body is decoded and handed over as
// the decode layer would (WithMessage); the session id and extra headers are added when given.
func (f *validatorFixture) serve(t *testing.T, method, body, sessionID string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	f.called, f.sess, f.exchange = false, nil, ""
	r := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	if sessionID != "" {
		r.Header.Set(HeaderSessionID, sessionID)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	r, _ = ensureExchange(r) // as an outer layer (tracing, request log) would
	r = r.WithContext(core.WithPrincipal(r.Context(), f.principal))
	if body != "" {
		m, derr := transport.Core.DecodeMessage([]byte(body))
		if derr != nil {
			t.Fatalf("test body does not decode: %v", derr)
		}
		r = WithMessage(r, m, []byte(body))
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

func (f *validatorFixture) wantPassed(t *testing.T, w *httptest.ResponseRecorder, want *session.Entry) {
	t.Helper()
	if w.Code != http.StatusNoContent || !f.called {
		t.Fatalf("request did not reach the next handler: %d %s", w.Code, w.Body)
	}
	var got *session.Entry
	if f.sess != nil {
		got = f.sess.Entry()
	}
	if got != want {
		t.Fatalf("SessionFrom = %v, want %v", got, want)
	}
	if want != nil && f.exchange != want.ID {
		t.Fatalf("Exchange session id = %q, want %q", f.exchange, want.ID)
	}
}

func (f *validatorFixture) wantRefused(t *testing.T, w *httptest.ResponseRecorder, status int, code int64, message, id string) {
	t.Helper()
	if f.called {
		t.Fatal("a refused request reached the next handler")
	}
	wantError(t, w.Code, w.Header(), w.Body.String(), status,
		`{"jsonrpc":"2.0","id":`+id+`,"error":{"code":`+strconv.FormatInt(code, 10)+`,"message":"`+message+`"}}`)
}

const (
	bodyInit     = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`
	bodyPing     = `{"jsonrpc":"2.0","id":"p-1","method":"ping"}`
	bodyNote     = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	bodyResponse = `{"jsonrpc":"2.0","id":"srv-1","result":{}}`
	bodyDiscover = `{"jsonrpc":"2.0","id":3,"method":"server/discover"}`
)

func TestValidatorInitialize(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	f.wantPassed(t, f.serve(t, http.MethodPost, bodyInit, ""), nil)
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyInit, f.live.ID), http.StatusBadRequest, -32600, "Invalid Request: Server already initialized", "7")
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyInit, "unknown"), http.StatusNotFound, -32600, "Session not found", "7")
	// An expired session is unknown to initialize too.
	f.clock.Advance(2 * time.Minute)
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyInit, f.live.ID), http.StatusNotFound, -32600, "Session not found", "7")
}

func TestValidatorDiscoverNeedsNoSession(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	f.wantPassed(t, f.serve(t, http.MethodPost, bodyDiscover, ""), nil)
	f.wantPassed(t, f.serve(t, http.MethodPost, bodyDiscover, f.live.ID), f.live)
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyDiscover, "unknown"), http.StatusNotFound, -32600, "Session not found", "3")
}

func TestValidatorMissingAndUnknownSession(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	cases := []struct {
		name, method, body, id string
	}{
		{"request", http.MethodPost, bodyPing, `"p-1"`},
		{"notification", http.MethodPost, bodyNote, "null"},
		{"client response", http.MethodPost, bodyResponse, `"srv-1"`},
		{"GET", http.MethodGet, "", "null"},
		{"DELETE", http.MethodDelete, "", "null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.wantRefused(t, f.serve(t, c.method, c.body, ""), http.StatusBadRequest, -32600, "Missing session ID", c.id)
			f.wantRefused(t, f.serve(t, c.method, c.body, "no-such-session"), http.StatusNotFound, -32600, "Session not found", c.id)
			f.wantPassed(t, f.serve(t, c.method, c.body, f.live.ID), f.live)
		})
	}
}

// A session answers only the principal that opened it: another principal and nobody get 403 on
// every kind of exchange; a session opened by nobody answers 403 to every principal and serves
// any caller without one (two anonymous callers cannot be told apart: the session id is then the
// only credential). An unknown session is 404 whoever asks.
func TestValidatorPrincipal(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	id := session.NewID()
	alices := &session.Entry{ID: id, Owner: "alice"}
	if err := f.store.Add(context.Background(), alices); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, body, id string
	}{
		{"request", http.MethodPost, bodyPing, `"p-1"`},
		{"notification", http.MethodPost, bodyNote, "null"},
		{"client response", http.MethodPost, bodyResponse, `"srv-1"`},
		{"GET", http.MethodGet, "", "null"},
		{"DELETE", http.MethodDelete, "", "null"},
	}
	const forbidden = "Forbidden: session request validation failed"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, who := range []string{"bob", ""} {
				f.principal = who
				f.wantRefused(t, f.serve(t, c.method, c.body, alices.ID), http.StatusForbidden, -32600, forbidden, c.id)
			}
			f.principal = "alice"
			f.wantRefused(t, f.serve(t, c.method, c.body, f.live.ID), http.StatusForbidden, -32600, forbidden, c.id)
			if c.method != http.MethodDelete {
				f.wantPassed(t, f.serve(t, c.method, c.body, alices.ID), alices)
			}
			f.principal = ""
			f.wantPassed(t, f.serve(t, c.method, c.body, f.live.ID), f.live)
		})
	}
	f.principal = "alice"
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyPing, "no-such-session"), http.StatusNotFound, -32600, "Session not found", `"p-1"`)
}

func TestValidatorOrigin(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyPing, f.live.ID, "Origin", "https://evil.example"),
		http.StatusForbidden, -32600, "Forbidden: session request validation failed", `"p-1"`)
	f.wantRefused(t, f.serve(t, http.MethodGet, "", f.live.ID, "Origin", "https://evil.example"),
		http.StatusForbidden, -32600, "Forbidden: session request validation failed", "null")
	f.wantPassed(t, f.serve(t, http.MethodPost, bodyPing, f.live.ID, "Origin", "HTTPS://APP.example"), f.live)
	f.wantPassed(t, f.serve(t, http.MethodPost, bodyPing, f.live.ID), f.live) // no Origin: not a browser

	skip := newValidatorFixture(t, SessionValidatorOptions{SkipOriginCheck: true})
	skip.wantPassed(t, skip.serve(t, http.MethodPost, bodyPing, skip.live.ID, "Origin", "https://evil.example"), skip.live)
}

func TestValidatorRefusesRepeatedSessionID(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	const msg = "Bad Request: Mcp-Session-Id header is sent more than once"
	for _, other := range []string{f.live.ID, "another-session"} {
		f.wantRefused(t, f.serve(t, http.MethodPost, bodyPing, f.live.ID, HeaderSessionID, other),
			http.StatusBadRequest, -32600, msg, `"p-1"`)
		f.wantRefused(t, f.serve(t, http.MethodPost, bodyInit, f.live.ID, HeaderSessionID, other),
			http.StatusBadRequest, -32600, msg, "7")
		f.wantRefused(t, f.serve(t, http.MethodGet, "", f.live.ID, HeaderSessionID, other),
			http.StatusBadRequest, -32600, msg, "null")
		f.wantRefused(t, f.serve(t, http.MethodDelete, "", f.live.ID, HeaderSessionID, other),
			http.StatusBadRequest, -32600, msg, "null")
	}
}

// plainStore hides the Checker of the store it wraps, so the validator takes its two-lookup path.
// As SessionValidatorOptions.Store of newValidatorFixture, a zero plainStore wraps the fixture's
// own store.
type plainStore struct{ session.Store }

// stores are the two ways the validator looks sessions up: in one call on a session.Checker
// (the memory store), or with a lookup and a renewal on a store without one.
var stores = []struct {
	name  string
	store session.Store
}{{"checker", nil}, {"plain", plainStore{}}}

func TestValidatorRenewsOnlyOnRequestsAndGET(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) { testValidatorRenews(t, st.store) })
	}
}

func testValidatorRenews(t *testing.T, store session.Store) {
	cases := []struct {
		name, method, body string
		renews             bool
	}{
		{"request", http.MethodPost, bodyPing, true},
		{"GET", http.MethodGet, "", true},
		{"notification", http.MethodPost, bodyNote, false},
		{"client response", http.MethodPost, bodyResponse, false},
		{"DELETE", http.MethodDelete, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newValidatorFixture(t, SessionValidatorOptions{Sessions: sessiontest.RecordSessions{Store: store}})
			f.clock.Advance(50 * time.Second)
			f.wantPassed(t, f.serve(t, c.method, c.body, f.live.ID), f.live)
			f.clock.Advance(50 * time.Second) // 100 s since initialize, 50 s since this exchange
			_, err := f.store.Get(context.Background(), f.live.ID, false)
			if c.renews && err != nil {
				t.Fatalf("%s did not renew the session: %v", c.name, err)
			}
			if !c.renews && !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("%s renewed the session (lookup error %v)", c.name, err)
			}
		})
	}
}

func TestValidatorRefusedRequestDoesNotRenew(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			f := newValidatorFixture(t, SessionValidatorOptions{Sessions: sessiontest.RecordSessions{Store: st.store}})
			f.principal = "mallory" // the live session is nobody's
			f.clock.Advance(50 * time.Second)
			f.wantRefused(t, f.serve(t, http.MethodPost, bodyPing, f.live.ID), http.StatusForbidden, -32600, "Forbidden: session request validation failed", `"p-1"`)
			f.clock.Advance(50 * time.Second)
			if _, err := f.store.Get(context.Background(), f.live.ID, false); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("a forbidden request kept the session alive: %v", err)
			}
		})
	}
}

func TestValidatorExpiredSession(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	f.clock.Advance(61 * time.Second)
	f.wantRefused(t, f.serve(t, http.MethodPost, bodyPing, f.live.ID), http.StatusNotFound, -32600, "Session not found", `"p-1"`)
	select {
	case <-f.ended:
	default:
		t.Fatal("the expired session was not ended when found")
	}
}

// failingStore fails every lookup with an error that must not reach the client.
type failingStore struct{ session.Store }

func (failingStore) Get(context.Context, string, bool) (*session.Entry, error) {
	return nil, errors.New("redis://secret-host:6379 unreachable")
}

func TestValidatorStoreErrors(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{Sessions: sessiontest.RecordSessions{Store: failingStore{}}})
	w := f.serve(t, http.MethodPost, bodyPing, "any")
	f.wantRefused(t, w, http.StatusServiceUnavailable, -32603, "Service unavailable: session store error", `"p-1"`)

	closed := newValidatorFixture(t, SessionValidatorOptions{})
	_ = closed.store.Close()
	closed.wantRefused(t, closed.serve(t, http.MethodPost, bodyPing, closed.live.ID),
		http.StatusServiceUnavailable, -32603, "Service unavailable: the server is shutting down", `"p-1"`)
	closed.wantRefused(t, closed.serve(t, http.MethodPost, bodyInit, closed.live.ID),
		http.StatusServiceUnavailable, -32603, "Service unavailable: the server is shutting down", "7")
}

func TestValidatorPassesWhatIsNotItsConcern(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	// Other HTTP methods are the endpoint's to refuse.
	f.wantPassed(t, f.serve(t, http.MethodPut, "", ""), nil)
	f.wantPassed(t, f.serve(t, http.MethodOptions, "", ""), nil)
	// A POST without a decoded message (no Decode layer in front) is left to the endpoint.
	f.wantPassed(t, f.serve(t, http.MethodPost, "", ""), nil)
}

func TestValidatorBehindDecodeOverHTTP(t *testing.T) {
	f := newValidatorFixture(t, SessionValidatorOptions{})
	srv := newServer(t, Decode(DecodeOptions{})(f.h))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(bodyPing))
	req.Header.Set("Content-Type", "application/json")
	status, h, body := do(t, srv.Client(), req)
	wantError(t, status, h, body, http.StatusBadRequest, `{"jsonrpc":"2.0","id":"p-1","error":{"code":-32600,"message":"Missing session ID"}}`)

	req, _ = http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(bodyPing))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSessionID, f.live.ID)
	status, _, body = do(t, srv.Client(), req)
	if status != http.StatusNoContent {
		t.Fatalf("status %d %s, want 204 from the stub", status, body)
	}
}

func TestWithSessionRoundTrip(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if SessionFrom(r.Context()) != nil {
		t.Fatal("SessionFrom of a bare request is not nil")
	}
	s := sessiontest.RecordLive{Rec: &session.Entry{ID: "x"}}
	if got := SessionFrom(WithSession(r, s).Context()); got != session.Live(s) {
		t.Fatalf("SessionFrom = %v, want %v", got, s)
	}
}

func TestSessionValidatorNeedsSessions(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("SessionValidator without Sessions did not panic")
		}
	}()
	SessionValidator(SessionValidatorOptions{})
}
