package chatops

import (
	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/policy"
)

// TerminalRun is `bot run`'s run: one invocation is one session (its id is
// the run's), started by user@host ("unknown user" when $USER is empty),
// named label or "bot run on HOST". mode "" is the configured default; cwd
// "" is the workspace.
func TerminalRun(task, label, user, host string, mode policy.Mode, cwd string) agent.RunSpec {
	if user == "" {
		user = "unknown user"
	}
	if label == "" {
		label = "bot run on " + host
	}
	id := recordid.NewRun()
	return agent.RunSpec{ID: id, SessionID: id, StartedBy: user + "@" + host, Label: label, Task: task, Mode: mode, Cwd: cwd}
}
