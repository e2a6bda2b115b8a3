package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/durationtext"
	"github.com/askops/askops/pending"
)

// The API's side of deciding: POST /v1/asks/{id}/decision is parsed in
// API.decide, judged by the process's one approval.Decider (the rules a Slack click and the
// console's form meet too: a token never decides an Ask it made, quorum
// and repeat votes, the grant's life, the refusal audit, the Ask's
// messages brought in step) and its Result worded here.

// tokenVote is tok's vote: a token decides as its name and counts toward
// a quorum as the Slack user api.tokens[].slack_user names (the store's
// People); it made the Asks whose run it started.
func tokenVote(id string, outcome pending.Outcome, reason string, tok Token) approval.Vote {
	return approval.Vote{Ask: id, Outcome: outcome, Reason: reason, Voter: approval.Voter{By: tok.Name, Token: true}}
}

// withLife reads a decision's grant_ttl into v: "" is the session's life;
// else a Go duration (only parsed with approve_session: the Decider
// refuses a duration with any other decision first).
func withLife(v *approval.Vote, text string) error {
	if text == "" {
		return nil
	}
	v.LifeChosen = true
	if v.Outcome != pending.ApprovedSession {
		return nil
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return badRequest("grant_ttl: want a Go duration such as 15m, got %q", text)
	}
	v.Life = d
	return nil
}

// decided answers a decision with res in the API's words.
func (api *API) decided(r *http.Request, res approval.Result, grantTTL string) (int, any, error) {
	a := res.Ask
	switch res.Kind {
	case approval.Decided, approval.Counted:
		api.log.Info("ask decided through the API", "ask", a.ID, "outcome", a.Status, "by", a.DecidedBy)
		return http.StatusOK, api.show(r.Context(), a), nil
	case approval.AlreadyDecided:
		if !res.Known {
			return 0, nil, res.Err
		}
		return 0, nil, &apiError{status: http.StatusConflict, msg: "already decided", ask: &a}
	case approval.RepeatVote:
		return 0, nil, &apiError{status: http.StatusConflict, msg: "you have already approved; it needs " + a.Tally() + " from distinct people", ask: &a}
	case approval.SelfApproved:
		// Whatever approvals.self_approval says: a token is the agent's
		// own credential, and an agent approving itself is no approval.
		return 0, nil, &apiError{status: http.StatusForbidden, msg: "a token may not decide an ask it made"}
	case approval.NotOffered:
		if res.NoSession {
			return 0, nil, &apiError{status: http.StatusConflict, msg: "this ask offers no approval for the session (approve it once instead)", ask: &a}
		}
		return 0, nil, badRequest("decision: approve_session is not offered on this ask (it needs %d approvals from different people)", a.Needed())
	case approval.BadLife:
		switch {
		case res.LifeWithout:
			return 0, nil, badRequest("grant_ttl: only with decision approve_session")
		case len(res.Offered) == 0:
			return 0, nil, badRequest("grant_ttl: no grant durations are configured (approvals.grant_durations); leave it out for the session's")
		}
		offered := make([]string, len(res.Offered))
		for i, g := range res.Offered {
			offered[i] = durationtext.Short(g)
		}
		return 0, nil, badRequest("grant_ttl: %s is not one of approvals.grant_durations (%s)", grantTTL, strings.Join(offered, ", "))
	case approval.Unknown, approval.Invalid, approval.NotDurable, approval.Unavailable:
		return 0, nil, res.Err // writeErr words the store's codes
	}
	return 0, nil, fmt.Errorf("decision on ask %s: unexpected result %q: %w", a.ID, res.Kind, res.Err)
}
