package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// The in-memory store keeps at most MaxEvents events and MaxBytes bytes per stream, dropping the
// oldest first but always keeping the newest, and forgets a session entirely.
func TestMemoryEventStoreBounds(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryEventStore(MemoryEventStoreOptions{MaxEvents: 3, MaxBytes: 10})
	seqs := func(session, stream string, after uint64) string {
		evs, err := m.After(ctx, session, stream, after)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%d:%s", ev.Seq, ev.Data))
		}
		return strings.Join(out, ",")
	}
	for i := uint64(1); i <= 5; i++ {
		_ = m.Append(ctx, "s1", "1", StoredEvent{Seq: i, Data: []byte{byte('a' + i - 1)}})
	}
	if got := seqs("s1", "1", 0); got != "3:c,4:d,5:e" {
		t.Fatalf("count bound: kept %s", got)
	}
	if got := seqs("s1", "1", 3); got != "4:d,5:e" {
		t.Fatalf("after 3: %s", got)
	}
	for i, d := range []string{"aaaa", "bbbb", "cccc"} {
		_ = m.Append(ctx, "s1", "2", StoredEvent{Seq: uint64(i + 1), Data: []byte(d)})
	}
	if got := seqs("s1", "2", 0); got != "2:bbbb,3:cccc" {
		t.Fatalf("byte bound: kept %s", got)
	}
	_ = m.Append(ctx, "s1", "2", StoredEvent{Seq: 4, Data: []byte("a response above the byte bound")})
	if got := seqs("s1", "2", 0); got != "4:a response above the byte bound" {
		t.Fatalf("the newest event alone: kept %s", got)
	}
	_ = m.Append(ctx, "s2", "1", StoredEvent{Seq: 1, Data: []byte("x")})
	if got := seqs("s2", "2", 0); got != "" {
		t.Fatalf("another session's stream 2: %s", got)
	}
	if sessions, streams, events, bytes := m.Usage(); sessions != 2 || streams != 3 || events != 5 || bytes != 3+31+1 {
		t.Fatalf("usage %d sessions, %d streams, %d events, %d bytes", sessions, streams, events, bytes)
	}
	m.DropStream(ctx, "s1", "1")
	m.DropSession(ctx, "s2")
	if got := seqs("s1", "1", 0) + seqs("s2", "1", 0); got != "" {
		t.Fatalf("dropped events still there: %s", got)
	}
	m.DropSession(ctx, "s1")
	if sessions, streams, events, bytes := m.Usage(); sessions+streams+events+bytes != 0 {
		t.Fatalf("after DropSession: %d sessions, %d streams, %d events, %d bytes", sessions, streams, events, bytes)
	}
}
