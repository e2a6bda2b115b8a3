package main

import (
	"log/slog"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/config"
	"github.com/askops/askops/pending"
)

// newDecider is the process's one deciding half, from approvals.*: Slack's
// clicks, the console's form and the API's decisions are all judged by it,
// so no surface can decide by rules of its own wiring. only names the one
// approver there is (the self-approval rule's exception), if any; messages
// are brought in step after a decision. The caller closes it before the
// stores (it waits for its message updates).
func newDecider(cfg config.Config, asks approval.DecideStore, only func(by string) bool, messages []approval.MessageUpdater, log *slog.Logger) *approval.Decider {
	scope := approval.ScopeText(approval.DefaultScopeFor) // what the messages' "for session" states
	return approval.NewDecider(approval.DeciderConfig{
		Asks:           asks,
		SelfApproval:   approval.SelfApproval{Allowed: cfg.Approvals.SelfApproval},
		OnlyApprover:   only,
		GrantDurations: cfg.Approvals.Durations(),
		SessionOffered: func(a pending.Ask) bool { return scope(a) != "" },
		Messages:       messages,
		Logger:         log.With("component", "decider"),
	})
}
