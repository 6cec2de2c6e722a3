package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/core"
)

// The tools and the prompt of this file answer with input_required (SEP-2322): a 2026-07-28
// client fulfils the embedded requests and retries; on the legacy wire the server fulfils them
// itself (the legacy shim) and runs the handler again.

func schemaOf(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
}

var (
	nameSchema    = schemaOf(`"name":{"type":"string"}`, "name")
	confirmSchema = schemaOf(`"ok":{"type":"boolean"}`, "ok")
	colorSchema   = schemaOf(`"color":{"type":"string"}`, "color")
	valueSchema   = schemaOf(`"value":{"type":"string"}`, "value")
	contextSchema = schemaOf(`"context":{"type":"string"}`, "context")
)

func askName(message string) core.InputRequest {
	return core.ElicitInput(core.ElicitParams{Message: message, RequestedSchema: nameSchema})
}

func sample(text string, maxTokens int) core.InputRequest {
	return core.SamplingInput(core.CreateMessageParams{
		Messages:  []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text(text)}}},
		MaxTokens: maxTokens,
	})
}

// field returns content[key] of an accepted elicitation as text.
func field(r *core.ElicitResult, key string) (string, bool) {
	if r == nil || r.Action != "accept" {
		return "", false
	}
	v, ok := r.Content[key]
	if !ok {
		return "", false
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	return fmt.Sprint(v), true
}

func sampledText(r *core.CreateMessageResult) string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

func mrtrTool(s *core.Server, name, description string, h core.ToolHandler) {
	s.AddTool(&core.Tool{Name: name, Description: description, InputSchema: noArgs}, h)
}

func addInputRequiredTools(s *core.Server) {
	mrtrTool(s, "test_input_required_result_elicitation", "Asks for the user's name through input_required, then greets them.",
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if name, ok := field(elicited(req, "user_name"), "name"); ok {
				return core.TextResult("Hello, " + name + "!"), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{"user_name": askName("What is your name?")}, "")
		})

	mrtrTool(s, "test_input_required_result_sampling", "Asks the client's model a question through input_required.",
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if r, ok := req.SamplingResponse("sample_request"); ok {
				return core.TextResult("Sampling result: " + sampledText(r)), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{"sample_request": sample("What is the capital of France?", 100)}, "")
		})

	mrtrTool(s, "test_input_required_result_list_roots", "Asks for the client's roots through input_required.",
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if r, ok := req.RootsResponse("roots_request"); ok {
				return core.TextResult(fmt.Sprintf("Found %d root(s)", len(r.Roots))), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{"roots_request": core.RootsInput()}, "")
		})

	confirm := core.ElicitInput(core.ElicitParams{Message: "Please confirm", RequestedSchema: confirmSchema})
	mrtrTool(s, "test_input_required_result_request_state", "Keeps state across an input_required round trip.",
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			state, hasState := req.RequestState()
			if r := elicited(req, "confirm"); r != nil && hasState && state == "request-state:confirm" {
				return core.TextResult("state-ok: requestState validated"), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{"confirm": confirm}, "request-state:confirm")
		})

	mrtrTool(s, "test_input_required_result_multiple_inputs", "Needs an elicitation, a sampling and the roots at once.",
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			name, okName := field(elicited(req, "user_name"), "name")
			greeting, okGreeting := req.SamplingResponse("greeting")
			roots, okRoots := req.RootsResponse("client_roots")
			if _, hasState := req.RequestState(); okName && okGreeting && okRoots && hasState {
				return core.TextResult(fmt.Sprintf("Name: %s; Greeting: %s; Roots: %d", name, sampledText(greeting), len(roots.Roots))), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{
				"user_name":    askName("What is your name?"),
				"greeting":     sample("Generate a greeting", 50),
				"client_roots": core.RootsInput(),
			}, "multiple-inputs")
		})

	mrtrTool(s, "test_input_required_result_multi_round", "Asks two questions in two rounds, with state that changes each round.", multiRound)

	mrtrTool(s, "test_input_required_result_tampered_state", "Issues a sealed requestState; a tampered one is refused before the tool runs.",
		func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			if state, ok := req.RequestState(); ok && state == "integrity" && elicited(req, "confirm") != nil {
				return core.TextResult("integrity-ok: state verified"), nil
			}
			return nil, core.NeedInput(map[string]core.InputRequest{"confirm": confirm}, "integrity")
		})

	mrtrTool(s, "test_input_required_result_capabilities", "Asks only for what the client declared it can provide.", askDeclared)
}

// multiRound asks for a name, then for a favourite colour with the name kept in a requestState
// that changes from round to round, then answers with both.
func multiRound(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
	state, _ := req.RequestState()
	switch {
	case state == "":
		return nil, core.NeedInput(map[string]core.InputRequest{"step1": askName("Step 1: What is your name?")}, `{"round":1}`)
	case state == `{"round":1}`:
		name, ok := field(elicited(req, "step1"), "name")
		if !ok {
			return nil, core.NeedInput(map[string]core.InputRequest{"step1": askName("Step 1: What is your name?")}, state)
		}
		round2, _ := json.Marshal(map[string]any{"round": 2, "name": name})
		step2 := core.ElicitInput(core.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: colorSchema})
		return nil, core.NeedInput(map[string]core.InputRequest{"step2": step2}, string(round2))
	default:
		var st struct {
			Round int    `json:"round"`
			Name  string `json:"name"`
		}
		color, ok := field(elicited(req, "step2"), "color")
		if json.Unmarshal([]byte(state), &st) != nil || st.Round != 2 || !ok {
			return nil, core.NeedInput(map[string]core.InputRequest{"step1": askName("Step 1: What is your name?")}, `{"round":1}`)
		}
		return core.TextResult(fmt.Sprintf("Multi-round complete for %s who likes %s", st.Name, color)), nil
	}
}

// askDeclared asks for an elicitation and a sampling only when the client declared it can
// answer them, and reports which responses came back.
func askDeclared(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
	if got := req.InputResponses(); len(got) > 0 {
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return core.TextResult("capabilities-ok: received " + strings.Join(keys, ", ")), nil
	}
	caps := req.ClientCapabilities()
	need := map[string]core.InputRequest{}
	if formElicitation(caps) {
		need["elicit_input"] = core.ElicitInput(core.ElicitParams{Message: "Please provide a value", RequestedSchema: valueSchema})
	}
	if caps.Has("sampling") {
		need["sample_input"] = sample("Sample request", 50)
	}
	if len(need) == 0 {
		return core.TextResult("No supported capabilities declared"), nil
	}
	return nil, core.NeedInput(need, "capabilities")
}

// formElicitation reports whether the client can answer a form elicitation: it declared
// elicitation.form, or a bare elicitation (which implies form) rather than one naming url alone.
func formElicitation(caps core.ClientCapabilities) bool {
	if caps.Has("elicitation", "form") {
		return true
	}
	return caps.Has("elicitation") && !caps.Has("elicitation", "url")
}

// elicited returns the elicitation response under key, or nil.
func elicited(req *core.ToolRequest, key string) *core.ElicitResult {
	r, _ := req.ElicitResponse(key)
	return r
}

// addInputRequiredPrompt registers the prompt that needs input before it can render.
func addInputRequiredPrompt(s *core.Server) {
	s.AddPrompt(&core.Prompt{
		Name:        "test_input_required_result_prompt",
		Description: "Asks for context through input_required before rendering.",
	}, func(_ context.Context, req *core.PromptRequest) (*core.GetPromptResult, error) {
		if r, ok := req.ElicitResponse("user_context"); ok && r.Action == "accept" {
			text, _ := r.Content["context"].(string)
			return &core.GetPromptResult{Messages: []core.PromptMessage{{
				Role: "user", Content: core.Text("Prompt with context: " + text),
			}}}, nil
		}
		return nil, core.NeedInput(map[string]core.InputRequest{"user_context": core.ElicitInput(core.ElicitParams{
			Message: "What context should the prompt use?", RequestedSchema: contextSchema,
		})}, "")
	})
}
