package slackui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Who is "one of us" in Slack, and why askops asks before anything else.
//
// A Slack Connect channel is shared with other organisations: their
// members see askops' messages and its buttons, and a click of theirs
// reaches askops signed by Slack like any other. Every check askops makes
// of a clicker names them by user id alone (approvers, user groups,
// escalation targets, the run starters), and approvals.anyone_in_channel
// asks nothing at all, so before this gate a partner organisation's member
// could decide an Ask in a shared channel. The gate is closed-world: a
// person counts only when Slack says they belong to the workspace askops
// is installed in, whatever role they would then have.
//
// What Slack says, and where (verified against Slack's interaction
// payload reference and slack-go v0.35.0's decoding):
//
//   - block_actions and view_submission: user.team_id
//     (InteractionCallback.User.TeamID) is the clicker's home team; the
//     payload's team object (InteractionCallback.Team) is, in Slack's
//     words, the workspace the interaction originated from: where, not
//     who, so it is not used. In Enterprise Grid Slack reports an
//     organisation-level user's user.team_id as the organisation's id
//     (E…) rather than a workspace (T…); the payload's enterprise object
//     is again where the click happened, not who clicked.
//   - slash commands carry no user team: team_id (and enterprise_id) is,
//     in Slack's words, where the user was when they typed it. A command
//     whose team_id is another's is refused; one with askops' own team_id
//     is not proof of an insider (see docs/security.md: a partner given
//     "post, invite and more" in a channel askops' workspace hosts).
//   - app_mention: user_team, the mentioning user's home team, which
//     Slack adds in shared channels (empty elsewhere).
//
// askops' own identity comes from auth.test with its bot token: team_id,
// and enterprise_id in Enterprise Grid. One bot token is one workspace,
// so no configuration is needed or offered.
//
// Enterprise Grid: a user Slack reports with the organisation's own E…
// id is admitted (the same organisation: its admins, its identity
// provider, its org-wide user groups, which approvers may be given as);
// a user reported with another workspace's T… id is refused, even if that
// workspace belongs to the same organisation, since a payload does not
// say which organisation a T… belongs to, and closed-world means what
// cannot be placed does not count. A slash command is the exception the
// other way: it names the organisation of the workspace it was typed in
// (enterprise_id), so one typed in a sibling workspace is admitted.
//
// No one from another team is admitted by name either: the approver,
// run-starter and escalation lists were written to name askops' own
// people, and an id copied into one of them must not become a grant
// across organisations. A partner who must decide gets a (guest) account
// in askops' workspace, whose user.team_id is then askops' own.

// AuthTester is auth.test; *slack.Client satisfies it.
type AuthTester interface {
	AuthTestContext(ctx context.Context) (*slack.AuthTestResponse, error)
}

// Workspace is the Slack workspace (and Enterprise Grid organisation)
// askops belongs to, learnt through auth.test the first time a request
// needs it and kept from then on (a bot token never changes workspace).
type Workspace struct {
	api     AuthTester
	timeout time.Duration

	// mu is held across auth.test, so concurrent clicks while it is not
	// known yet make one call, not one each.
	mu               sync.Mutex
	team, enterprise string
}

// workspaceLookupTimeout bounds the auth.test a click may wait for: well
// inside Slack's 3 s, beside the approver check and the store's vote.
const workspaceLookupTimeout = 1500 * time.Millisecond

// NewWorkspace is the workspace api's bot token was installed in.
func NewWorkspace(api AuthTester) *Workspace {
	return &Workspace{api: api, timeout: workspaceLookupTimeout}
}

// KnownWorkspace is a workspace whose ids are known already (tests, and a
// process that learnt them otherwise); enterprise is "" outside Grid.
func KnownWorkspace(team, enterprise string) *Workspace {
	return &Workspace{team: team, enterprise: enterprise}
}

// Home returns askops' team id and, in Enterprise Grid, its organisation's
// id, asking auth.test until it has answered once.
func (w *Workspace) Home(ctx context.Context) (team, enterprise string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.team != "" {
		return w.team, w.enterprise, nil
	}
	if w.api == nil {
		return "", "", errors.New("slackui: the workspace's team is not known and there is no Slack client to ask")
	}
	lctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	r, err := w.api.AuthTestContext(lctx)
	if err != nil {
		return "", "", fmt.Errorf("slackui: auth.test to learn askops' own workspace: %w", err)
	}
	if r.TeamID == "" {
		// An org-wide Grid install answers with its organisation only;
		// askops' manifest installs per workspace (org_deploy_enabled:
		// false), so nobody is admitted rather than a guessed team.
		return "", "", fmt.Errorf("slackui: auth.test named no team_id (enterprise %q): askops is installed per workspace", r.EnterpriseID)
	}
	w.team, w.enterprise = r.TeamID, r.EnterpriseID
	return w.team, w.enterprise, nil
}

// OutsiderError is a request from a user of another team: Slack reported
// their home team as Team.
type OutsiderError struct {
	User, Team string
}

func (e *OutsiderError) Error() string {
	if e.Team == "" {
		return fmt.Sprintf("user %s: Slack named no home team for them; only askops' own workspace's users count", e.User)
	}
	return fmt.Sprintf("user %s is of team %s, not askops' own workspace", e.User, e.Team)
}

// Admits returns nil when user, whose home team Slack reports as
// userTeam, is of askops' own workspace (or, in Enterprise Grid, reported
// as of its organisation); an *OutsiderError when not, so whatever they
// asked for must change nothing; another error when askops could not
// learn its own workspace (then nobody is admitted: any doubt is a no).
func (w *Workspace) Admits(ctx context.Context, user, userTeam string) error {
	team, enterprise, err := w.Home(ctx)
	if err != nil {
		return err
	}
	if userTeam != "" && (userTeam == team || (enterprise != "" && userTeam == enterprise)) {
		return nil
	}
	return &OutsiderError{User: user, Team: userTeam}
}

// AdmitsCommand is Admits for a slash command, which names only where it
// was typed (team_id, and enterprise_id in Grid): a command from another
// workspace is refused, one from askops' own is let through on the best
// evidence a command carries.
func (w *Workspace) AdmitsCommand(ctx context.Context, cmd slack.SlashCommand) error {
	err := w.Admits(ctx, cmd.UserID, cmd.TeamID)
	if _, out := errors.AsType[*OutsiderError](err); out && cmd.EnterpriseID != "" {
		// Typed in another workspace of askops' own Grid organisation, as
		// Slack signed it: the organisation is the boundary in Grid.
		if _, enterprise, _ := w.Home(ctx); enterprise != "" && enterprise == cmd.EnterpriseID {
			return nil
		}
	}
	return err
}

// OutsiderText is what a user of another team is told when they click,
// type a command or mention askops: nothing they do changes anything.
const OutsiderText = "askops takes decisions and commands only from people of the workspace it is installed in; you are in this channel from another organisation, so nothing changed. Ask someone of that workspace."

// workspaceUncheckedText is what a user is told when askops could not
// learn its own workspace, so could not place theirs.
const workspaceUncheckedText = "askops could not check which workspace you belong to (Slack did not answer), so nothing changed. Please try again in a moment."

// OutsiderShown is what a user whom Admits or AdmitsCommand refused
// (err) is told: of another organisation, or askops could not tell.
func OutsiderShown(err error) string {
	if _, ok := errors.AsType[*OutsiderError](err); ok {
		return OutsiderText
	}
	return workspaceUncheckedText
}
