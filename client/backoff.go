package client

import "time"

// reconnectDelays applies the defaults of HTTPTransport.MinReconnectDelay and MaxReconnectDelay
// and panics on invalid values.
func reconnectDelays(lo, hi time.Duration) (time.Duration, time.Duration) {
	if lo < 0 {
		panic("mcpkit/client: HTTPTransport.MinReconnectDelay: must not be negative")
	}
	if hi < 0 {
		panic("mcpkit/client: HTTPTransport.MaxReconnectDelay: must not be negative")
	}
	if lo == 0 {
		lo = DefaultMinReconnectDelay
	}
	if hi == 0 {
		hi = DefaultMaxReconnectDelay
	}
	if hi < lo {
		panic("mcpkit/client: HTTPTransport.MaxReconnectDelay: must not be less than MinReconnectDelay")
	}
	return lo, hi
}

// nextEmpties counts the streams in a row that ended having delivered no message: n is what the
// last one delivered.
func nextEmpties(empties, n int) int {
	if n > 0 {
		return 0
	}
	return empties + 1
}

// delay is the wait before reconnecting a stream: the server's retry, at least minDelay, doubled
// for each stream in a row past the first that delivered no message, the doubling stopping at
// maxDelay (a longer retry of the server's own is kept).
func (l *httpLink) delay(retry time.Duration, empties int) time.Duration {
	d := max(retry, l.minDelay)
	for i := 1; i < empties && d < l.maxDelay; i++ {
		d *= 2
	}
	return max(min(d, l.maxDelay), retry)
}
