package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/askops/askops/internal/consoleuser"
)

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

// Event is a Claude Code or Codex hook event as it arrives on stdin (or
// as an HTTP hook's body). Fields the gateway does not use are ignored.
type Event struct {
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

// ParseEvent reads one hook event: PreToolUse or PermissionRequest,
// with a tool name and an object as input.
func ParseEvent(b []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return Event{}, fmt.Errorf("not a hook event (JSON): %w", err)
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
func (ev Event) Call(agent string) Call {
	return Call{SessionID: ev.SessionID, Agent: agent, Tool: ev.ToolName, Input: ev.ToolInput, Cwd: ev.Cwd}
}

// DenyMessage says why a's call must not run, for the model (Claude Code
// and Codex hand a deny's reason to it) and the user: who or what refused,
// and that the action was not performed. A person's deny starts with who
// denied it, where, and why, and tells the model to stop and ask its user:
// a model that reads it as a tool failure tries again another way.
func DenyMessage(a Ask) string {
	why := ""
	if a.Reason != "" {
		why = ": " + a.Reason
	}
	var s string
	switch a.Status {
	case denied:
		if a.DecidedBy != PolicyDecider {
			return personDenied(a)
		}
		s = "askops: denied by " + a.DecidedBy + why
	case expired:
		s = "askops: nobody decided in time; the approval request timed out"
		if a.Reason != "" && a.Reason != DeadlineReason {
			s = "askops: expired: " + a.Reason // what was tried (reminded, escalated)
		}
		s += tallyNote(a)
	case cancelled:
		s = "askops: the approval request was cancelled" + why
	default:
		s = "askops: approval unavailable" + why
	}
	return s + ". The action was not performed; do not retry it unchanged."
}

// personDenied is DenyMessage of an Ask a person denied: "Denied by
// U0123ABCD in Slack: not during the freeze. Do not retry this call; ask
// the user."
func personDenied(a Ask) string {
	who, where := decider(a.DecidedBy)
	s := "Denied by " + who + " " + where + tallyNote(a)
	if a.Reason != "" {
		s += ": " + a.Reason + "."
	} else {
		s += " (no reason given)."
	}
	return s + " The action was not performed. Do not retry this call; ask the user."
}

// slackUserID is the shape of a Slack user id (U…, W… in Enterprise Grid).
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9_]+$`)

// decider names who decided (an Ask's DecidedBy) and where, as a
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
func allowReason(a Ask) string {
	if a.DecidedBy == PolicyDecider {
		return "askops: allowed by policy: " + a.Reason
	}
	s := "askops: approved by " + a.DecidedBy
	if a.Status == approvedSession {
		s = "askops: approved for this session by " + a.DecidedBy
	}
	s += tallyNote(a)
	if a.Reason != "" {
		s += ": " + a.Reason
	}
	return s
}

// tallyNote is a quorum's tally as a note on the answer: " (2 of 2
// approvals (U_ANA, U_BO))" on an approval, " after 1 of 2 approvals
// (U_ANA)" on any other end; "" for an Ask that needs one approval.
func tallyNote(a Ask) string {
	t := a.tally()
	switch {
	case t == "":
		return ""
	case a.Approves():
		return " (" + t + ")"
	default:
		return " after " + t
	}
}

// decisionJSON is hookSpecificOutput.decision of a PermissionRequest answer.
type decisionJSON struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// Answer is what a hook writes: hookSpecificOutput, in the fields and
// order of the agents' documentation.
type Answer struct {
	HookSpecificOutput Output `json:"hookSpecificOutput"`
}

// Output holds PreToolUse's permissionDecision and reason, or
// PermissionRequest's decision.
type Output struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	Decision                 *decisionJSON   `json:"decision,omitempty"`
}

// ClaudeAnswer is Claude Code's hook answer for event: PreToolUse's
// permissionDecision (allow or deny, with the reason) or PermissionRequest's
// decision (allow, or deny with a message). An allow carries judged as
// updatedInput when it is set: a Bash call's input as askops judged it
// (toolcall.JudgedInput), so Claude Code runs the command text the
// policy printed from its parse, as askops' own agent does, not the text
// the model wrote.
func ClaudeAnswer(event string, a Ask, judged json.RawMessage) Answer {
	if event == EventPermissionRequest {
		return permissionAnswer(a, judged)
	}
	out := Output{HookEventName: EventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: DenyMessage(a)}
	if a.Approves() {
		out.PermissionDecision, out.PermissionDecisionReason, out.UpdatedInput = "allow", allowReason(a), judged
	}
	return Answer{HookSpecificOutput: out}
}

func permissionAnswer(a Ask, judged json.RawMessage) Answer {
	d := &decisionJSON{Behavior: "allow", UpdatedInput: judged}
	if !a.Approves() {
		d = &decisionJSON{Behavior: "deny", Message: DenyMessage(a)}
	}
	return Answer{HookSpecificOutput: Output{HookEventName: EventPermissionRequest, Decision: d}}
}

// CodexAnswer is Codex's PermissionRequest answer: the same decision
// object, never with updatedInput or interrupt (either makes Codex fail the
// hook).
func CodexAnswer(a Ask) Answer { return permissionAnswer(a, nil) }

// Hook exit codes: 0 with an answer (a deny on any failure: Claude Code
// lets the call go ahead on other codes), 2 only when the input cannot be
// read (Claude Code then blocks the call and shows stderr).
const (
	ExitAnswered   = 0
	ExitUnreadable = 2
)
