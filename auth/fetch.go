package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// DefaultMaxDocumentBytes bounds the documents the verifiers fetch (authorization server
// metadata, JWKS, introspection responses) when their MaxDocumentBytes option is zero: 1 MiB.
const DefaultMaxDocumentBytes int64 = 1 << 20

// defaultFetchTimeout bounds one fetch of the default HTTP client.
const defaultFetchTimeout = 10 * time.Second

// maxRedirects is how many redirects the default client follows.
const maxRedirects = 3

// defaultHTTPClient returns the client the verifiers use when none is configured: a 10 s
// timeout, and redirects followed at most three times and only to URLs that checkURL accepts
// (https, or http on a loopback host).
func defaultHTTPClient() *http.Client {
	return &http.Client{
		Timeout: defaultFetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			if _, err := checkURL("redirect", req.URL.String()); err != nil {
				return err
			}
			return nil
		},
	}
}

// fetcher does the bounded JSON requests of the verifiers.
type fetcher struct {
	client *http.Client
	max    int64
}

func newFetcher(c *http.Client, maxBytes int64, option string) fetcher {
	if maxBytes < 0 {
		panic("auth: " + option + " must not be negative")
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxDocumentBytes
	}
	if c == nil {
		c = defaultHTTPClient()
	}
	return fetcher{client: c, max: maxBytes}
}

// getJSON fetches url and decodes its JSON body into v. Any failure wraps ErrUnavailable.
func (f fetcher) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	return f.do(req, v)
}

// do sends req and decodes a 200 JSON answer of at most f.max bytes into v. Any failure wraps
// ErrUnavailable.
func (f fetcher) do(req *http.Request, v any) error {
	resp, err := f.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%w: %s answered %s", ErrUnavailable, req.URL.Redacted(), resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("%w: %s answered %s, not JSON", ErrUnavailable, req.URL.Redacted(), mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.max+1))
	if err != nil {
		return fmt.Errorf("%w: reading %s: %w", ErrUnavailable, req.URL.Redacted(), err)
	}
	if int64(len(body)) > f.max {
		return fmt.Errorf("%w: %s answered more than %d bytes", ErrUnavailable, req.URL.Redacted(), f.max)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s answered invalid JSON: %w", ErrUnavailable, req.URL.Redacted(), err)
	}
	return nil
}
