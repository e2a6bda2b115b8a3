package agent_test

import (
	"context"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/policy"
)

// turnModel asks for four read-only calls, then answers, over and over.
type turnModel struct{}

func (turnModel) Complete(_ context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "done"}
	if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleUser {
		msg.Content = ""
		for _, id := range []string{"a", "b", "c", "d"} {
			msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "noop", Arguments: `{"n":1}`}})
		}
	}
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{Message: msg}}}, nil
}

// BenchmarkRunOverhead is one run of two model calls and four concurrent
// read-only tool calls, with an in-process model: the loop's own cost.
func BenchmarkRunOverhead(b *testing.B) {
	noop := agent.Tool{
		Name: "noop", Params: []agent.Param{{Name: "n", Type: agent.Integer, Required: true}}, Safety: policy.ReadOnly,
		Prepare: func(agent.Env, agent.Args) (agent.Action, error) {
			return agent.Action{Run: func(context.Context) (string, error) { return "ok", nil }}, nil
		},
	}
	r, err := agent.NewRunner(agent.Config{
		Model: turnModel{}, ModelName: "m", Workspace: b.TempDir(),
		Policy: &fakePolicy{decide: allowAll}, Approver: &fakeApprover{}, Tools: []agent.Tool{noop},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Start(b.Context(), agent.RunSpec{Task: "t"}, nil).Wait(); res.Status != agent.StatusFinished {
			b.Fatalf("result = %+v", res)
		}
	}
}
