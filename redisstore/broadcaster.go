package redisstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
)

const kindChange = "mcp.change"

// Broadcaster is the core.Broadcaster on Redis pub/sub: a change published on any replica
// reaches the subscribers (legacy GET streams, subscriptions/listen streams) of every replica,
// each once, in publish order per publisher, filtered on receipt by each subscriber as in
// process. The publishing replica delivers to its own subscribers at once, without a round trip,
// so a replica cut off from Redis still serves its own clients; the others get the change
// through one PUBLISH on the changes channel.
type Broadcaster struct {
	r     *Router
	local core.Broadcaster
	ch    string
}

// NewBroadcaster returns the broadcaster; the router must outlive it. Give it to
// core.Options.Broadcaster of every replica.
func NewBroadcaster(r *Router) *Broadcaster {
	if r == nil {
		panic("redisstore: NewBroadcaster needs a Router")
	}
	b := &Broadcaster{r: r, local: transport.Core.NewLocalBroadcaster(), ch: r.channel("changes")}
	r.Handle(kindChange, b.receive)
	if err := r.listen(context.Background(), b.ch); err != nil {
		r.log.Warn().Err(err).Msg("redisstore: subscribing to the changes channel (retried on reconnect)")
	}
	return b
}

// Publish implements core.Broadcaster: this replica's subscribers at once, then the others
// through Redis, bounded by ctx and the router's timeout. The error is Redis's: the change then
// reached this replica's clients only.
func (b *Broadcaster) Publish(ctx context.Context, c core.Change) error {
	_ = b.local.Publish(ctx, c)
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := b.r.publish(ctx, b.ch, kindChange, "", data); err != nil {
		return fmt.Errorf("redisstore: the change reached this replica only: %w", err)
	}
	return nil
}

// Subscribe implements core.Broadcaster.
func (b *Broadcaster) Subscribe(f func(core.Change)) func() { return b.local.Subscribe(f) }

func (b *Broadcaster) receive(e Envelope) {
	if e.From == b.r.id {
		return // delivered here when it was published
	}
	var c core.Change
	if err := json.Unmarshal(e.Payload, &c); err != nil || c.Method == "" {
		b.r.log.Warn().Msg("redisstore: dropped a malformed change from the bus")
		return
	}
	_ = b.local.Publish(context.Background(), c)
}
