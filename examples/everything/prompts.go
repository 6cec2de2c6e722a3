package main

import (
	"context"

	"github.com/mcpkit/mcpkit/core"
)

// userMessages wraps content blocks as user messages of a prompt result.
func userMessages(content ...core.Content) *core.GetPromptResult {
	res := &core.GetPromptResult{Messages: make([]core.PromptMessage, len(content))}
	for i, c := range content {
		res.Messages[i] = core.PromptMessage{Role: "user", Content: c}
	}
	return res
}

// addPrompts registers the prompts of the fixture.
func addPrompts(s *core.Server) {
	s.AddPrompt(&core.Prompt{
		Name:        "test_simple_prompt",
		Description: "A simple prompt without arguments.",
	}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return userMessages(core.Text("This is a simple prompt for testing.")), nil
	})

	s.AddPrompt(&core.Prompt{
		Name:        "test_prompt_with_arguments",
		Description: "A prompt that repeats its two arguments.",
		Arguments: []core.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(_ context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
		text := "Prompt with arguments: arg1='" + req.Arguments["arg1"] + "', arg2='" + req.Arguments["arg2"] + "'"
		return userMessages(core.Text(text)), nil
	})

	s.AddPrompt(&core.Prompt{
		Name:        "test_prompt_with_embedded_resource",
		Description: "A prompt that embeds the resource it is given.",
		Arguments: []core.PromptArgument{
			{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
		},
	}, func(_ context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
		return userMessages(
			core.Embedded(core.ResourceContents{
				URI:      req.Arguments["resourceUri"],
				MimeType: "text/plain",
				Text:     "Embedded resource content for testing.",
			}),
			core.Text("Please process the embedded resource above."),
		), nil
	})

	s.AddPrompt(&core.Prompt{
		Name:        "test_prompt_with_image",
		Description: "A prompt that carries an image.",
	}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return userMessages(
			core.Image(pngBase64, "image/png"),
			core.Text("Please analyze the image above."),
		), nil
	})
	addInputRequiredPrompt(s)
}
