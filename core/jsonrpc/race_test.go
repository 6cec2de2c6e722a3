//go:build race

package jsonrpc_test

// raceEnabled is set under the race detector, whose sync.Pool drops items at random: counts of
// allocations vary there.
const raceEnabled = true
