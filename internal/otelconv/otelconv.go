// Package otelconv declares, once, the names of the OpenTelemetry conventions the kit reports
// with: the attribute keys of the MCP, GenAI, JSON-RPC, network, server and error conventions,
// the metric names and the histogram buckets. otelmcp (the server side, re-exporting them as its
// Attr* and Metric* names), client and the HTTP tracing layer of middleware all take them from
// here, so a span of the client and one of the server always spell an attribute the same way. It
// also tells whether the global providers record anything yet (TracingOff), for the layers that
// step aside while nothing would be recorded.
package otelconv

// Buckets are the explicit bucket boundaries, in seconds, of every duration histogram, as the
// MCP semantic conventions recommend.
var Buckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Metric names of the MCP semantic conventions.
const (
	MetricServerOperationDuration = "mcp.server.operation.duration"
	MetricServerSessionDuration   = "mcp.server.session.duration"
	MetricClientOperationDuration = "mcp.client.operation.duration"
	MetricClientSessionDuration   = "mcp.client.session.duration"
)

// Attribute keys.
const (
	AttrMethodName          = "mcp.method.name"
	AttrSessionID           = "mcp.session.id"
	AttrProtocolVersion     = "mcp.protocol.version"
	AttrResourceURI         = "mcp.resource.uri"
	AttrRequestID           = "jsonrpc.request.id"
	AttrResponseStatusCode  = "rpc.response.status_code"
	AttrToolName            = "gen_ai.tool.name"
	AttrPromptName          = "gen_ai.prompt.name"
	AttrOperationName       = "gen_ai.operation.name"
	AttrToolCallArguments   = "gen_ai.tool.call.arguments"
	AttrToolCallResult      = "gen_ai.tool.call.result"
	AttrNetworkTransport    = "network.transport"
	AttrNetworkProtocolName = "network.protocol.name"
	AttrNetworkProtocolVer  = "network.protocol.version"
	AttrErrorType           = "error.type"
	AttrServerAddress       = "server.address"
	AttrServerPort          = "server.port"
	AttrHTTPRequestMethod   = "http.request.method"
	AttrHTTPResponseStatus  = "http.response.status_code"
)

// Attribute values.
const (
	// ErrorTypeToolError is the error.type of a tool result with isError: true.
	ErrorTypeToolError = "tool_error"
	// OperationExecuteTool is the gen_ai.operation.name of tools/call.
	OperationExecuteTool = "execute_tool"
)
