package redisstore_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/mcpkit/mcpkit/redisstore"
)

// TestParseSentinel: the -redis-sentinel form, and what it refuses.
func TestParseSentinel(t *testing.T) {
	master, addrs, err := redisstore.ParseSentinel("mymaster@127.0.0.1:26379, 127.0.0.1:26380,")
	if err != nil || master != "mymaster" || !reflect.DeepEqual(addrs, []string{"127.0.0.1:26379", "127.0.0.1:26380"}) {
		t.Fatalf("ParseSentinel = %q %q %v", master, addrs, err)
	}
	for _, bad := range []string{"", "mymaster", "@127.0.0.1:26379", "mymaster@", "mymaster@ , "} {
		if _, _, err := redisstore.ParseSentinel(bad); err == nil {
			t.Errorf("ParseSentinel(%q) took it", bad)
		}
	}
}

// TestTopologyClients: the constructors refuse what names no server, and a Sentinel client
// fails a call cleanly (no panic) when no Sentinel answers.
func TestTopologyClients(t *testing.T) {
	if _, err := redisstore.NewClusterClient(); err == nil {
		t.Error("NewClusterClient without seeds")
	}
	if _, err := redisstore.NewSentinelClient("", "127.0.0.1:1"); err == nil {
		t.Error("NewSentinelClient without a master name")
	}
	if _, err := redisstore.NewSentinelClient("m"); err == nil {
		t.Error("NewSentinelClient without Sentinels")
	}
	c, err := redisstore.NewSentinelClient("m", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err == nil {
		t.Error("a Sentinel client without Sentinels answered")
	}
	cc, err := redisstore.NewClusterClient("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if err := cc.Ping(context.Background()).Err(); err == nil {
		t.Error("a Cluster client without nodes answered")
	}
}
