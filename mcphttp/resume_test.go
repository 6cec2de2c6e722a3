package mcphttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/session"
)

// appendedEvent is one Append seen by recordingStore.
type appendedEvent struct {
	session, stream string
	seq             uint64
	data            string
}

// recordingStore is the in-memory store that reports every Append, so a test can wait until a
// message is stored instead of sleeping.
type recordingStore struct {
	*session.MemoryEventStore
	appended chan appendedEvent
}

func newRecordingStore(opts session.MemoryEventStoreOptions) *recordingStore {
	return &recordingStore{MemoryEventStore: session.NewMemoryEventStore(opts), appended: make(chan appendedEvent, 256)}
}

func (s *recordingStore) Append(ctx context.Context, sessionID, streamID string, ev session.StoredEvent) error {
	err := s.MemoryEventStore.Append(ctx, sessionID, streamID, ev)
	s.appended <- appendedEvent{sessionID, streamID, ev.Seq, string(ev.Data)}
	return err
}

// waitAppended waits until event seq of a stream of the session is stored.
func (s *recordingStore) waitAppended(t *testing.T, session, stream string, seq uint64) appendedEvent {
	t.Helper()
	for {
		ev := recv(t, s.appended, fmt.Sprintf("event %s-%d to be stored", stream, seq))
		if ev.session == session && ev.stream == stream && ev.seq == seq {
			return ev
		}
	}
}

// pollTool is the "poll" tool: progress 1, then CloseStream (its error goes to closed), then it
// waits for release (or its context, whose error goes to ctxErr), then progress 2 and "polled".
type pollTool struct {
	closed  chan error
	release chan struct{}
	ctxErr  chan error
}

func addPollTool(s *core.Server) *pollTool {
	p := &pollTool{closed: make(chan error, 16), release: make(chan struct{}), ctxErr: make(chan error, 16)}
	s.AddTool(&core.Tool{Name: "poll", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			_ = req.Progress(1, 2, "before")
			p.closed <- req.CloseStream()
			select {
			case <-p.release:
			case <-ctx.Done():
				p.ctxErr <- context.Cause(ctx)
				return nil, ctx.Err()
			}
			_ = req.Progress(2, 2, "after")
			return core.TextResult("polled"), nil
		})
	return p
}

// resumableFixture is the default stack with resumability on, events kept in a recording store.
func resumableFixture(t *testing.T, ro mcphttp.ResumabilityOptions) (*fixture, *recordingStore, *pollTool) {
	t.Helper()
	store := newRecordingStore(session.MemoryEventStoreOptions{MaxEvents: ro.MaxEvents, MaxBytes: ro.MaxBytes})
	ro.Enabled = true
	ro.Store = store
	f := newFixture(t, mcphttp.Options{Resumability: ro})
	p := addPollTool(f.server)
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
	})
	return f, store, p
}

// postStream opens a request POST and returns a reader of its event stream.
func postStream(t *testing.T, c *testutil.Client, body string) *testutil.SSEReader {
	t.Helper()
	resp := openStream(t, c, c.NewPost(context.Background(), body))
	wantSSEHeaders(t, resp)
	return testutil.NewSSEReader(resp.Body)
}

// resumeGet sends a GET with Last-Event-ID and returns the response once its headers arrived.
func resumeGet(t *testing.T, c *testutil.Client, lastEventID string) *http.Response {
	t.Helper()
	req := c.NewRequest(context.Background(), http.MethodGet)
	req.Header.Set("Last-Event-ID", lastEventID)
	return openStream(t, c, req)
}

// wantEvent reads the next event (comments skipped) and checks its id; it returns the event.
func wantEvent(t *testing.T, sr *testutil.SSEReader, id string) testutil.Event {
	t.Helper()
	ev, err := nextEvent(t, sr, true)
	if err != nil {
		t.Fatalf("want event %s: %v", id, err)
	}
	if ev.ID != id {
		t.Fatalf("event id %q, want %q (data %s)", ev.ID, id, ev.Data)
	}
	return ev
}

// wantPriming reads the priming event: the given id, empty data, and the retry field.
func wantPriming(t *testing.T, sr *testutil.SSEReader, id, retry string) {
	t.Helper()
	ev := wantEvent(t, sr, id)
	if ev.Data != "" || ev.Event != "" {
		t.Fatalf("priming event %+v, want an id and empty data", ev)
	}
	if ev.Retry != retry {
		t.Fatalf("priming event retry %q, want %q", ev.Retry, retry)
	}
}

// wantProgress reads a progress notification with the given id and progress value.
func wantProgress(t *testing.T, sr *testutil.SSEReader, id string, progress int) {
	t.Helper()
	ev := wantEvent(t, sr, id)
	w := testutil.DecodeWire(t, []byte(ev.Data))
	if w.Method != "notifications/progress" || !strings.Contains(string(w.Params), fmt.Sprintf(`"progress":%d`, progress)) {
		t.Fatalf("event %s = %s, want progress %d", id, ev.Data, progress)
	}
}

// wantResponse reads the response to request reqID with the given text.
func wantResponse(t *testing.T, sr *testutil.SSEReader, id, reqID, text string) {
	t.Helper()
	ev := wantEvent(t, sr, id)
	checkSchema(t, "JSONRPCResultResponse", []byte(ev.Data))
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), reqID)); got != text {
		t.Fatalf("result text %q, want %q", got, text)
	}
}

// wantEnd checks that the stream ends next (comments aside).
func wantEnd(t *testing.T, sr *testutil.SSEReader) {
	t.Helper()
	if ev, err := nextEvent(t, sr, true); !errors.Is(err, io.EOF) {
		t.Fatalf("want the end of the stream, got %+v, %v", ev, err)
	}
}

// wantStandalone checks that a GET answered 200 as the session's standalone stream: a second GET
// of the session is then refused with 409.
func wantStandalone(t *testing.T, c *testutil.Client, resp *http.Response) {
	t.Helper()
	wantSSEHeaders(t, resp)
	rep := c.Do(t, c.NewRequest(context.Background(), http.MethodGet))
	if rep.Status != http.StatusConflict {
		t.Fatalf("second GET: status %d, want 409 (the first was not the standalone stream)", rep.Status)
	}
}

func storeUsage(t *testing.T, s *recordingStore, streams, events int) {
	t.Helper()
	_, gotStreams, gotEvents, _ := s.Usage()
	if gotStreams != streams || gotEvents != events {
		t.Fatalf("store holds %d streams and %d events, want %d and %d", gotStreams, gotEvents, streams, events)
	}
}

// A request stream starts with a priming event carrying the retry field; every message has an
// id naming the stream, numbered up from 1; each request gets its own stream; a stream whose
// response reached the client is forgotten at once.
func TestResumablePrimingRetryAndIDs(t *testing.T) {
	f, store, _ := resumableFixture(t, mcphttp.ResumabilityOptions{RetryInterval: 250 * time.Millisecond})
	c := f.initialized(t)
	sr := postStream(t, c, testutil.CallTool(7, "progress", map[string]any{"steps": 3}, "tok"))
	wantPriming(t, sr, "1-0", "250")
	for i := 1; i <= 3; i++ {
		wantProgress(t, sr, fmt.Sprintf("1-%d", i), i)
	}
	wantResponse(t, sr, "1-4", "7", "done")
	wantEnd(t, sr)

	sr = postStream(t, c, testutil.CallTool(8, "echo", map[string]any{"text": "hi"}, nil))
	wantPriming(t, sr, "2-0", "250")
	wantResponse(t, sr, "2-1", "8", "hi")
	wantEnd(t, sr)
	storeUsage(t, store, 0, 0)

	// Another session numbers its streams on its own.
	c2 := f.initialized(t)
	sr = postStream(t, c2, testutil.CallTool(1, "echo", map[string]any{"text": "x"}, nil))
	wantPriming(t, sr, "1-0", "250")
	wantResponse(t, sr, "1-1", "1", "x")
}

// Without resumability the wire is what it always was: data lines only, no priming event, no id
// or retry field; CloseStream reports ErrNotResumable and the request goes on on its POST; a
// Last-Event-ID is ignored (the GET is the standalone stream).
func TestResumabilityOffKeepsWire(t *testing.T) {
	f := newFixture(t, mcphttp.Options{})
	p := addPollTool(f.server)
	c := f.initialized(t)
	rep := c.Post(t, testutil.CallTool(3, "progress", map[string]any{"steps": 2}, "tok"))
	body := string(rep.Body)
	frames := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	if len(frames) != 3 {
		t.Fatalf("%d frames, want 3: %q", len(frames), body)
	}
	for _, fr := range frames {
		if !strings.HasPrefix(fr, "data: {") || strings.Contains(fr, "\n") {
			t.Fatalf("frame %q, want a single data line", fr)
		}
	}

	resp := openStream(t, c, c.NewPost(context.Background(), testutil.CallTool(4, "poll", nil, "tok")))
	sr := testutil.NewSSEReader(resp.Body)
	ev, err := nextEvent(t, sr, true)
	if err != nil || ev.ID != "" || ev.Retry != "" || !strings.Contains(ev.Data, `"progress":1`) {
		t.Fatalf("first frame %+v, %v: want progress 1 without id or retry", ev, err)
	}
	if err := recv(t, p.closed, "CloseStream"); !errors.Is(err, core.ErrNotResumable) {
		t.Fatalf("CloseStream = %v, want ErrNotResumable", err)
	}
	close(p.release)
	if ev, _ = nextEvent(t, sr, true); !strings.Contains(ev.Data, `"progress":2`) || ev.ID != "" {
		t.Fatalf("second frame %+v, want progress 2 on the POST", ev)
	}
	if ev, _ = nextEvent(t, sr, true); ev.ID != "" {
		t.Fatalf("response frame has an id: %+v", ev)
	} else if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), "4")); got != "polled" {
		t.Fatalf("result %q", got)
	}
	wantEnd(t, sr)

	wantStandalone(t, c, resumeGet(t, c, "1-0"))
}

// The handler closes its stream early; once the rest (a notification, the response) is stored,
// a GET with Last-Event-ID gets exactly what came after that id, then the stream ends and is
// forgotten: the same id afterwards is an ordinary GET.
func TestCloseStreamThenResumeFromStore(t *testing.T) {
	f, store, p := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	sr := postStream(t, c, testutil.CallTool(5, "poll", nil, "tok"))
	wantPriming(t, sr, "1-0", "1000")
	wantProgress(t, sr, "1-1", 1)
	if err := recv(t, p.closed, "CloseStream"); err != nil {
		t.Fatalf("CloseStream = %v", err)
	}
	wantEnd(t, sr) // the connection closed mid-call
	close(p.release)
	store.waitAppended(t, c.SessionID, "1", 2)
	store.waitAppended(t, c.SessionID, "1", 3)
	storeUsage(t, store, 1, 3)

	resp := resumeGet(t, c, "1-1")
	wantSSEHeaders(t, resp)
	gr := testutil.NewSSEReader(resp.Body)
	wantProgress(t, gr, "1-2", 2)
	if gr.Retry() != "1000" {
		t.Fatalf("the resumed stream's retry field %q, want 1000", gr.Retry())
	}
	wantResponse(t, gr, "1-3", "5", "polled")
	wantEnd(t, gr)
	storeUsage(t, store, 0, 0)

	wantStandalone(t, c, resumeGet(t, c, "1-1"))
}

// The client reconnects before the handler is done: the GET gets the stored backlog, then the
// rest live, each message exactly once.
func TestCloseStreamThenResumeLive(t *testing.T) {
	f, store, p := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	sr := postStream(t, c, testutil.CallTool("a", "poll", nil, "tok"))
	wantPriming(t, sr, "1-0", "1000")
	wantProgress(t, sr, "1-1", 1)
	if err := recv(t, p.closed, "CloseStream"); err != nil {
		t.Fatalf("CloseStream = %v", err)
	}
	wantEnd(t, sr)

	// From the priming id: progress 1 again (the client says it has not seen it), then live.
	resp := resumeGet(t, c, "1-0")
	wantSSEHeaders(t, resp)
	gr := testutil.NewSSEReader(resp.Body)
	wantProgress(t, gr, "1-1", 1)
	close(p.release)
	wantProgress(t, gr, "1-2", 2)
	wantResponse(t, gr, "1-3", `"a"`, "polled")
	wantEnd(t, gr)
	storeUsage(t, store, 0, 0)
}

// A client that loses the connection does not cancel its request: the call goes on, its
// response is stored, and a GET with Last-Event-ID gets it.
func TestResumeAfterClientDisconnect(t *testing.T) {
	f, store, _ := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	// A connection of its own, so that its closing is the only one the fixture reports.
	own := f.client()
	own.HTTP = &http.Client{Transport: &http.Transport{}}
	own.SessionID, own.ProtocolVersion = c.SessionID, c.ProtocolVersion
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for len(f.connClosed) > 0 {
		<-f.connClosed
	}
	resp := openStream(t, own, own.NewPost(ctx, testutil.CallTool(9, "block", nil, nil)))
	sr := testutil.NewSSEReader(resp.Body)
	wantPriming(t, sr, "1-0", "1000")
	recv(t, f.tools.entered, "the tool to start")
	cancel()
	recv(t, f.connClosed, "the server to close the POST's connection")

	close(f.tools.release)
	store.waitAppended(t, c.SessionID, "1", 1)
	select {
	case err := <-f.tools.ctxDone:
		t.Fatalf("the call was cancelled: %v", err)
	default:
	}
	gr := testutil.NewSSEReader(resumeGet(t, c, "1-0").Body)
	wantResponse(t, gr, "1-1", "9", "released")
	wantEnd(t, gr)
}

// A Last-Event-ID of another session's stream replays nothing: the GET is the session's own
// standalone stream, whose first message is its own; the owner still resumes its stream.
func TestLastEventIDOfAnotherSession(t *testing.T) {
	f, store, p := resumableFixture(t, mcphttp.ResumabilityOptions{})
	a := f.initialized(t)
	sr := postStream(t, a, testutil.CallTool(1, "poll", nil, "tok"))
	wantPriming(t, sr, "1-0", "1000")
	wantProgress(t, sr, "1-1", 1)
	recv(t, p.closed, "CloseStream")
	wantEnd(t, sr)
	close(p.release)
	store.waitAppended(t, a.SessionID, "1", 3)

	b := f.initialized(t)
	resp := resumeGet(t, b, "1-1") // a's id; b has no stream 1
	wantStandalone(t, b, resp)
	f.server.AddTool(&core.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult(""), nil
		})
	ev, err := nextEvent(t, testutil.NewSSEReader(resp.Body), true)
	if err != nil || ev.ID != "" || !strings.Contains(ev.Data, "notifications/tools/list_changed") {
		t.Fatalf("first message on b's stream: %+v, %v; want b's own tools/list_changed", ev, err)
	}

	gr := testutil.NewSSEReader(resumeGet(t, a, "1-1").Body)
	wantProgress(t, gr, "1-2", 2)
	wantResponse(t, gr, "1-3", "1", "polled")
	wantEnd(t, gr)
}

// Unknown, malformed and never-issued ids replay nothing: the GET is an ordinary one.
func TestUnknownLastEventID(t *testing.T) {
	f, _, p := resumableFixture(t, mcphttp.ResumabilityOptions{})
	for _, id := range []string{"garbage", "7-0", "1-9", "-1", "1-", "1-1-1", "+1-0", "1-0x"} {
		t.Run(id, func(t *testing.T) {
			c := f.initialized(t)
			// Stream 1 exists and issued ids 1-0 and 1-1; its call waits for release.
			sr := postStream(t, c, testutil.CallTool(1, "poll", nil, "tok"))
			wantPriming(t, sr, "1-0", "1000")
			wantProgress(t, sr, "1-1", 1)
			recv(t, p.closed, "CloseStream")
			wantStandalone(t, c, resumeGet(t, c, id))
		})
	}
}

// Ending the session (DELETE) releases its stored events.
func TestSessionEndReleasesEvents(t *testing.T) {
	f, store, p := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	sr := postStream(t, c, testutil.CallTool(1, "poll", nil, "tok"))
	wantPriming(t, sr, "1-0", "1000")
	wantProgress(t, sr, "1-1", 1)
	recv(t, p.closed, "CloseStream")
	close(p.release)
	store.waitAppended(t, c.SessionID, "1", 3)
	storeUsage(t, store, 1, 3)
	if rep := c.Do(t, c.NewRequest(context.Background(), http.MethodDelete)); rep.Status != http.StatusOK {
		t.Fatalf("DELETE: status %d", rep.Status)
	}
	if sessions, streams, events, bytes := store.Usage(); sessions+streams+events+bytes != 0 {
		t.Fatalf("after DELETE: %d sessions, %d streams, %d events, %d bytes", sessions, streams, events, bytes)
	}
}

// Past MaxStreams a session forgets its oldest stream: its id is then unknown (an ordinary
// GET), its call is cancelled (no connection was attached to it, so nobody could get its
// answer), and the newer stream still resumes.
func TestMaxStreamsForgetsOldest(t *testing.T) {
	f, store, p := resumableFixture(t, mcphttp.ResumabilityOptions{MaxStreams: 1})
	c := f.initialized(t)
	for i, id := range []string{"1", "2"} {
		sr := postStream(t, c, testutil.CallTool(i+1, "poll", nil, "tok"))
		wantPriming(t, sr, id+"-0", "1000")
		wantProgress(t, sr, id+"-1", 1)
		recv(t, p.closed, "CloseStream")
		wantEnd(t, sr)
	}
	if err := recv(t, p.ctxErr, "the forgotten stream's call to be cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the forgotten call ended with %v, want context.Canceled", err)
	}
	close(p.release)
	store.waitAppended(t, c.SessionID, "2", 3)
	gr := testutil.NewSSEReader(resumeGet(t, c, "2-1").Body)
	wantProgress(t, gr, "2-2", 2)
	wantResponse(t, gr, "2-3", "2", "polled")
	wantEnd(t, gr)
	wantStandalone(t, c, resumeGet(t, c, "1-1"))
}

// A second GET for the same stream takes it over: the first one ends, the second gets the rest.
func TestResumeTakeover(t *testing.T) {
	f, _, p := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	sr := postStream(t, c, testutil.CallTool(1, "poll", nil, "tok"))
	wantPriming(t, sr, "1-0", "1000")
	wantProgress(t, sr, "1-1", 1)
	recv(t, p.closed, "CloseStream")
	wantEnd(t, sr)
	first := testutil.NewSSEReader(resumeGet(t, c, "1-1").Body)
	second := testutil.NewSSEReader(resumeGet(t, c, "1-1").Body)
	wantEnd(t, first)
	close(p.release)
	wantProgress(t, second, "1-2", 2)
	wantResponse(t, second, "1-3", "1", "polled")
	wantEnd(t, second)
}

// The reviewer's scenario: a client opens request after request and walks away from each right
// after the priming event, never resuming. With MaxStreams 2 the session keeps two of them
// running; every older one is forgotten, and its call cancelled, as newer ones come in.
func TestAbandonedStreamsAreCancelled(t *testing.T) {
	f, _, _ := resumableFixture(t, mcphttp.ResumabilityOptions{MaxStreams: 2})
	var running atomic.Int32
	cancelled := make(chan string, 32)
	f.server.AddTool(&core.Tool{Name: "linger", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			running.Add(1)
			defer running.Add(-1)
			<-ctx.Done()
			cancelled <- req.ID().String()
			return nil, ctx.Err()
		})
	c := f.initialized(t)
	// Connections of their own, so that the fixture reports only theirs closing.
	own := f.client()
	own.HTTP = &http.Client{Transport: &http.Transport{}}
	own.SessionID, own.ProtocolVersion = c.SessionID, c.ProtocolVersion
	for len(f.connClosed) > 0 {
		<-f.connClosed
	}
	const posts = 20
	for i := 1; i <= posts; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		resp := openStream(t, own, own.NewPost(ctx, testutil.CallTool(i, "linger", nil, nil)))
		wantSSEHeaders(t, resp)
		wantPriming(t, testutil.NewSSEReader(resp.Body), fmt.Sprintf("%d-0", i), "1000")
		cancel()
		resp.Body.Close()
		// The POST's handler has let go of the stream once the server closed the connection.
		recv(t, f.connClosed, "the server to close the POST's connection")
	}
	got := map[string]bool{}
	for range posts - 2 {
		got[recv(t, cancelled, "an abandoned call to be cancelled")] = true
	}
	for i := 1; i <= posts-2; i++ {
		if !got[strconv.Itoa(i)] {
			t.Fatalf("cancelled calls %v: %d is missing", got, i)
		}
	}
	select {
	case id := <-cancelled:
		t.Fatalf("call %s was cancelled too, though its stream is kept", id)
	case <-time.After(50 * time.Millisecond):
	}
	if n := running.Load(); n != 2 {
		t.Fatalf("%d calls running, want the 2 streams the session keeps", n)
	}
}

// wantPlainEcho calls the echo tool on c and checks it is answered on a plain SSE stream (no
// priming event, no ids); why says what a resumable answer would mean.
func wantPlainEcho(t *testing.T, c *testutil.Client, id int, why string) {
	t.Helper()
	plain := postStream(t, c, testutil.CallTool(id, "echo", map[string]any{"text": "plain"}, nil))
	ev, err := nextEvent(t, plain, false)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "" || ev.Retry != "" {
		t.Fatalf("first event %+v: %s", ev, why)
	}
	if got := toolText(t, wantResult(t, testutil.DecodeWire(t, []byte(ev.Data)), strconv.Itoa(id))); got != "plain" {
		t.Fatalf("echo %q", got)
	}
	wantEnd(t, plain)
}

// When every stream a session keeps is a running call with its client attached, one more
// request is not made resumable (no stream is forgotten under a waiting client): it is answered
// on a plain SSE stream, without priming event or ids.
func TestResumableFallbackWhenAllStreamsBusy(t *testing.T) {
	f, _, _ := resumableFixture(t, mcphttp.ResumabilityOptions{MaxStreams: 1})
	c := f.initialized(t)
	sr := postStream(t, c, testutil.CallTool(1, "block", nil, nil))
	wantPriming(t, sr, "1-0", "1000")
	recv(t, f.tools.entered, "the blocking call to start")

	wantPlainEcho(t, c, 2, "the busy session's new request was made resumable")

	// The first stream was left alone and still gets its answer.
	close(f.tools.release)
	wantResponse(t, sr, "1-1", "1", "released")
	wantEnd(t, sr)
}

// One caller runs at most MaxCallsPerCaller resumable calls at once across its sessions: past
// it, a request in another session of the same caller is served on a plain SSE stream, and
// once the running call is over the caller's next request is resumable again.
func TestResumableCallsPerCaller(t *testing.T) {
	f, _, _ := resumableFixture(t, mcphttp.ResumabilityOptions{MaxCallsPerCaller: 1})
	first, second := f.initialized(t), f.initialized(t)
	sr := postStream(t, first, testutil.CallTool(1, "block", nil, nil))
	wantPriming(t, sr, "1-0", "1000")
	recv(t, f.tools.entered, "the blocking call to start")

	wantPlainEcho(t, second, 2, "a call past the caller's cap was made resumable")

	close(f.tools.release)
	wantResponse(t, sr, "1-1", "1", "released")
	wantEnd(t, sr)

	// The call is over: the caller may run a resumable call again.
	again := postStream(t, second, testutil.CallTool(3, "echo", map[string]any{"text": "again"}, nil))
	wantPriming(t, again, "1-0", "1000")
}

// A client that dropped a request's stream and then cancels the request gets, on resuming, what
// the stream stored after the id it names (here the server's notifications/cancelled for the
// nested roots/list request), and then the end of the stream: a cancelled request has no
// response, and the GET must not hang.
func TestResumeAfterCancel(t *testing.T) {
	f, store, _ := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	own := f.client()
	own.HTTP = &http.Client{Transport: &http.Transport{}}
	own.SessionID, own.ProtocolVersion = c.SessionID, c.ProtocolVersion
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for len(f.connClosed) > 0 {
		<-f.connClosed
	}
	resp := openStream(t, own, own.NewPost(ctx, testutil.CallTool(7, "roots", nil, nil)))
	sr := testutil.NewSSEReader(resp.Body)
	wantPriming(t, sr, "1-0", "1000")
	nested := testutil.DecodeWire(t, []byte(wantEvent(t, sr, "1-1").Data))
	if nested.Method != "roots/list" {
		t.Fatalf("event 1-1 %s, want the nested roots/list request", nested.Method)
	}
	cancel() // the client drops the stream...
	recv(t, f.connClosed, "the server to close the POST's connection")
	// ...and then cancels the request.
	wantEmpty(t, c.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": 7})), http.StatusAccepted)
	note := store.waitAppended(t, c.SessionID, "1", 2)
	if !strings.Contains(note.data, `"method":"notifications/cancelled"`) || !strings.Contains(note.data, string(nested.ID)) {
		t.Fatalf("event 1-2 %s, want notifications/cancelled for %s", note.data, nested.ID)
	}

	gr := testutil.NewSSEReader(resumeGet(t, c, "1-1").Body)
	ev := wantEvent(t, gr, "1-2")
	if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != "notifications/cancelled" {
		t.Fatalf("replayed %s, want notifications/cancelled", ev.Data)
	}
	wantEnd(t, gr)
	storeUsage(t, store, 0, 0)
	// The stream is forgotten once replayed: the id now names nothing.
	wantStandalone(t, c, resumeGet(t, c, "1-1"))
}

// The same, with the client resumed before it cancels: the live GET gets the nested
// notifications/cancelled and then ends.
func TestCancelWhileResumed(t *testing.T) {
	f, store, _ := resumableFixture(t, mcphttp.ResumabilityOptions{})
	c := f.initialized(t)
	own := f.client()
	own.HTTP = &http.Client{Transport: &http.Transport{}}
	own.SessionID, own.ProtocolVersion = c.SessionID, c.ProtocolVersion
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for len(f.connClosed) > 0 {
		<-f.connClosed
	}
	resp := openStream(t, own, own.NewPost(ctx, testutil.CallTool(8, "roots", nil, nil)))
	sr := testutil.NewSSEReader(resp.Body)
	wantPriming(t, sr, "1-0", "1000")
	wantEvent(t, sr, "1-1")
	cancel()
	recv(t, f.connClosed, "the server to close the POST's connection")

	gr := testutil.NewSSEReader(resumeGet(t, c, "1-1").Body)
	wantEmpty(t, c.Post(t, testutil.Notification("notifications/cancelled", map[string]any{"requestId": 8})), http.StatusAccepted)
	ev := wantEvent(t, gr, "1-2")
	if w := testutil.DecodeWire(t, []byte(ev.Data)); w.Method != "notifications/cancelled" {
		t.Fatalf("live event %s, want notifications/cancelled", ev.Data)
	}
	wantEnd(t, gr)
	storeUsage(t, store, 0, 0)
}
