package core

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// SetRequestStateClock replaces the clock that stamps and checks the expiry of sealed
// requestState tokens, so tests can move time instead of sleeping. Call it before the server
// serves anything.
func SetRequestStateClock(s *Server, now func() time.Time) { s.sealer.now = now }

// RequestStateRoundTrip returns a function that seals state for a call of msg on a session of
// s, then opens the token again for the same call, as a retry would.
func RequestStateRoundTrip(s *Server, msg *jsonrpc.Message) (roundTrip func(state string) (string, error), done func()) {
	ss := s.newSession(sessionOptions{})
	c := newCall(ss, msg, nil)
	c.ctx = context.Background()
	return func(state string) (string, error) {
		token, err := s.sealer.seal(c, state)
		if err != nil {
			return "", err
		}
		plain, werr := s.sealer.open(c, token)
		if werr != nil {
			return "", werr
		}
		return plain, nil
	}, ss.Close
}

// MessageArguments returns params.arguments as the message decoder kept it, and whether
// params.name was a string.
func MessageArguments(m *jsonrpc.Message) (args []byte, nameString bool) {
	return codec.Arguments(m)
}

// decodeMessage is the codec's decoder, for the tests of package core.
func decodeMessage(b []byte) (*jsonrpc.Message, *jsonrpc.DecodeError) { return codec.DecodeMessage(b) }

// ChecksOwnArguments reports whether the tool named name checks its own arguments (its strict
// decoder settles only what its input schema accepts; see toolEntry.checksInput).
func ChecksOwnArguments(s *Server, name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.tools.get(name)
	return ok && e.checksInput
}
