// Package metakey names the _meta keys the protocol reserves that the kit reads and writes: the
// per-request envelope of the 2026-07-28 lifecycle, the server's identity on its results, the
// subscription id of a listen stream and the authorization denial envelope. They are declared
// once, here, below core and every package that needs them; a server author never names them
// (core reads the envelope into Call).
package metakey

// Keys of the per-request _meta envelope of the 2026-07-28 lifecycle, and of what results carry.
const (
	ProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	ClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	ClientInfo         = "io.modelcontextprotocol/clientInfo"
	LogLevel           = "io.modelcontextprotocol/logLevel"
	ServerInfo         = "io.modelcontextprotocol/serverInfo"
	SubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Authorization is the _meta key of the authorization denial envelope of SEP-2643 (Structured
// Authorization Denials, a draft: the shape may still change).
const Authorization = "io.modelcontextprotocol/authorization"
