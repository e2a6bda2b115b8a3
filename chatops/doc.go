// Package chatops is askops' conversation surface in Slack: the /askops
// slash command (run, stop, pending, grants, mode), the @-mention that
// starts a run in a thread, the run's status message, and the rules for
// who may do which (approvers, run starters, the channel a command is typed
// in). It takes Slack's requests already verified and parsed (slackui's
// transports do that), posts through slackui's paced, retrying poster, and
// owns every goroutine it starts: Shutdown waits for them.
package chatops
