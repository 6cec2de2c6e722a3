package stdio

import (
	"context"
	"strconv"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// messageLog is the core.Observer behind Options.LogMessages: one zerolog line per message
// served, with the fields of the HTTP request log that apply to a pipe.
type messageLog struct{ log *zerolog.Logger }

func (messageLog) StartOperation(ctx context.Context, _ *core.Operation) context.Context { return ctx }

func (l messageLog) EndOperation(ctx context.Context, op *core.Operation) {
	ev := l.log.Info()
	if op.ErrorCode == jsonrpc.CodeInternalError || op.ErrorType == "panic" {
		ev = l.log.Error()
	}
	if ev == nil {
		return // level disabled
	}
	ev.Str("transport", "stdio").Str("mcp_method", op.Method)
	if op.Outgoing {
		ev.Bool("outgoing", true)
	}
	switch id := op.RequestID.Raw().(type) {
	case int64:
		ev.Int64("jsonrpc_id", id)
	case string:
		ev.Str("jsonrpc_id", id)
	}
	if op.ProtocolVersion != "" {
		ev.Str("protocol_version", op.ProtocolVersion)
	}
	switch {
	case op.ErrorCode != 0:
		ev.Str("error_code", strconv.FormatInt(op.ErrorCode, 10))
	case op.ErrorType != "":
		ev.Str("error_type", op.ErrorType)
	case op.ToolError:
		ev.Bool("tool_error", true)
	}
	ev.Dur("duration", op.End.Sub(op.Start)).Int("bytes_in", len(op.Params)).Int("bytes_out", len(op.Result))
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		ev.Str("trace_id", sc.TraceID().String())
	}
	ev.Msg("mcp stdio message")
}

func (messageLog) SessionEnded(*core.SessionReport) {}
