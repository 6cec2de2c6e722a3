package middleware

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/rs/zerolog"
)

// lineWriter hands every log line to a channel, so a test can wait for the line of an exchange
// (written after the response went out) instead of polling.
type lineWriter chan string

func (l lineWriter) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

func logServer(t *testing.T, inner http.Handler) (string, lineWriter) {
	t.Helper()
	lines := make(lineWriter, 16)
	logger := zerolog.New(lines)
	return newServer(t, RequestLog(RequestLogOptions{Logger: &logger})(Decode(DecodeOptions{})(inner))).URL, lines
}

func parseLine(t *testing.T, line string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := jsonv2.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	return m
}

func wantFields(t *testing.T, got map[string]json.RawMessage, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
}

func TestRequestLogFields(t *testing.T) {
	const secret = "sk-live-TOPSECRET"
	body := `{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"login","arguments":{"password":"` + secret + `"}}}`
	const answer = `{"jsonrpc":"2.0","id":"req-7","result":{}}`
	url, lines := logServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp?token="+secret, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Mcp-Session-Id", "sess-123")
	if status, _, _ := do(t, http.DefaultClient, req); status != 200 {
		t.Fatalf("status %d", status)
	}
	line := <-lines
	if strings.Contains(line, secret) {
		t.Errorf("a secret (body, query or header) reached the log: %s", line)
	}
	got := parseLine(t, line)
	wantFields(t, got, map[string]string{
		"level":       `"info"`,
		"http_method": `"POST"`,
		"path":        `"/mcp"`,
		"mcp_method":  `"tools/call"`,
		"jsonrpc_id":  `"req-7"`,
		"session":     `"c8d9cf2851b3"`, // a fingerprint, never the id

		"status":    `200`,
		"bytes_in":  itoa(len(body)),
		"bytes_out": itoa(len(answer)),
	})
	if _, ok := got["duration"]; !ok {
		t.Error("no duration")
	}
	for _, k := range []string{"params", "arguments", "authorization", "Authorization", "body"} {
		if _, ok := got[k]; ok {
			t.Errorf("field %q logged", k)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRequestLogSessionIDSources(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reqHeader string
		respHead  string
		exchange  string
		want      string
	}{
		{"request header wins", "from-request", "from-response", "from-exchange", `"4c1ab76aadf1"`},
		{"response header next", "", "from-response", "from-exchange", `"abe0531e3f96"`},
		{"exchange last", "", "", "from-exchange", `"fa1416790318"`},
		{"none", "", "", "", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, lines := logServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.exchange != "" {
					ExchangeFrom(r.Context()).SetSessionID(tc.exchange)
				}
				if tc.respHead != "" {
					w.Header().Set("Mcp-Session-Id", tc.respHead)
				}
				w.WriteHeader(http.StatusAccepted)
			}))
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			req.Header.Set("Content-Type", "application/json")
			if tc.reqHeader != "" {
				req.Header.Set("Mcp-Session-Id", tc.reqHeader)
			}
			do(t, http.DefaultClient, req)
			line := <-lines
			got := parseLine(t, line)
			if string(got["session"]) != tc.want {
				t.Errorf("session = %s, want %s", got["session"], tc.want)
			}
			if tc.reqHeader != "" && strings.Contains(line, tc.reqHeader) {
				t.Errorf("the session id itself reached the log: %v", got)
			}
			if _, ok := got["jsonrpc_id"]; ok {
				t.Error("a notification logged a jsonrpc_id")
			}
			wantFields(t, got, map[string]string{"status": "202", "mcp_method": `"notifications/initialized"`})
		})
	}
}

func TestRequestLogLevels(t *testing.T) {
	for _, tc := range []struct {
		status int
		level  string
	}{{200, `"info"`}, {404, `"info"`}, {499, `"info"`}, {500, `"error"`}, {503, `"error"`}} {
		t.Run(itoa(tc.status), func(t *testing.T) {
			url, lines := logServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
			}))
			req, _ := http.NewRequest(http.MethodGet, url+"/x", nil)
			do(t, http.DefaultClient, req)
			got := parseLine(t, <-lines)
			wantFields(t, got, map[string]string{"level": tc.level, "status": itoa(tc.status), "http_method": `"GET"`, "bytes_in": "0"})
			if _, ok := got["mcp_method"]; ok {
				t.Error("mcp_method logged for a request without a message")
			}
		})
	}
}

func TestRequestLogRefusedAndPanicking(t *testing.T) {
	t.Run("refused by decode", func(t *testing.T) {
		url, lines := logServer(t, okHandler)
		status, _, body := post(t, url, "text/plain", `{}`)
		if status != 415 {
			t.Fatalf("status %d", status)
		}
		got := parseLine(t, <-lines)
		wantFields(t, got, map[string]string{"status": "415", "bytes_out": itoa(len(body)), "bytes_in": "0"})
	})
	t.Run("panic inside", func(t *testing.T) {
		lines := make(lineWriter, 16)
		logger := zerolog.New(lines)
		quiet := zerolog.New(io.Discard)
		h := Recover(RecoverOptions{Logger: &quiet})(RequestLog(RequestLogOptions{Logger: &logger})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic("boom")
		})))
		url := newServer(t, h).URL
		if status, _, _ := post(t, url, "application/json", `{}`); status != 500 {
			t.Fatalf("status %d", status)
		}
		got := parseLine(t, <-lines)
		wantFields(t, got, map[string]string{"status": "500", "level": `"error"`, "panicked": "true"})
	})
}
