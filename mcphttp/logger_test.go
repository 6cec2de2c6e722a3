package mcphttp_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// TestLoggerAndRequestLog: Options.Logger is where the stack logs; the request log is added only
// with LogRequests, on that logger, and on zerolog's global logger when Logger is nil.
func TestLoggerAndRequestLog(t *testing.T) {
	var global testutil.SyncBuffer
	saved := log.Logger
	log.Logger = zerolog.New(&global)
	t.Cleanup(func() { log.Logger = saved })

	for _, tt := range []struct {
		name        string
		logRequests bool
		own         bool // Options.Logger set
	}{
		{"own logger, no request log", false, true},
		{"own logger with request log", true, true},
		{"global logger with request log", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var own testutil.SyncBuffer
			opts := mcphttp.Options{LogRequests: tt.logRequests}
			if tt.own {
				l := zerolog.New(&own)
				opts.Logger = &l
			}
			before := len(global.String())
			h := mcphttp.New(newServer(newTools()), opts)
			srv := httptest.NewServer(h)
			defer func() { srv.Close(); h.Close() }()
			c := testutil.NewClient(srv.URL, srv.Client())
			c.Initialize(t)
			c.Call(t, 2, "ping", nil)

			target := &own
			if !tt.own {
				target = &global
			}
			got := target.String()
			if !tt.own {
				got = got[before:]
			}
			lines := strings.Count(got, `"mcp_method":"ping"`)
			switch {
			case tt.logRequests && lines != 1:
				t.Errorf("want one request line for ping, got:\n%s", got)
			case !tt.logRequests && got != "":
				t.Errorf("no request log was asked for, got:\n%s", got)
			}
			if tt.own && len(global.String()) != before {
				t.Errorf("the global logger was used beside Options.Logger: %s", global.String()[before:])
			}
		})
	}
}
