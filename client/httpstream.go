package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// readStream reads a POST's SSE answer until the response to m arrives. A stream that ends
// before it is resumed with a GET carrying Last-Event-ID, after the server's retry interval.
func (l *httpLink) readStream(ctx context.Context, body io.ReadCloser, m *outMsg) error {
	var last string
	retry := DefaultRetry
	empties := 0
	for attempt := 0; ; attempt++ {
		done, n, err := l.readEvents(body, m.id, &last, &retry)
		if done {
			drain(body)
			return nil
		}
		body.Close()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if !m.id.IsValid() && !m.stream {
			return nil
		}
		if last == "" {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("mcpkit/client: %s: the stream ended before the response: %w", describe(m), err)
		}
		if l.reconnects < 0 || attempt >= l.reconnects {
			return fmt.Errorf("mcpkit/client: %s: the stream broke and %d reconnections failed: %w", describe(m), attempt, err)
		}
		empties = nextEmpties(empties, n)
		if err := l.sleep(ctx, l.delay(retry, empties)); err != nil {
			return err
		}
		body, err = l.resume(ctx, last, m)
		if err != nil {
			return err
		}
	}
}

// drain reads what little follows a response on its stream (a server closes the stream right
// after it), so the connection can serve the next request; a stream that stays open is cut after
// a short wait.
func drain(body io.ReadCloser) {
	t := time.AfterFunc(100*time.Millisecond, func() { body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	t.Stop()
	body.Close()
}

// resume opens the GET that continues a stream after the event last.
func (l *httpLink) resume(ctx context.Context, last string, m *outMsg) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.t.URL, nil)
	if err != nil {
		return nil, err
	}
	l.headers(req.Header, m)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", last)
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mcpkit/client: %s: resuming the stream: %w", describe(m), err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, l.statusErrorOf(resp, m.modern, req.Header.Get("Mcp-Session-Id"), true)
	}
	return resp.Body, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// readEvents hands the events of one SSE stream to the sink. It reports done when the response
// with id arrived (the stream is then left) and how many messages it delivered, and keeps the
// last event id and retry interval.
func (l *httpLink) readEvents(r io.Reader, id jsonrpc.ID, last *string, retry *time.Duration) (done bool, delivered int, err error) {
	sr := newSSEReader(r, l.max)
	for {
		ev, err := sr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, delivered, nil
			}
			return false, delivered, err
		}
		if ev.hasID {
			*last = ev.id
		}
		if ev.retry >= 0 {
			*retry = ev.retry
		}
		if len(ev.data) == 0 || (ev.event != "" && ev.event != "message") {
			continue
		}
		delivered++
		got := l.sink.deliver(ev.data, id)
		if id.IsValid() && got == id {
			return true, delivered, nil
		}
	}
}

// ready opens the standalone GET stream of a legacy session and returns once the server
// answered it (or refused it), so that what the server sends later has a path.
func (l *httpLink) ready(ctx context.Context) {
	if l.t.DisableStandaloneStream {
		return
	}
	opened := make(chan struct{})
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.streamErr = nil
	sctx := l.ctx
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		err := l.standalone(sctx, opened)
		if sctx.Err() != nil {
			return // closed, or restarted for a new session
		}
		l.mu.Lock()
		l.streamErr = err
		l.mu.Unlock()
		l.sink.streamEnded(err)
	}()
	t := time.NewTimer(2 * time.Second) // a server that holds back the headers is not waited for
	defer t.Stop()
	select {
	case <-opened:
	case <-ctx.Done():
	case <-t.C:
	}
}

// standalone keeps the session's GET stream open until ctx ends, resuming it with
// Last-Event-ID, and says why it stopped: a server without one (405), a refusal (404: the
// session expired) or failures past MaxReconnects. opened is closed once the first attempt has
// an answer.
func (l *httpLink) standalone(ctx context.Context, opened chan struct{}) error {
	var once sync.Once
	signal := func() { once.Do(func() { close(opened) }) }
	defer signal()
	var last string
	retry := DefaultRetry
	failures, empties := 0, 0
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.t.URL, nil)
		if err != nil {
			return err
		}
		l.headers(req.Header, nil)
		req.Header.Set("Accept", "text/event-stream")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := l.hc.Do(req)
		signal()
		if err == nil && resp.StatusCode != http.StatusOK {
			// 405: no stream offered; 404: the session is gone; anything else: give up rather
			// than hammer.
			serr := l.statusErrorOf(resp, false, req.Header.Get("Mcp-Session-Id"), false)
			resp.Body.Close()
			return fmt.Errorf("mcpkit/client: the session's GET stream: %w", serr)
		}
		n := 0
		if err == nil {
			failures = 0
			_, n, err = l.readEvents(resp.Body, jsonrpc.ID{}, &last, &retry) // clean end or not, reconnect
			resp.Body.Close()
		}
		empties = nextEmpties(empties, n)
		if ctx.Err() != nil {
			return nil
		}
		if failures++; l.reconnects < 0 || failures > l.reconnects {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("mcpkit/client: the session's GET stream broke and %d reconnections failed: %w", failures-1, err)
		}
		if l.sleep(ctx, l.delay(retry, empties)) != nil {
			return nil
		}
	}
	return nil
}
