// Package corehook is the slot through which core hands the kit's own packages the entry points
// that a server author never calls (driving a session, the codec, the observer's plumbing). Core
// fills it when it is initialized; internal/transport reads it once, as a typed interface, and
// is the only package that should. It imports nothing, so core can import it.
package corehook

// Core is core's accessor, set by core's initialization before any package importing core is
// initialized. internal/transport asserts it to its API interface.
var Core any

// JSONRPC is the accessor of core/jsonrpc's unexported codec (the decoder, the encoders, what
// core reads of a decoded message), set by its initialization. internal/wire asserts it to its
// API interface.
var JSONRPC any
