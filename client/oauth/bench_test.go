package oauth

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// okTransport answers every request with an empty 200, to measure the layer alone.
type okTransport struct{}

func (okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// BenchmarkRoundTrip is the cost the layer adds to one MCP request carrying a held token
// (Bearer, and DPoP with a fresh proof).
func BenchmarkRoundTrip(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami"}}`)
	u, _ := url.Parse("http://127.0.0.1:8080/mcp")
	for _, typ := range []string{"Bearer", "DPoP"} {
		b.Run(typ, func(b *testing.B) {
			tr := New(Options{Base: okTransport{}})
			tr.res[canonical(u)] = &resourceState{token: &Token{AccessToken: "an-access-token-of-some-length-0123456789", Type: typ}}
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, u.String(), bytes.NewReader(body))
				resp, err := tr.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatal(err)
				}
			}
		})
	}
}
