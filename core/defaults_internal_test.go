package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Each Options field (and nested options struct) left at zero takes the default its doc comment
// states.
func TestOptionsDefaults(t *testing.T) {
	var zero Options
	s := NewServer(Implementation{Name: "d", Version: "1"}, zero)
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "PageSize", Given: zero.PageSize, Got: s.opts.PageSize, Doc: 1000},
		{Option: "LogLevel", Given: zero.LogLevel, Got: s.opts.LogLevel, Doc: LoggingLevel("info")},
		{Option: "MaxSubscriptions", Given: zero.MaxSubscriptions, Got: s.opts.MaxSubscriptions, Doc: 1000},
		{Option: "MaxSubscriptionURIBytes", Given: zero.MaxSubscriptionURIBytes, Got: s.opts.MaxSubscriptionURIBytes, Doc: 8 << 10},
		{Option: "MaxSubscriptionBytes", Given: zero.MaxSubscriptionBytes, Got: s.opts.MaxSubscriptionBytes, Doc: 256 << 10},
		{Option: "MaxClientInfoBytes", Given: zero.MaxClientInfoBytes, Got: s.opts.MaxClientInfoBytes, Doc: 32 << 10},
		{Option: "CacheScope", Given: zero.CacheScope, Got: s.cacheScope(), Doc: "private"},
		{Option: "ServerToClientRequestTimeout", Given: zero.ServerToClientRequestTimeout, Got: s.opts.ServerToClientRequestTimeout, Doc: 10 * time.Minute},
		{Option: "RequestState.TTL", Given: zero.RequestState.TTL, Got: s.sealer.ttl, Doc: 5 * time.Minute},
		{Option: "Broadcaster", Given: zero.Broadcaster, Got: fmt.Sprintf("%T", s.Broadcaster()), Doc: "*core.localBroadcaster"},
		{Option: "Logger", Given: zero.Logger, Got: s.logger(), Doc: (*zerolog.Logger)(&log.Logger)},
	})
}
