package middleware

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// The held headers of deferred starts (SSEWriter.StartDeferred) are sent by one sweep for every
// writer, not by a timer each: a stream per request, most of them done well before their delay,
// would otherwise arm and stop a timer each, several times what joining and leaving a list
// costs. A writer that starts deferred joins one of a few lists (a random one, so that requests
// on many cores do not share one lock) and leaves it when its headers go out or it closes; the
// sweep runs every heldTick while any writer holds its headers (and for heldIdleSweeps after
// the last one), and sends the headers of those whose delay is up, each from a goroutine of its
// own, so that a write to a slow client never holds up the others. Each list is kept in the
// order the writers are due (insertLocked), so the sweep finds the ones that are due at its
// tail and walks no further.

// heldTick is the period of the sweep, the resolution of StartDeferred's delay.
const heldTick = 5 * time.Millisecond

// heldIdleSweeps is how many sweeps with nothing held the sweep makes before it stops (100 ms),
// so that a steady trickle of requests does not start it over for each one.
const heldIdleSweeps = 20

// heldShards is the number of lists.
const heldShards = 8

// heldList is one list of writers holding their headers, doubly linked through the writers
// (heldPrev, heldNext), latest due at head; its lock guards the links and each writer's heldIn.
type heldList struct {
	mu         sync.Mutex
	head, tail *SSEWriter
	_          [40]byte // a cache line of its own
}

// heldSweep is the state of the one sweep of held headers.
var heldSweep struct {
	lists [heldShards]heldList
	// sweeps counts the sweeps made: a writer's headers are due at a count (heldDue).
	sweeps atomic.Uint64
	// running is set while the sweep's goroutine runs (or is about to).
	running atomic.Bool
	// now is the clock (Unix nanoseconds) as the last sweep read it, or as the writer that
	// started the sweep did: while running is set, about heldTick old at most (see sweptNow).
	now atomic.Int64
}

// sweptNow returns the time as the sweep last read it while the sweep runs (one read of the
// clock every heldTick, instead of one per request), else the clock's. It is for deadlines far
// enough away that being a few milliseconds early does not matter.
func sweptNow() time.Time {
	if heldSweep.running.Load() {
		return time.Unix(0, heldSweep.now.Load())
	}
	return time.Now()
}

// holdHeaders hands s, whose headers are held from now on, to the sweep: they are sent after
// maxDelay at the latest (to within heldTick), unless s gives them up before (stopHeldLocked).
// The caller holds s.mu, and has checked that maxDelay is at least heldTick.
func (s *SSEWriter) holdHeaders(maxDelay time.Duration) {
	i := uint8(rand.Uint32() % heldShards)
	s.heldList, s.heldListed = i, true
	l := &heldSweep.lists[i]
	l.mu.Lock()
	s.heldDue = heldSweep.sweeps.Load() + uint64(maxDelay/heldTick)
	s.heldIn = true
	l.insertLocked(s)
	l.mu.Unlock()
	if !heldSweep.running.Load() {
		// The clock first: whoever sees the sweep running sees the time too.
		heldSweep.now.Store(time.Now().UnixNano())
		if heldSweep.running.CompareAndSwap(false, true) {
			go sweepHeld()
		}
	}
}

// stopHeldLocked takes the writer off the sweep's list (its headers went out, or it closed or
// broke). The caller holds s.mu.
func (s *SSEWriter) stopHeldLocked() {
	if !s.heldListed {
		return
	}
	s.heldListed = false
	l := &heldSweep.lists[s.heldList]
	l.mu.Lock()
	if s.heldIn { // else the sweep took it off: its delay is up
		l.unlinkLocked(s)
	}
	l.mu.Unlock()
}

// insertLocked puts s on the list, which stays ordered by due count, latest at head: s goes
// after the writers due later than it. Writers with one delay (the usual case: an endpoint
// holds every answer for the same time) join at the head, since none joined before them is due
// later; a shorter delay than the ones before it walks past those.
func (l *heldList) insertLocked(s *SSEWriter) {
	var prev *SSEWriter
	next := l.head
	for next != nil && next.heldDue > s.heldDue {
		prev, next = next, next.heldNext
	}
	s.heldPrev, s.heldNext = prev, next
	if prev != nil {
		prev.heldNext = s
	} else {
		l.head = s
	}
	if next != nil {
		next.heldPrev = s
	} else {
		l.tail = s
	}
}

// unlinkLocked takes s off the list.
func (l *heldList) unlinkLocked(s *SSEWriter) {
	if s.heldPrev != nil {
		s.heldPrev.heldNext = s.heldNext
	} else {
		l.head = s.heldNext
	}
	if s.heldNext != nil {
		s.heldNext.heldPrev = s.heldPrev
	} else {
		l.tail = s.heldPrev
	}
	s.heldPrev, s.heldNext, s.heldIn = nil, nil, false
}

// sweepHeld sweeps every heldTick until nothing was held for heldIdleSweeps sweeps.
func sweepHeld() {
	t := time.NewTicker(heldTick)
	defer t.Stop()
	idle := 0
	for range t.C {
		if sweepHeldOnce() {
			idle = 0
			continue
		}
		if idle++; idle < heldIdleSweeps {
			continue
		}
		// Stop, unless a writer joined a list meanwhile: one that saw the sweep running before
		// this store is on its list now, and one that did not starts a new sweep itself.
		heldSweep.running.Store(false)
		if sweepHeldOnce() && heldSweep.running.CompareAndSwap(false, true) {
			idle = 0
			continue
		}
		return
	}
}

// sweepHeldOnce makes one sweep: the writers whose delay is up leave their list and get their
// headers sent. It reports whether any writer is still held.
func sweepHeldOnce() bool {
	heldSweep.now.Store(time.Now().UnixNano())
	now := heldSweep.sweeps.Add(1)
	held := false
	var due []*SSEWriter
	for i := range heldSweep.lists {
		l := &heldSweep.lists[i]
		l.mu.Lock()
		for s := l.tail; s != nil && s.heldDue <= now; s = l.tail {
			l.unlinkLocked(s)
			due = append(due, s)
		}
		held = held || l.head != nil
		l.mu.Unlock()
	}
	for _, s := range due {
		go s.heldTimeUp() // not under a list's lock: writers joining it are not held up
	}
	return held
}

// heldTimeUp runs when the delay of a deferred start is up: it sends the headers, unless the
// writer no longer holds them.
func (s *SSEWriter) heldTimeUp() {
	s.mu.Lock()
	if !s.held || s.closed || s.err != nil {
		s.mu.Unlock()
		return
	}
	// sendLocked turns the held headers into a stream and starts the keepalive.
	_ = s.release(s.sendLocked())
}
