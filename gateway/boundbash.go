package gateway

import (
	"encoding/json"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
)

// BoundBash turns the command of a Claude Code Bash call the policy
// allowed into one that runs it inside askops' OS bound (`bot sandbox`)
// in workspace, the Ask's workspace. ok false leaves the command as it is.
// The wiring makes it from gateway.bound_bash.
type BoundBash func(workspace, command string) (wrapped string, ok bool)

// claudeAnswer is ClaudeAnswer, with an allowed Bash call's updatedInput
// run under the OS bound when Config.BoundBash is set and no person looked
// at the call (the policy allowed it): Claude Code runs a PreToolUse
// allow's updatedInput, so the command it runs is the bounded one. A call
// a person approved runs as approved.
func (s *Service) claudeAnswer(event string, a pending.Ask, tool string, input json.RawMessage) hook.Answer {
	ans := claudeAnswerOf(event, a, tool, input)
	if s.cfg.BoundBash == nil || tool != "Bash" || a.DecidedBy != hook.PolicyDecider || event != hook.EventPreToolUse {
		return ans
	}
	out := &ans.HookSpecificOutput
	if out.PermissionDecision != "allow" {
		return ans
	}
	in := out.UpdatedInput
	if len(in) == 0 {
		in = input
	}
	var fields map[string]json.RawMessage
	var cmd string
	if json.Unmarshal(in, &fields) != nil || fields == nil || json.Unmarshal(fields["command"], &cmd) != nil {
		return ans
	}
	ws := a.Request.Workspace
	if ws == "" {
		ws = a.Request.Cwd
	}
	wrapped, ok := s.cfg.BoundBash(ws, cmd)
	if !ok {
		return ans
	}
	fields["command"], _ = json.Marshal(wrapped)
	b, err := json.Marshal(fields)
	if err != nil {
		return ans
	}
	out.UpdatedInput = b
	out.PermissionDecisionReason += " (runs inside askops' OS bound: bot sandbox)"
	return ans
}
