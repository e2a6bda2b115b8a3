package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/askops/askops/internal/consoleuser"
	"github.com/askops/askops/pending"
)

// Settler takes a Call to its terminal Ask: the Service in this process,
// or a Client of a serve's API. It never fails: a failure is an Ask that
// ended unavailable.
type Settler interface {
	Settle(ctx context.Context, c Call) pending.Ask
}

// Hook event names.
const (
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
)

// Agents' labels, shown to approvers and in each session's thread title.
const (
	AgentClaude = "Claude Code"
	AgentCodex  = "Codex"
)

// HookEvent is a Claude Code or Codex hook event as it arrives on stdin (or
// as an HTTP hook's body). Fields the gateway does not use are ignored.
type HookEvent struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id,omitempty"` // Codex
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
}

// ParseHookEvent reads one hook event: PreToolUse or PermissionRequest,
// with a tool name and an object as input.
func ParseHookEvent(b []byte) (HookEvent, error) {
	var ev HookEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return HookEvent{}, fmt.Errorf("not a hook event (JSON): %w", err)
	}
	switch ev.HookEventName {
	case EventPreToolUse, EventPermissionRequest:
	case "":
		return ev, errors.New("hook_event_name: missing")
	default:
		return ev, fmt.Errorf("hook_event_name: askops answers PreToolUse and PermissionRequest, not %q", ev.HookEventName)
	}
	if ev.ToolName == "" {
		return ev, errors.New("tool_name: missing")
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(ev.ToolInput, &in) != nil || in == nil {
		return ev, errors.New("tool_input: want a JSON object")
	}
	return ev, nil
}

// Call is the event's tool call, asked by agent.
func (ev HookEvent) Call(agent string) Call {
	return Call{SessionID: ev.SessionID, Agent: agent, Tool: ev.ToolName, Input: ev.ToolInput, Cwd: ev.Cwd}
}

// refused is the terminal Ask of a request the gateway could not even take.
func refused(reason string) pending.Ask {
	return pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops", DecisionReason: reason}
}

// DenyMessage says why a's call must not run, for the model (Claude Code
// and Codex hand a deny's reason to it) and the user: who or what refused,
// and that the action was not performed. A person's deny starts with who
// denied it, where, and why, and tells the model to stop and ask its user:
// a model that reads it as a tool failure tries again another way.
func DenyMessage(a pending.Ask) string {
	o, _ := a.Outcome()
	why := ""
	if a.DecisionReason != "" {
		why = ": " + a.DecisionReason
	}
	var s string
	switch o {
	case pending.Denied:
		if a.DecidedBy != PolicyDecider {
			return personDenied(a)
		}
		s = "askops: denied by " + a.DecidedBy + why
	case pending.Expired:
		s = "askops: nobody decided in time; the approval request timed out"
		if a.DecisionReason != "" && a.DecisionReason != pending.DeadlineReason {
			s = "askops: expired: " + a.DecisionReason // what was tried (reminded, escalated)
		}
		s += tallyNote(a)
	case pending.Cancelled:
		s = "askops: the approval request was cancelled" + why
	default:
		s = "askops: approval unavailable" + why
	}
	return s + ". The action was not performed; do not retry it unchanged."
}

// personDenied is DenyMessage of an Ask a person denied: "Denied by
// U0123ABCD in Slack: not during the freeze. Do not retry this call; ask
// the user."
func personDenied(a pending.Ask) string {
	who, where := decider(a.DecidedBy)
	s := "Denied by " + who + " " + where + tallyNote(a)
	if a.DecisionReason != "" {
		s += ": " + a.DecisionReason + "."
	} else {
		s += " (no reason given)."
	}
	return s + " The action was not performed. Do not retry this call; ask the user."
}

// slackUserID is the shape of a Slack user id (U…, W… in Enterprise Grid).
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9_]+$`)

// decider names who decided (a pending.Ask's DecidedBy) and where, as a
// person reads it: a Slack user id in Slack, "console:NAME" in the askops
// console, any other name an API token's holder.
func decider(by string) (who, where string) {
	switch {
	case by == "":
		return "an approver", "in askops"
	case strings.HasPrefix(by, consoleuser.DeciderPrefix):
		return strings.TrimPrefix(by, consoleuser.DeciderPrefix), "in the askops console"
	case slackUserID.MatchString(by):
		return by, "in Slack"
	default:
		return by, "through the askops API"
	}
}

// allowReason says who let the call through.
func allowReason(a pending.Ask) string {
	o, _ := a.Outcome()
	if a.DecidedBy == PolicyDecider {
		return "askops: allowed by policy: " + a.DecisionReason
	}
	s := "askops: approved by " + a.DecidedBy
	if o == pending.ApprovedSession {
		s = "askops: approved for this session by " + a.DecidedBy
	}
	s += tallyNote(a)
	if a.DecisionReason != "" {
		s += ": " + a.DecisionReason
	}
	return s
}

// decisionJSON is hookSpecificOutput.decision of a PermissionRequest answer.
type decisionJSON struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// HookAnswer is what a hook writes: hookSpecificOutput, in the fields and
// order of the agents' documentation.
type HookAnswer struct {
	HookSpecificOutput HookOutput `json:"hookSpecificOutput"`
}

// HookOutput holds PreToolUse's permissionDecision and reason, or
// PermissionRequest's decision.
type HookOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	Decision                 *decisionJSON   `json:"decision,omitempty"`
}

// ClaudeAnswer is Claude Code's hook answer for event: PreToolUse's
// permissionDecision (allow or deny, with the reason) or PermissionRequest's
// decision (allow, or deny with a message). An allow of a Bash call carries
// updatedInput, the input as judged (JudgedInput of tool and input): Claude
// Code then runs the command text the policy printed from its parse, as
// askops' own agent does, not the text the model wrote.
func ClaudeAnswer(event string, a pending.Ask, tool string, input json.RawMessage) HookAnswer {
	var judged json.RawMessage
	if tool == "Bash" && len(input) > 0 {
		judged = JudgedInput(tool, input)
	}
	if event == EventPermissionRequest {
		return permissionAnswer(a, judged)
	}
	o, _ := a.Outcome()
	out := HookOutput{HookEventName: EventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: DenyMessage(a)}
	if o.Approves() {
		out.PermissionDecision, out.PermissionDecisionReason, out.UpdatedInput = "allow", allowReason(a), judged
	}
	return HookAnswer{HookSpecificOutput: out}
}

func permissionAnswer(a pending.Ask, judged json.RawMessage) HookAnswer {
	o, _ := a.Outcome()
	d := &decisionJSON{Behavior: "allow", UpdatedInput: judged}
	if !o.Approves() {
		d = &decisionJSON{Behavior: "deny", Message: DenyMessage(a)}
	}
	return HookAnswer{HookSpecificOutput: HookOutput{HookEventName: EventPermissionRequest, Decision: d}}
}

// CodexAnswer is Codex's PermissionRequest answer: the same decision
// object, never with updatedInput or interrupt (either makes Codex fail the
// hook).
func CodexAnswer(a pending.Ask) HookAnswer { return permissionAnswer(a, nil) }

// Hook exit codes: 0 with an answer (a deny on any failure: Claude Code
// lets the call go ahead on other codes), 2 only when the input cannot be
// read (Claude Code then blocks the call and shows stderr).
const (
	HookExitAnswered   = 0
	HookExitUnreadable = 2
)
