package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpkit/mcpkit/core"
)

func promptServer() *core.Server {
	srv := newServer(&core.Options{Logger: quietLog})
	srv.AddPrompt(&core.Prompt{Name: "greet", Title: "Greeting", Arguments: []core.PromptArgument{
		{Name: "who", Required: true}, {Name: "mood"}, {Name: "lang", Required: true},
	}}, okPrompt)
	srv.AddPrompt(&core.Prompt{Name: "simple", Description: "no arguments"}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Description: "d", Messages: []core.PromptMessage{
			{Role: "user", Content: core.Text("")},
			{Role: "assistant", Content: core.Image("iVBORw0KGgo=", "image/png")},
			{Role: "user", Content: core.Embedded(core.ResourceContents{URI: "test://r", Text: "x"})},
		}}, nil
	})
	srv.AddPrompt(&core.Prompt{Name: "fails"}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return nil, errors.New("secret")
	})
	srv.AddPrompt(&core.Prompt{Name: "panics"}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		panic("boom")
	})
	return srv
}

func TestPrompts(t *testing.T) {
	c := newClient(t, promptServer())
	c.initialize("2025-11-25")
	var lr struct {
		Prompts []struct {
			Name      string `json:"name"`
			Arguments []struct {
				Name     string `json:"name"`
				Required bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
	}
	c.result("prompts/list", nil, "ListPromptsResult", &lr)
	if len(lr.Prompts) != 4 || lr.Prompts[0].Name != "greet" || len(lr.Prompts[0].Arguments) != 3 || !lr.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts/list: %+v", lr)
	}

	var gr struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	c.result("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada", "lang": "en"}}, "GetPromptResult", &gr)
	if len(gr.Messages) != 1 || gr.Messages[0].Content.Text != "hello Ada" {
		t.Errorf("prompts/get: %+v", gr)
	}
	var simple struct {
		Messages []struct {
			Content map[string]any `json:"content"`
		} `json:"messages"`
	}
	c.result("prompts/get", map[string]any{"name": "simple"}, "GetPromptResult", &simple)
	if text, ok := simple.Messages[0].Content["text"]; !ok || text != "" {
		t.Errorf("an empty text block lost its text: %v", simple.Messages[0].Content)
	}

	wantError(t, c.call("prompts/get", map[string]any{"name": "nope"}), -32602, "Invalid params", "Prompt not found: nope")
	wantError(t, c.call("prompts/get", map[string]any{"name": "greet"}), -32602, "Invalid params", "Missing required arguments: who, lang")
	wantError(t, c.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "x", "mood": "ok"}}), -32602, "Invalid params", "Missing required arguments: lang")
	wantError(t, c.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": 1}}), -32602, "Invalid params", `Prompt argument "who" must be a string`)
	wantError(t, c.call("prompts/get", map[string]any{}), -32602, "Invalid params", "Missing or invalid prompt name")
	wantError(t, c.call("prompts/get", map[string]any{"name": "fails"}), -32603, "Internal error", "Internal error handling prompts/get request")
	wantError(t, c.call("prompts/get", map[string]any{"name": "panics"}), -32603, "Internal error", "Internal error handling prompts/get request")
}
