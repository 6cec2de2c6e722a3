package client

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Each documented default of the client's options, observed on what Connect and the transports
// build.
func TestOptionsDefaults(t *testing.T) {
	var o Options
	c := newClient(o)
	var ht HTTPTransport
	ht.URL = "http://127.0.0.1:1/mcp"
	l, err := ht.open(context.Background(), discard{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.close(context.Background())
	hl := l.(*httpLink)
	pr, pw := io.Pipe()
	defer pr.Close()
	defer pw.Close()
	var it IOTransport
	it.Reader, it.Writer = pr, pw
	il, err := it.open(context.Background(), discard{})
	if err != nil {
		t.Fatal(err)
	}
	defer il.close(context.Background())

	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "Options.Info", Given: o.Info, Got: c.info, Doc: core.Implementation{Name: "mcpkit-client", Version: "0"}},
		{Option: "Options.Lifecycle (zero is Auto)", Given: o.Lifecycle, Got: Auto, Doc: Lifecycle(0)},
		{Option: "Options.DiscoverTimeout", Given: o.DiscoverTimeout, Got: c.probeTimeout, Doc: 10 * time.Second},
		{Option: "Options.Timeout", Given: o.Timeout, Got: c.timeout, Doc: 5 * time.Minute},
		{Option: "Options.MaxInputRounds", Given: o.MaxInputRounds, Got: c.maxRounds, Doc: 8},
		{Option: "Options.MaxServerRequests", Given: o.MaxServerRequests, Got: cap(c.slots), Doc: 16},
		{Option: "Options.MaxServerRequests (refusals)", Given: o.MaxServerRequests, Got: cap(c.refusals), Doc: 16},
		{Option: "HTTPTransport.HTTPClient (http.DefaultClient's transport)", Given: ht.HTTPClient, Got: hl.hc.Transport, Doc: http.DefaultClient.Transport},
		{Option: "HTTPTransport.AllowCrossOriginRedirects (refused)", Given: ht.AllowCrossOriginRedirects, Got: hl.hc.CheckRedirect != nil && http.DefaultClient.CheckRedirect == nil, Doc: true},
		{Option: "HTTPTransport.MaxMessageBytes", Given: ht.MaxMessageBytes, Got: hl.max, Doc: 16 << 20},
		{Option: "HTTPTransport.MaxReconnects", Given: ht.MaxReconnects, Got: hl.reconnects, Doc: 5},
		{Option: "HTTPTransport.MinReconnectDelay", Given: ht.MinReconnectDelay, Got: hl.minDelay, Doc: 100 * time.Millisecond},
		{Option: "HTTPTransport.MaxReconnectDelay", Given: ht.MaxReconnectDelay, Got: hl.maxDelay, Doc: 30 * time.Second},
		{Option: "IOTransport.MaxMessageBytes", Given: it.MaxMessageBytes, Got: il.(*lineLink).max, Doc: 16 << 20},
	})
}

// discard is a sink that drops what a link delivers.
type discard struct{}

func (discard) deliver([]byte, jsonrpc.ID) jsonrpc.ID { return jsonrpc.ID{} }
func (discard) connLost(error)                        {}
func (discard) streamEnded(error)                     {}
