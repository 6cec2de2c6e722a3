package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// LoopbackAuthorizer is an Authorizer for command-line programs (RFC 8252): it listens on
// 127.0.0.1, prints the authorization URL for the person to open (and opens a browser when
// OpenBrowser is set), and takes the redirect the browser is sent back with. The zero value
// listens on a free port and prints to standard error. Close it when done.
type LoopbackAuthorizer struct {
	// Port is the port to listen on. Zero means a free one, chosen at the first RedirectURL.
	Port int
	// Path is the redirect's path. Empty means "/callback".
	Path string
	// Out is where the URL is printed. Nil means os.Stderr.
	Out io.Writer
	// OpenBrowser also opens the URL in the default browser.
	OpenBrowser bool

	mu     sync.Mutex
	ln     net.Listener
	srv    *http.Server
	got    chan url.Values
	closed bool
}

// RedirectURL starts the listener (once) and returns http://127.0.0.1:PORT/PATH.
func (a *LoopbackAuthorizer) RedirectURL(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return "", errors.New("the loopback authorizer is closed")
	}
	if a.ln == nil {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port)))
		if err != nil {
			return "", fmt.Errorf("listening for the redirect: %w", err)
		}
		a.ln = ln
		a.got = make(chan url.Values, 1)
		mux := http.NewServeMux()
		mux.HandleFunc(a.path(), a.callback)
		a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = a.srv.Serve(ln) }()
	}
	return "http://" + a.ln.Addr().String() + a.path(), nil
}

func (a *LoopbackAuthorizer) path() string {
	if a.Path == "" {
		return "/callback"
	}
	return a.Path
}

func (a *LoopbackAuthorizer) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code") == "" && q.Get("error") == "" {
		http.Error(w, "not an authorization response", http.StatusBadRequest)
		return
	}
	select {
	case a.got <- q:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "Authorization received. You can close this window.\n")
	default:
		http.Error(w, "an authorization response is already pending", http.StatusConflict)
	}
}

// Authorize prints authURL (and opens it when asked) and waits for the redirect.
func (a *LoopbackAuthorizer) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	if _, err := a.RedirectURL(ctx); err != nil {
		return nil, err
	}
	select { // an answer to an earlier, abandoned authorization is not this one's
	case <-a.got:
	default:
	}
	out := a.Out
	if out == nil {
		out = os.Stderr
	}
	fmt.Fprintf(out, "Open this URL to authorize:\n\n  %s\n\n", authURL)
	if a.OpenBrowser {
		if err := openBrowser(authURL); err != nil {
			fmt.Fprintf(out, "(could not open a browser: %v)\n", err)
		}
	}
	select {
	case q := <-a.got:
		return q, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the redirect: %w", context.Cause(ctx))
	}
}

// Close stops the listener.
func (a *LoopbackAuthorizer) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.srv == nil {
		return nil
	}
	return a.srv.Close()
}

func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
