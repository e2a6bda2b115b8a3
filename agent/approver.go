package agent

import (
	"context"
	"time"

	"github.com/askops/askops/policy"
)

// Approver asks a human about one call without the run's goroutine
// waiting: done gets the Decision once, on a goroutine of its own, with a
// terminal Outcome (and By and Reason); when ctx ends the Ask ends
// Cancelled, and when no one can be asked, Unavailable. Anything else is
// treated as Unavailable. A run waiting for its human is its state alone,
// so 10,000 waiting runs are not 10,000 blocked goroutines with their
// stacks.
type Approver interface {
	Approve(ctx context.Context, req Request, done func(Decision))
}

// Request is what the agent asks a human about: one call the policy asked
// about, with the policy's reason and rule, and where the run came from.
type Request struct {
	RunID     string
	SessionID string
	Label     string // the run's name shown to approvers
	StartedBy string // who started the run

	Tool    string
	Args    string // the exact JSON arguments the tool would run with
	Summary string // a short human summary (for bash: the command)
	Call    Effect // what the call does, from the tool's preparation
	// Path is, for file tools, the path the policy judged: absolute, with
	// symlinks resolved, so a session grant covers the identical later call.
	// Empty for other tools.
	Path string

	Reason string // why the policy asked
	Rule   string // the rule that matched, if any
	// Approvals is how many distinct people must approve (the rule's
	// approvals: N); 0 or 1 means one.
	Approvals int

	Workspace string
	Cwd       string

	// Where the Ask should go when the run came from a chat thread; empty
	// means the configured approval channel.
	ReplyChannel  string
	ReplyThreadTS string

	// SessionName is the run's session as a person knows it
	// (RunSpec.SessionName); SessionStarted when it started: the
	// RunSpec's, else the run's start.
	SessionName    string
	SessionStarted time.Time

	// Reading is the policy's reading of the command it judged
	// (policy.Verdict.Reading): what the approver is shown it runs and
	// does. Nil for other calls.
	Reading *policy.Reading
}

// Outcome is how an Ask ended. The vocabulary is closed and its words are
// the approval store's (package pending), one for one; every outcome but
// the two approvals means the tool call does not run.
type Outcome string

const (
	Approved        Outcome = "approved"         // a permitted person approved this one call
	ApprovedSession Outcome = "approved_session" // approved, and a session grant was recorded
	Denied          Outcome = "denied"           // a permitted person denied it (optional reason)
	Expired         Outcome = "expired"          // nobody decided before the deadline
	Cancelled       Outcome = "cancelled"        // the run stopped or its context ended while waiting
	Unavailable     Outcome = "unavailable"      // no channel could carry the Ask, or the store failed
)

// Outcomes lists the closed vocabulary in a stable order.
func Outcomes() []Outcome {
	return []Outcome{Approved, ApprovedSession, Denied, Expired, Cancelled, Unavailable}
}

// Valid reports whether o is one of the closed vocabulary.
func (o Outcome) Valid() bool {
	for _, v := range Outcomes() {
		if o == v {
			return true
		}
	}
	return false
}

// Approves reports whether the tool call may run.
func (o Outcome) Approves() bool { return o == Approved || o == ApprovedSession }

// Decision is how an Ask ended, as the model and the run's events need it.
type Decision struct {
	AskID    string
	Outcome  Outcome
	By       string    // who decided (empty for outcomes no human chose)
	Reason   string    // the decider's reason, or why no human could decide
	Deadline time.Time // when the Ask would have expired
}
