package core

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// parseListenFilter reads the `notifications` filter of a subscriptions/listen request: -32602
// when it is missing or not a filter object. Members core does not know that are arrays of
// strings go to SubscriptionFilter.Extensions, for HonorListen to give to the extensions.
func parseListenFilter(params []byte) (SubscriptionFilter, *jsonrpc.Error) {
	var p struct {
		Notifications jsontext.Value `json:"notifications"`
	}
	var filter SubscriptionFilter
	var members map[string]jsontext.Value
	if json.Unmarshal(params, &p) != nil || p.Notifications.Kind() != '{' ||
		json.Unmarshal(p.Notifications, &filter) != nil || json.Unmarshal(p.Notifications, &members) != nil {
		return SubscriptionFilter{}, badListenFilter()
	}
	for name, v := range members {
		switch name {
		case "toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions":
			continue
		}
		var ids []string
		if v.Kind() != '[' || json.Unmarshal(v, &ids) != nil {
			filter.unknown = append(filter.unknown, name)
			continue
		}
		if filter.Extensions == nil {
			filter.Extensions = map[string][]string{}
		}
		filter.Extensions[name] = ids
	}
	return filter, nil
}

func badListenFilter() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: subscriptions/listen requires a `notifications` filter object")
}
