package agent

import (
	"time"

	"github.com/askops/askops/policy"
)

// EventKind names what happened in a run.
type EventKind string

const (
	EventStarted    EventKind = "started"     // the run began (Text: the task)
	EventToolCall   EventKind = "tool_call"   // a call came up: Decision says what the policy said ("" for a malformed call)
	EventAsked      EventKind = "asked"       // a human is being asked (Summary, Reason, Rule)
	EventDecided    EventKind = "decided"     // the Ask ended (AskID, Outcome, By, Reason)
	EventToolResult EventKind = "tool_result" // what goes back to the model for the call (Text; NotPerformed, IsError)
	EventAssistant  EventKind = "assistant"   // the model said something (Text)
	EventFinished   EventKind = "finished"    // the model answered without tool calls (Text: the answer)
	EventFailed     EventKind = "failed"      // the run ended without an answer (Err; Text: the RunStatus)
)

// Event is one step of a run, for the Slack thread, the CLI and logs.
type Event struct {
	Kind      EventKind
	RunID     string
	SessionID string
	Time      time.Time
	Iteration int // the model call this event belongs to (1-based)

	Tool    string
	CallID  string
	Args    string // the exact JSON arguments the model sent
	Summary string

	Decision policy.Decision // tool_call
	Reason   string          // tool_call/asked: the policy's reason; decided: the decider's reason
	Rule     string

	AskID   string
	Outcome Outcome // decided
	By      string  // decided

	Text         string
	IsError      bool // tool_result: the call failed or was refused
	NotPerformed bool // tool_result: the action did not run (denied, expired, invalid, …)
	// Bounded says, on a tool_result of a command that ran, whether it ran
	// inside the OS bound: "yes (landlock ABI 7, namespaces yes)", "no,
	// approved by U123", "no (best-effort: …)". Empty with no Config.Bound.
	Bounded string
	Err     error
}
