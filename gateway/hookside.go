package gateway

import (
	"context"
	"encoding/json"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/gateway/toolcall"
	"github.com/askops/askops/pending"
)

// This file is where the Service meets package hook, the client side: a
// hook's Call as the gateway's, an Ask as a front door answers its agent,
// and the Service as a hook's Settler.

// resolvePaths is c with its paths resolved on this machine
// (hook.ResolvePaths): the local serve sees its callers' files.
// Resolved comes from the resolving alone, never from the request.
func resolvePaths(c Call) Call {
	r := hook.ResolvePaths(hook.Call{Tool: c.Tool, Input: c.Input, Cwd: c.Cwd, Workspace: c.Workspace})
	c.Cwd, c.Workspace, c.Input, c.Resolved = r.Cwd, r.Workspace, r.Input, r.Resolved
	return c
}

// refused is the terminal Ask of a request the gateway could not even take.
func refused(reason string) pending.Ask {
	return pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops", DecisionReason: reason}
}

// claudeAnswerOf is Claude Code's answer to event for a (hook.ClaudeAnswer):
// an allowed Bash call's input goes back as judged (toolcall.JudgedInput).
func claudeAnswerOf(event string, a pending.Ask, tool string, input json.RawMessage) hook.Answer {
	var judged json.RawMessage
	if tool == "Bash" && len(input) > 0 {
		judged = toolcall.JudgedInput(tool, input)
	}
	return hook.ClaudeAnswer(event, answerOf(a), judged)
}

// Settler is the Service as a hook's Settler: `bot hook -config` and
// `bot mcp -config` settle their calls in this process.
func (s *Service) Settler() hook.Settler { return hookSettler{s} }

type hookSettler struct{ s *Service }

func (h hookSettler) Settle(ctx context.Context, c hook.Call) hook.Ask {
	return answerOf(h.s.Settle(ctx, Call{Call: c}))
}
