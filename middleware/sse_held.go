package middleware

import (
	"sync"
	"sync/atomic"
	"time"
)

// heldTimer sends the held headers of one writer at a time once its delay is up. They are
// pooled: a stream per request, most of them done before the delay, would otherwise make a
// timer each (several times the cost of re-arming one).
type heldTimer struct {
	t *time.Timer
	s atomic.Pointer[SSEWriter]
}

// heldTimers holds stopped heldTimers (it has no New: the timers' function leads back to it).
var heldTimers sync.Pool

// getHeldTimer returns a stopped heldTimer for s.
func getHeldTimer(s *SSEWriter) *heldTimer {
	ht, _ := heldTimers.Get().(*heldTimer)
	if ht == nil {
		ht = &heldTimer{}
		ht.t = time.AfterFunc(time.Hour, ht.fire)
		ht.t.Stop()
	}
	ht.s.Store(s)
	return ht
}

func (ht *heldTimer) fire() {
	if s := ht.s.Load(); s != nil {
		s.heldTimeUp(ht)
	}
}

// heldTimeUp runs when the delay of a deferred start is up: it sends the headers, unless the
// writer no longer holds them with this timer.
func (s *SSEWriter) heldTimeUp(ht *heldTimer) {
	s.mu.Lock()
	if s.heldTimer != ht || s.closed || s.err != nil {
		s.mu.Unlock()
		return
	}
	// sendLocked turns the held headers into a stream and starts the keepalive.
	_ = s.release(s.sendLocked())
}

// stopHeldLocked gives up the writer's held-headers timer. A timer stopped before it fired
// goes back to the pool; one whose function has started is left to it (that function finds the
// writer no longer holding it, and does nothing).
func (s *SSEWriter) stopHeldLocked() {
	ht := s.heldTimer
	if ht == nil {
		return
	}
	s.heldTimer = nil
	if ht.t.Stop() {
		ht.s.Store(nil)
		heldTimers.Put(ht)
	}
}
