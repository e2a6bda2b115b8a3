package console

import (
	"fmt"
	"net/http"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/pending"
)

// The console's side of deciding: its form is parsed in serveDecide, the
// rules (self-approval, quorum, repeat votes, "already decided by …",
// grant durations, the refusal audit, other channels' messages brought in
// step) are the process's one approval.Decider's (Config.Decider), and
// worded here in the console's own text.

// vote is the signed-in user's vote: they decide as "console:" + name,
// count toward a quorum as the Slack user console.slack_user names (the
// store's People), and started a run their console user started on any
// host (quorum.go).
func (c *Console) vote(id string, outcome pending.Outcome, reason string, s *session) approval.Vote {
	return approval.Vote{Ask: id, Outcome: outcome, Reason: reason, Voter: c.voter(s.name)}
}

// voter is the console user name as a voter.
func (c *Console) voter(name string) approval.Voter {
	return approval.Voter{
		By: DeciderPrefix + name,
		Started: func(by string) bool {
			return startedBy(pending.Ask{Request: pending.Request{StartedBy: by}}, c.cfg.User)
		},
	}
}

// worded answers the form with res in the console's words.
func (c *Console) worded(w http.ResponseWriter, r *http.Request, s *session, id string, res approval.Result) {
	a := res.Ask
	switch res.Kind {
	case approval.Decided:
		c.log.Info("ask decided", "ask", a.ID, "outcome", a.Status, "by", a.DecidedBy)
		c.cfg.Live.wake()
		http.Redirect(w, r, "/", http.StatusSeeOther)
	case approval.Counted: // a quorum vote, counted
		c.cfg.Live.wake()
		c.flash(w, r, s, http.StatusOK, voteCounted(res.Before, a))
	case approval.AlreadyDecided:
		if !res.Known {
			c.flash(w, r, s, http.StatusConflict, "This request was already decided; your click changed nothing.")
			return
		}
		if res.Err != nil { // the vote lost the race: the pages show the winner
			c.cfg.Live.wake()
		}
		c.flash(w, r, s, http.StatusConflict, alreadyDecided(a))
	case approval.RepeatVote:
		c.flash(w, r, s, http.StatusConflict, repeatVote(a))
	case approval.SelfApproved:
		c.flash(w, r, s, http.StatusForbidden, "You started this run ("+a.StartedBy+"), so you may not approve its requests (approvals.self_approval is off): another approver must. You may still deny it.")
	case approval.NotOffered:
		if res.NoSession {
			c.flash(w, r, s, http.StatusBadRequest, "This request offers no approval for the session (it has no session, or no scope can be stated); nothing changed.")
			return
		}
		c.flash(w, r, s, http.StatusBadRequest, fmt.Sprintf("This request needs %d approvals from different people, so approval for the session is not offered; nothing changed.", a.Needed()))
	case approval.BadLife:
		if res.LifeWithout {
			c.flash(w, r, s, http.StatusBadRequest, "A grant duration goes only with an approval for the session; nothing changed.")
			return
		}
		c.flash(w, r, s, http.StatusBadRequest, "That grant duration is not offered (approvals.grant_durations); nothing changed.")
	case approval.Unknown:
		c.flash(w, r, s, http.StatusNotFound, "askops no longer knows this request (it ended long ago or never existed); nothing will run because of it.")
	case approval.Invalid:
		c.flash(w, r, s, http.StatusBadRequest, "This form does not name a valid request; nothing changed.")
	case approval.NotDurable:
		c.log.Warn("console: decision recorded, not yet durable", "ask", id, "err", res.Err)
		c.flash(w, r, s, http.StatusAccepted, pending.NotDurableNotice)
	case approval.Unavailable:
		if res.Unsure {
			// The write may have reached the store before it failed (a
			// reply that came too late, a connection lost after sending):
			// "nothing changed" could be false, and the card says which.
			c.log.Warn("console: decision may have been recorded", "ask", id, "err", res.Err)
			c.flash(w, r, s, http.StatusServiceUnavailable, "askops could not confirm your decision: it may or may not have been recorded. This page shows where the request stands once the store answers; decide again only if it is still waiting.")
			return
		}
		c.log.Warn("console: decision not recorded", "ask", id, "kind", res.Kind, "err", res.Err)
		c.flash(w, r, s, http.StatusServiceUnavailable, "askops could not record your decision right now; nothing changed. Please try again in a moment.")
	default: // NotAuthorized and NotBound have no console form
		c.log.Warn("console: decision not recorded", "ask", id, "kind", res.Kind, "err", res.Err)
		c.flash(w, r, s, http.StatusServiceUnavailable, "askops could not record your decision right now; nothing changed. Please try again in a moment.")
	}
}
