package redisstore

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// Each documented default of the package's options, observed on what the constructors build
// on a real redis-server.
func TestOptionsDefaults(t *testing.T) {
	bin := testutil.NeedBinary(t, "redis-server", "redis-server")
	srv, err := testutil.StartRedis(bin)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	defer srv.Close()
	rdb, err := NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var ro Options
	r := NewRouter(rdb, ro)
	defer r.Close()
	var so SessionsOptions
	s := NewSessions(r, so)
	defer s.Close()
	var eo EventStoreOptions
	e := NewEventStore(r, eo)

	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "Options.Prefix", Given: ro.Prefix, Got: r.prefix, Doc: "mcpkit:"},
		{Option: "Options.Timeout", Given: ro.Timeout, Got: r.timeout, Doc: 2 * time.Second},
		{Option: "Options.LeaseTTL", Given: ro.LeaseTTL, Got: r.leaseTTL, Doc: 15 * time.Second},
		{Option: "Options.ReplicaID (a random UUID)", Given: ro.ReplicaID, Got: len(r.ID()), Doc: 36},

		{Option: "SessionsOptions.IdleTimeout", Given: so.IdleTimeout, Got: s.idle, Doc: 30 * time.Minute},
		{Option: "SessionsOptions.UnusedIdleTimeout", Given: so.UnusedIdleTimeout, Got: s.unused, Doc: 2 * time.Minute},
		{Option: "SessionsOptions.MaxSessions", Given: so.MaxSessions, Got: s.max, Doc: 10000},
		{Option: "SessionsOptions.ReapInterval", Given: so.ReapInterval, Got: s.every, Doc: time.Minute},

		{Option: "EventStoreOptions.MaxEvents", Given: eo.MaxEvents, Got: e.maxEvents, Doc: 256},
		{Option: "EventStoreOptions.MaxBytes", Given: eo.MaxBytes, Got: e.maxBytes, Doc: 1 << 20},
		{Option: "EventStoreOptions.TTL", Given: eo.TTL, Got: e.ttl, Doc: 30 * time.Minute},
	})
}
