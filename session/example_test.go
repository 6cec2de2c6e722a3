package session_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/session"
)

// The in-memory store: sessions expire after IdleTimeout without use, at most MaxSessions live at
// once, and a reaper removes the expired ones until Close.
func ExampleNewMemory() {
	store := session.NewMemory(session.MemoryOptions{IdleTimeout: 10 * time.Minute, MaxSessions: 100})
	defer store.Close()
	ctx := context.Background()
	if err := store.Add(ctx, &session.Entry{ID: "s-1"}); err != nil {
		fmt.Println(err)
	}
	e, err := store.Get(ctx, "s-1", true) // true renews its idle time
	fmt.Println(e.ID, err, store.Len())
	store.Delete(ctx, "s-1")
	_, err = store.Get(ctx, "s-1", false)
	fmt.Println(errors.Is(err, session.ErrNotFound))
	// Output:
	// s-1 <nil> 1
	// true
}
