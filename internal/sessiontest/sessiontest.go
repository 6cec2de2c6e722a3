// Package sessiontest holds a session.Lookup over a store's records, for the tests of the session
// layer below the transport that owns live sessions.
package sessiontest

import (
	"context"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/session"
)

// RecordSessions is a session.Lookup over a store's records alone, for tests of the session layer
// below the transport that owns live sessions (mcphttp): each lookup answers the record wrapped as
// a session.Live with no protocol session.
type RecordSessions struct{ Store session.Store }

// Lookup implements session.Lookup with session.Find.
func (l RecordSessions) Lookup(ctx context.Context, id string, touch bool, allow func(*session.Entry) bool) (session.Live, error) {
	rec, err := session.Find(ctx, l.Store, id, touch, allow)
	if err != nil {
		return nil, err
	}
	return RecordLive{Rec: rec}, nil
}

// Known implements session.Lookup: a lookup that renews nothing.
func (l RecordSessions) Known(ctx context.Context, id string) error {
	_, err := session.Find(ctx, l.Store, id, false, nil)
	return err
}

// RecordLive is a record as a session.Live without a protocol session.
type RecordLive struct{ Rec *session.Entry }

// Entry returns the record.
func (r RecordLive) Entry() *session.Entry { return r.Rec }

// Session returns nil: there is no protocol session.
func (r RecordLive) Session() *core.Session { return nil }

// End ends the record.
func (r RecordLive) End() { r.Rec.End() }
