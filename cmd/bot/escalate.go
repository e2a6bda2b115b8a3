package main

import (
	"context"
	"fmt"

	"github.com/askops/askops/config"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// newEscalation builds the follow-ups of approvals.remind_after and
// approvals.escalate over the app's store and Slack client; nil when
// neither is set.
func newEscalation(cfg config.Config, a *app) (*slackui.Escalation, error) {
	steps, ok := a.Asks.(slackui.StepStore)
	if !ok {
		return nil, fmt.Errorf("the ask store %T keeps no follow-up schedule", a.Asks)
	}
	c := cfg.Approvals
	ec := slackui.EscalationConfig{
		RemindAfter:   c.RemindAfter.D(),
		ApproverUsers: c.Approvers.Users, ApproverGroups: c.Approvers.Usergroups,
		Steps: steps, Groups: a.slack, DM: a.slack, History: a.slack, Names: a.slack,
		Every:  c.FollowupEvery(),
		Lease:  c.FollowupLease.D(),
		Logger: a.log.With("component", "followups"),
	}
	for _, l := range c.Escalate {
		ec.Levels = append(ec.Levels, slackui.EscalationLevel{After: l.After.D(), Users: l.Users, Groups: l.Usergroups, DM: l.DM})
	}
	return slackui.NewEscalation(ec)
}

// startFollowups carries out due reminders and escalations in the
// background until Close (once; nothing without follow-ups).
func (a *app) startFollowups() {
	if a.escalation == nil {
		return
	}
	a.loops.start("followups", func(ctx context.Context) error { return a.escalation.Run(ctx, a.notifier) })
}

// scheduler is the notifier's Followups: nil (no interface holding a nil
// pointer) without follow-ups.
func (a *app) scheduler() interface {
	Schedule(ctx context.Context, a pending.Ask) error
} {
	if a.escalation == nil {
		return nil
	}
	return a.escalation
}

// escalated is the interactions' Escalated, nil without follow-ups.
func (a *app) escalated() slackui.EscalatedAuthority {
	if a.escalation == nil {
		return nil
	}
	return a.escalation
}
