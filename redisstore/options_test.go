package redisstore_test

import (
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

// TestOptionsInvalid: every invalid option value panics at construction, naming the option.
func TestOptionsInvalid(t *testing.T) {
	srv := needRedis(t)
	rdb := newClient(t, srv)
	for _, c := range []struct {
		name string
		opts redisstore.Options
	}{
		{"Options.Timeout", redisstore.Options{Timeout: -time.Second}},
		{"Options.LeaseTTL", redisstore.Options{LeaseTTL: -time.Second}},
		{"Options.LeaseTTL", redisstore.Options{LeaseTTL: time.Millisecond}},
		{"Options.ReplicaID", redisstore.Options{ReplicaID: "a b"}},
	} {
		testutil.WantPanic(t, c.name, func() { redisstore.NewRouter(rdb, c.opts) })
	}
	testutil.WantPanic(t, "NewRouter needs a Redis client", func() { redisstore.NewRouter(nil, redisstore.Options{}) })
	r := newRouter(t, srv, testPrefix())
	testutil.WantPanic(t, "SessionsOptions.ReapInterval", func() {
		redisstore.NewSessions(r, redisstore.SessionsOptions{ReapInterval: -time.Second})
	})
	for _, c := range []struct {
		name string
		opts redisstore.EventStoreOptions
	}{
		{"EventStoreOptions.MaxEvents", redisstore.EventStoreOptions{MaxEvents: -1}},
		{"EventStoreOptions.MaxBytes", redisstore.EventStoreOptions{MaxBytes: -1}},
		{"EventStoreOptions.TTL", redisstore.EventStoreOptions{TTL: -time.Second}},
	} {
		testutil.WantPanic(t, c.name, func() { redisstore.NewEventStore(r, c.opts) })
	}
	testutil.WantPanic(t, "OnLapse needs a function", func() { r.OnLapse(nil) })
}
