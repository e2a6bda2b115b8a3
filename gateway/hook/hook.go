// Package hook is the client side of askops' gateway, what runs beside an
// agent on its own machine: `bot hook` (Claude Code's and Codex's command
// hooks), `bot mcp` (the MCP permission-prompt tool), `bot ask`'s and
// `bot run`'s way to a serve's Ask API, and the endpoint file a local
// serve announces itself in. It reads the agent's event, resolves the
// call's paths where the files are, takes the call to a Settler (a serve's
// API through Client, or the serve's own Service in this process) and
// answers in the agent's words, within the agent's time, a deny whenever
// anything failed.
//
// It holds no server, no policy and no store (a test checks what it
// links): what the policy would run is handed to it (Run.Judged), and an
// Ask reaches it as the API shows one (Ask).
package hook

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Settler takes a Call to its terminal Ask: the gateway's Service in this
// process, or a Client of a serve's API. It never fails: a failure is an
// Ask that ended unavailable.
type Settler interface {
	Settle(ctx context.Context, c Call) Ask
}

// Call is one tool call an agent asks about, in the agent's own terms.
type Call struct {
	SessionID string
	Agent     string          // e.g. "Claude Code", shown to approvers
	Tool      string          // the agent's tool name: Bash, Write, mcp__github__create_issue, …
	Input     json.RawMessage // the tool's input, a JSON object
	Cwd       string          // the agent's working directory; paths are judged against it
	// Workspace is the session's root as the agent's own process says it
	// where it runs, never as the model chose it: Claude Code's
	// $CLAUDE_PROJECT_DIR, the directory Codex starts its hooks in. Cwd
	// is not that: Codex hands its hooks the command's workdir, which the
	// model picks per call, so a session first seen with workdir /etc
	// would make /etc its workspace. "" when the door has none: the serve
	// then pins the session's root from its first cwd.
	Workspace string
	Reason    string        // why the agent wants it, if it says
	Timeout   time.Duration // how long a human has; 0 or more than the serve's timeout means that timeout
	By        string        // who asks: the local user, or (in a serve) the API token's name
	// Resolved says every path in Input and Cwd was resolved on the
	// machine the files live on (symlinks followed, .. gone: see
	// ResolvePaths) by this process, or by the serve itself for a local
	// token: never on a request's word. Without it askops judges paths as
	// text it cannot check: no rule or grant allows a write, and a Grep's
	// directory is judged unseen (policy.Call.Resolved).
	Resolved bool
	// OneOff says the session is this call's own (a bot ask without
	// -session): no later call can share it, so no session grant is
	// offered.
	OneOff bool
}

// Ask is an Ask as the API shows it (GET /v1/asks/{id}), and as a front
// door answers its agent.
type Ask struct {
	ID        string     `json:"id"`
	Status    string     `json:"status"`
	DecidedBy string     `json:"decided_by"`
	Reason    string     `json:"reason"` // the decision's once it has one, else why the policy asked
	Deadline  *time.Time `json:"deadline"`
	SessionID string     `json:"session_id"`
	Tool      string     `json:"tool"`
	// MessageURL is the Slack message's link, when the serve knows it.
	MessageURL string `json:"message_url"`
	// Approvals and Votes: how many distinct approvals the Ask needs (0:
	// one) and who has approved so far.
	Approvals int      `json:"approvals,omitempty"`
	Votes     []string `json:"votes,omitempty"`
	// Effects are what the call does, one plain line per class, as
	// every surface shows them first: kind is one of runs, writes,
	// deletes, network, privilege, unknown, secrets. Only on an Ask a
	// person is asked about (not on the policy's own answer).
	Effects []Effect `json:"effects,omitempty"`

	// Tally, when the serve worked it out in this process, is where a
	// quorum stood in its words (it counts people the API does not
	// show); else it is read from Approvals and Votes.
	Tally string `json:"-"`
}

// Effect is one line of what a call does.
type Effect struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// The Ask statuses of the API: pending, or the outcome it ended with.
// (They are pending's Status and Outcome values; the gateway's tests hold
// the two alike.)
const (
	statusPending   = "pending"
	approved        = "approved"
	approvedSession = "approved_session"
	denied          = "denied"
	expired         = "expired"
	cancelled       = "cancelled"
	unavailable     = "unavailable"
)

// Ended reports whether the Ask has an outcome.
func (a Ask) Ended() bool { return a.Status != statusPending && a.Status != "" }

// Due is the Ask's deadline; zero when it has none.
func (a Ask) Due() time.Time {
	if a.Deadline == nil {
		return time.Time{}
	}
	return *a.Deadline
}

// Approves reports whether the call may run.
func (a Ask) Approves() bool { return a.Status == approved || a.Status == approvedSession }

// tally says where a quorum stands in plain words, e.g. "1 of 2 approvals
// (U0ANA)"; "" for an Ask that needs one approval.
func (a Ask) tally() string {
	if a.Tally != "" || a.Approvals < 2 {
		return a.Tally
	}
	s := strconv.Itoa(len(a.Votes)) + " of " + strconv.Itoa(a.Approvals) + " approvals"
	if len(a.Votes) > 0 {
		s += " (" + strings.Join(a.Votes, ", ") + ")"
	}
	return s
}

// PolicyDecider is who decided a call the policy settled without a human.
const PolicyDecider = "askops policy"

// The reasons an Ask ends with that a client words itself.
const (
	// ReasonAskerGone: the client stopped waiting (pending.ReasonAskerGone).
	ReasonAskerGone = "the agent stopped waiting"
	// DeadlineReason: nobody decided by the deadline (pending.DeadlineReason).
	DeadlineReason = "nobody decided before the deadline"
)

// refused is the terminal Ask of a call that could not even be asked.
func refused(reason string) Ask {
	return Ask{Status: unavailable, DecidedBy: "askops", Reason: reason}
}
