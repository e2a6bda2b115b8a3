// Package pending holds Asks: tool calls waiting for a human decision.
//
// An Ask is created with a deadline, posted somewhere a human can see it (by
// another package), decided at most once (the first decision wins), and waited
// on by the goroutine whose tool call it blocks. The Store contract is served by
// a Redis implementation (several replicas share one Redis) and by an in-memory
// implementation (the embedded single-process default); one contract test suite
// runs against both.
package pending

import (
	"context"
	"time"
)

// Outcome is how an Ask ended. The vocabulary is closed; every outcome but the
// two approvals means the tool call does not run.
type Outcome string

const (
	Approved        Outcome = "approved"         // a permitted person approved this one call
	ApprovedSession Outcome = "approved_session" // approved, and a session grant is to be recorded
	Denied          Outcome = "denied"           // a permitted person denied it (optional reason)
	Expired         Outcome = "expired"          // nobody decided before the deadline
	Cancelled       Outcome = "cancelled"        // the run stopped or its context ended while waiting
	Unavailable     Outcome = "unavailable"      // no channel could carry the Ask, or the store failed
)

// Outcomes lists the closed vocabulary in a stable order (for metrics and docs).
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

// Status is the state of an Ask record: StatusPending, or the Outcome it ended with.
type Status string

// StatusPending is the only non-terminal status.
const StatusPending Status = "pending"

// Request is what a caller asks about. The store adds the id, timestamps and
// decision to make an Ask.
type Request struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Label     string `json:"label,omitempty"`      // agent / run label shown to approvers
	StartedBy string `json:"started_by,omitempty"` // who started the run (Slack user id or a name)

	Tool    string `json:"tool"`
	Args    string `json:"args"`    // the exact arguments (JSON) the tool would run with
	Summary string `json:"summary"` // a short human summary (for bash: the command)
	// Call describes what the call does, as its tool prepared it (see
	// Describe for requests without one).
	Call Call `json:"call,omitzero"`
	// Path is, for file tools, the path the policy judged: absolute, with
	// symlinks resolved. A session grant is scoped to it (not to Args'
	// path as the model wrote it), so the identical later call, which the
	// policy sees in the same form, is covered. Empty for other tools.
	Path string `json:"path,omitempty"`

	Reason string `json:"reason,omitempty"` // why the policy asked
	Rule   string `json:"rule,omitempty"`   // the rule that matched, if any
	// Approvals is how many distinct people must approve (the rule's
	// approvals: N); 0 and 1 both mean one. See Ballot.
	Approvals int `json:"approvals,omitempty"`

	Workspace string `json:"workspace,omitempty"`
	Cwd       string `json:"cwd,omitempty"`

	// Where the Ask should be posted when the run came from a Slack thread;
	// empty means the configured approval channel.
	ReplyChannel  string `json:"reply_channel,omitempty"`
	ReplyThreadTS string `json:"reply_thread_ts,omitempty"`

	// SessionName is the session as a person knows it ("this Claude Code
	// session in ~/src/api", "bot ask session 'nightly'"), SessionStarted
	// when askops first saw it (zero: unknown), and OneOff says SessionID
	// is the Ask's own (a bot ask without -session): no later call can
	// share it, so "Approve for session" is not offered. The request's
	// builder sets them; the Ask keeps the name and start in Shown.
	SessionName    string    `json:"-"`
	SessionStarted time.Time `json:"-"`
	OneOff         bool      `json:"-"`
	// Hidden are what the caller's redaction hid in the call as it came
	// (redact.Hidden), when what is recorded is not that text: the
	// gateway records a command re-printed for judging, whose layout
	// (indentation gone, a redirection moved) can hide from the rules
	// what makes a word a secret. Every stored and shown text hides them
	// wherever it quotes them. One a line (none holds a line break; a
	// string keeps Request comparable). Never stored.
	Hidden string `json:"-"`

	// AskID is the id the Ask is to be stored under when its front door
	// assigns ids of its own (an AAP request's UUID: recordid.NewUUID),
	// unguessable like every id; empty: a fresh recordid.New(). Unleased
	// says the Ask lives until its deadline whoever polls it (an AAP
	// request: the protocol lets an adapter poll at leisure or not at
	// all), so Hold starts no lease on it. Keep is how long the record
	// outlives its deadline when that is longer than the store's
	// retention (AAP keeps requests 168 h after their decision). None is
	// stored: they shape the Create only.
	AskID    string        `json:"-"`
	Unleased bool          `json:"-"`
	Keep     time.Duration `json:"-"`

	// Shown is what an approver is shown that was worked out once, when
	// the Ask was made (approval.Core.Launch): nil on an Ask recorded by a
	// release before it, which the surfaces work out as they show it.
	Shown *Shown `json:"shown,omitempty"`
}

// Shown is the part of what an approver is shown of an Ask that is
// worked out when it is made, from the verdict, and stored with it, so
// that no surface parses the command again and every surface offers the
// same. It is kept compact (the Ask's whole record has a budget): the
// programs are cut with marks and counted. Nothing changes it once the
// Ask is stored.
type Shown struct {
	// Programs is every program the command runs, from the reading the
	// policy judged (policy.Verdict.Reading; what redaction hides,
	// hidden), each cut to 80 characters ending in "…", at most 40;
	// MorePrograms counts the rest.
	Programs     []string `json:"r,omitempty"`
	MorePrograms int      `json:"rm,omitempty"`
	// Scope is what "Approve for session" grants (grants.Scope's text);
	// "" means it is not offered. GrantLives are the time-boxed choices
	// offered beside it (approvals.grant_durations), in seconds.
	Scope      string  `json:"g,omitempty"`
	GrantLives []int64 `json:"gl,omitempty"`
	// Session is the session as a person knows it (Request.SessionName),
	// Started when it started (Request.SessionStarted) in unix seconds, 0
	// when unknown: each surface words the time for its reader (Slack in
	// the reader's own zone), so it is kept as a number, not as text.
	Session string `json:"n,omitempty"`
	Started int64  `json:"nt,omitempty"`
	// Effects are what the call does, one short line per class
	// (askview.Prepare words them from the reading the policy judged),
	// shown first on every surface.
	Effects []Effect `json:"e,omitempty"`
}

// Effect is one line of what a call does: its Kind ("runs", "writes",
// "deletes", "network", "privilege", "unknown", "secrets") and the line
// in plain words ("Deletes build, .git/hooks (inside .git)").
type Effect struct {
	Kind string `json:"k"`
	Text string `json:"t"`
}

// OffersSession reports whether "Approve for session" is offered on a,
// and known whether a says (an Ask recorded before Shown does not).
func (a Ask) OffersSession() (offered, known bool) {
	if a.Shown == nil {
		return false, false
	}
	return a.Shown.Scope != "", true
}

// Ask is a stored Request with its identity, deadline and state.
type Ask struct {
	Request
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Deadline  time.Time `json:"deadline"`

	Status         Status    `json:"status"`
	DecidedBy      string    `json:"decided_by,omitempty"`
	DecidedAt      time.Time `json:"decided_at,omitzero"`
	DecisionReason string    `json:"decision_reason,omitempty"`

	// Votes are who approved so far an Ask that needs more than one
	// approval (Request.Approvals); the last approval is among them once
	// it decided the Ask.
	Votes Votes `json:"votes,omitempty"`
	// people is who each vote was, as a person (votes.go): one line per
	// vote, "by\tperson", person empty where nobody can say.
	people string
	// GrantTTL is, for ApprovedSession, the life the approver chose for
	// the grant; 0 means the session's.
	GrantTTL time.Duration `json:"grant_ttl,omitempty"`

	// Where the Ask's message was posted, once it was (any replica can update it).
	Channel   string `json:"channel,omitempty"`
	MessageTS string `json:"message_ts,omitempty"`
	// Copies are the other messages showing the Ask (direct messages to
	// escalation targets); Followups the reminders and escalations carried
	// out while it was pending (schedule.go).
	Copies    MessageCopies `json:"copies,omitempty"`
	Followups FollowupLog   `json:"followups,omitempty"`
	// Directs are the direct messages an escalation reserved for its
	// targets before posting them, and Reached who the escalation levels
	// begun so far reach (directs.go).
	Directs DirectCopies `json:"directs,omitempty"`
	Reached string       `json:"reached,omitempty"`
}

// Outcome returns the Ask's outcome and whether it has one yet.
func (a Ask) Outcome() (Outcome, bool) {
	if a.Status == StatusPending || a.Status == "" {
		return "", false
	}
	return Outcome(a.Status), true
}

// Filter selects Asks for ListPending; empty fields match everything.
type Filter struct {
	SessionID string
	RunID     string
}

// EventKind names an audit event.
type EventKind string

const (
	EventAsked   EventKind = "asked"
	EventDecided EventKind = "decided"
	EventVoted   EventKind = "voted"   // a person's vote on an Ask that needs several (see Ballot)
	EventRefused EventKind = "refused" // a person's decision was refused (e.g. self-approval; appended with AppendEvent)
)

// Event is one entry of the audit trail. Every Ask has exactly one EventAsked
// and, once it ends, exactly one EventDecided; other kinds (votes,
// reminders, escalations, refusals) come in between. Every event is a link
// of a hash chain (see auditchain.go).
type Event struct {
	Kind    EventKind `json:"kind"`
	AskID   string    `json:"ask_id"`
	RunID   string    `json:"run_id,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Outcome Outcome   `json:"outcome,omitempty"`
	By      string    `json:"by,omitempty"`     // asked: who started the run; decided: who decided
	Reason  string    `json:"reason,omitempty"` // asked: the policy's reason; decided: the decision's
	// Detail is what the event is about in words: for EventAsked the
	// call's summary (cut to 80 bytes), for other kinds what they need
	// (e.g. whom an escalation went to).
	Detail string    `json:"detail,omitempty"`
	At     time.Time `json:"at"`

	// Set by the store when the event is appended.
	ID   string `json:"id,omitempty"`   // where it is stored (Redis: the stream entry id)
	Seq  int64  `json:"seq,omitempty"`  // its place in the chain: 1, 2, 3…
	Prev string `json:"prev,omitempty"` // EventDigest of the event before it ("" for the first)
	// Cap is the stream's cap (MAXLEN) when it was appended, which verify
	// needs to tell a trim from a deletion; 0 for events from a release
	// before it was recorded.
	Cap int64 `json:"cap,omitempty"`
}

// Store holds Asks. Both implementations (Redis and memory) obey one contract,
// checked by the contract test suite.
type Store interface {
	// Create records a new pending Ask whose deadline is now+ttl and returns it.
	// ttl <= 0 is refused (CodeInvalid) and nothing is written.
	Create(ctx context.Context, req Request, ttl time.Duration) (Ask, error)

	// Get returns the Ask as it now stands (CodeNotFound if unknown).
	Get(ctx context.Context, id string) (Ask, error)

	// Decide ends a pending Ask with outcome, atomically: the first decision
	// wins. The winner gets the updated Ask and a nil error. A loser gets a
	// *Error with CodeConflict whose Ask field holds the record as the winner
	// left it (so the caller can say who decided first); an unknown id gives
	// CodeNotFound; an outcome outside the vocabulary or an empty id gives
	// CodeInvalid and nothing is written.
	//
	// A person's outcome (Approved, ApprovedSession, Denied) is a Ballot:
	// Decide(ctx, id, o, by, reason) is Cast(ctx, id, Ballot{o, by, reason, 0}),
	// so on an Ask that needs several approvals a first approval is counted
	// and the Ask comes back still pending (see Cast).
	Decide(ctx context.Context, id string, outcome Outcome, by, reason string) (Ask, error)

	// Cast records one person's decision on Ask id (see Ballot and
	// votes.go for the quorum rules). The result is as Decide's, plus: an
	// approval that does not yet complete the quorum returns the Ask still
	// pending with a nil error; a second approval by the same person is a
	// CodeConflict whose Ask is still pending (RepeatVote); "for session"
	// on an Ask that needs several approvals is CodeInvalid.
	Cast(ctx context.Context, id string, b Ballot) (Ask, error)

	// AppendEvent appends e to the audit chain without changing any Ask
	// (see AuditLog): e.g. a decision that was refused (self-approval, a
	// repeated vote).
	AppendEvent(ctx context.Context, e Event) (Event, error)

	// Wait blocks until the Ask ends and returns it in its terminal state.
	// At the deadline it records Expired itself (compare-and-set, so a click
	// racing the deadline has exactly one result); when ctx ends it records
	// Cancelled. If the store fails, it returns the Ask with Status
	// Unavailable and the error, never hanging past the deadline. The returned
	// Ask's Status is always terminal, even when err != nil.
	Wait(ctx context.Context, id string) (Ask, error)

	// WaitFor is Wait for an Ask its caller holds as pending (it created
	// it): the store takes a as its first read, so an outage from the
	// start is waited through to a's deadline as one after the first read
	// is. (Wait, knowing nothing of the Ask, must end Unavailable when its
	// first read keeps failing; the Ask then stays pending in the store,
	// and a click once the store is back would "approve" a call its
	// waiter had already refused.)
	WaitFor(ctx context.Context, a Ask) (Ask, error)

	// SetMessage saves where the Ask's message was posted.
	SetMessage(ctx context.Context, id, channel, ts string) error

	// SaveMessage is SetMessage for the poster: it also reports whether
	// the Ask had already ended, so its decider may not have known of the
	// message (see message.go).
	SaveMessage(ctx context.Context, id, channel, ts string) (ended bool, err error)

	// ListPending returns the still-pending Asks matching f, oldest first.
	ListPending(ctx context.Context, f Filter) ([]Ask, error)

	// Sweep marks Expired every pending Ask whose deadline is at or before now
	// and returns those this call expired. Concurrent sweepers (even in other
	// processes) expire each Ask exactly once between them.
	Sweep(ctx context.Context, now time.Time) ([]Ask, error)

	// Audit returns the audit trail, oldest first, at most limit events
	// (limit <= 0 means all that are retained).
	Audit(ctx context.Context, limit int) ([]Event, error)

	// AuditLatest returns the newest events of kind ("" for all), newest
	// first, at most n, reading from the trail's end (auditlatest.go).
	AuditLatest(ctx context.Context, kind EventKind, n int) ([]Event, error)

	// Hold says the Ask's asker is waiting for it, until release is
	// called (any number of times): while anybody holds it, this process
	// renews its lease; LeaseTTL after the last release (or after the
	// holding process died), SweepLeases ends it (see lease.go). An Ask
	// nobody ever held has no lease and lives until its deadline.
	Hold(ctx context.Context, id string) (release func())

	// SweepLeases marks Cancelled, with ReasonAskerGone, every pending Ask
	// whose lease lapsed, and returns those this call ended. Concurrent
	// sweepers end each Ask once between them.
	SweepLeases(ctx context.Context) ([]Ask, error)

	// Close stops the store's background work (listener, timers).
	Close() error
}
