package main

import (
	"context"
	"strings"

	"github.com/mcpkit/mcpkit/core"
)

// promptCompletions holds the candidate values of the completable prompt arguments, per prompt
// and argument name.
var promptCompletions = map[string]map[string][]string{
	"test_prompt_with_arguments": {
		"arg1": {"value1", "value2", "value3"},
		"arg2": {"optionA", "optionB", "optionC"},
	},
}

// complete serves completion/complete: the candidates of a known prompt argument that start
// with what the client typed so far, and no values for anything else.
func complete(_ context.Context, req *core.CompleteRequest) (*core.CompleteResult, error) {
	var candidates []string
	if req.Ref.Type == "ref/prompt" {
		candidates = promptCompletions[req.Ref.Name][req.Argument.Name]
	}
	values := []string{}
	for _, v := range candidates {
		if strings.HasPrefix(v, req.Argument.Value) {
			values = append(values, v)
		}
	}
	total := len(values)
	return &core.CompleteResult{Completion: core.Completion{Values: values, Total: &total}}, nil
}
