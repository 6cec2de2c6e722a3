package main

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/core"
)

// The tools of this file send requests to the client while they run (sampling/createMessage and
// elicitation/create), on the tools/call request's own stream. They work on the 2025-11-25
// session wire and on stdio, where the client can answer.

// samplingInput is the arguments of test_sampling.
type samplingInput struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the client's language model"`
}

// elicitationInput is the arguments of test_elicitation.
type elicitationInput struct {
	Message string `json:"message" jsonschema:"The message to show the user"`
}

// Requested schemas of the elicitation tools. The two SEP tools' schemas are what the suite
// inspects: defaults of every primitive type (SEP-1034) and the five enum shapes (SEP-1330).
const (
	userInfoSchema = `{"type":"object","properties":{` +
		`"username":{"type":"string","description":"Your username"},` +
		`"email":{"type":"string","description":"Your email address"}},` +
		`"required":["username","email"]}`

	defaultsSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"User name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"User age","default":30},` +
		`"score":{"type":"number","description":"User score","default":95.5},` +
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verification status","default":true}},` +
		`"required":[]}`

	enumsSchema = `{"type":"object","required":[],"properties":{` +
		`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[` +
		`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],` +
		`"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,` +
		`"items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,` +
		`"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},` +
		`{"const":"value3","title":"Third Choice"}]}}}}`
)

// addServerToClientTools registers test_sampling, test_elicitation and the two SEP elicitation
// tools.
func addServerToClientTools(s *core.Server) {
	core.AddTool(s, &core.Tool{
		Name:        "test_sampling",
		Description: "Asks the client's language model to answer the prompt (sampling/createMessage).",
	}, func(ctx context.Context, req *core.ToolRequest, in samplingInput) (*core.CallToolResult, any, error) {
		res, err := req.CreateMessage(ctx, &core.CreateMessageParams{
			Messages:  []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text(in.Prompt)}}},
			MaxTokens: 100,
		})
		if err != nil {
			return core.ErrorResult("Sampling not supported or error: " + err.Error()), nil, nil
		}
		return core.TextResult("LLM response: " + firstText(res.Content)), nil, nil
	})

	core.AddTool(s, &core.Tool{
		Name:        "test_elicitation",
		Description: "Asks the user for a username and an email address (elicitation/create).",
	}, func(ctx context.Context, req *core.ToolRequest, in elicitationInput) (*core.CallToolResult, any, error) {
		res, err := req.Elicit(ctx, &core.ElicitParams{Message: in.Message, RequestedSchema: json.RawMessage(userInfoSchema)})
		if err != nil {
			return core.ErrorResult("Elicitation not supported or error: " + err.Error()), nil, nil
		}
		return core.TextResult("User response: " + describeElicitation(res)), nil, nil
	})

	elicitTool(s, "test_elicitation_sep1034_defaults",
		"Asks for a form whose fields all carry default values (SEP-1034).",
		"Please review and update the form fields with defaults", defaultsSchema)
	elicitTool(s, "test_elicitation_sep1330_enums",
		"Asks for a form with single- and multi-select enum fields, titled and untitled (SEP-1330).",
		"Please select options from the enum fields", enumsSchema)
}

// elicitTool registers a tool without arguments that asks the client for one form and reports
// the answer.
func elicitTool(s *core.Server, name, description, message, schema string) {
	s.AddTool(&core.Tool{Name: name, Description: description, InputSchema: noArgs},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			res, err := req.Elicit(ctx, &core.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)})
			if err != nil {
				return core.ErrorResult("Elicitation not supported or error: " + err.Error()), nil
			}
			return core.TextResult("Elicitation completed: " + describeElicitation(res)), nil
		})
}

// firstText returns the text of the first text block, or "" when there is none.
func firstText(content core.ContentList) string {
	for _, c := range content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// describeElicitation shows an elicitation answer as "action=<action>, content=<json>".
func describeElicitation(res *core.ElicitResult) string {
	content := res.Content
	if content == nil {
		content = map[string]any{}
	}
	b, err := json.Marshal(content)
	if err != nil {
		b = []byte("{}")
	}
	return "action=" + res.Action + ", content=" + string(b)
}
