// Package e2e drives the built bot binary end to end: it builds cmd/bot once,
// starts `bot serve` replicas in http mode as separate processes on loopback
// ports, all sharing one real redis-server, the fake Slack
// (internal/fakeslack) and the fake model (internal/fakeopenai), and shows
// the round trip a team relies on — a run started on one replica is decided
// by a click delivered to another, denials reach the model, Asks expire,
// a replica killed with SIGKILL leaves its Ask to another replica's sweep,
// SIGTERM cancels a replica's Asks, forged and unauthorised clicks change
// nothing, a Redis outage fails closed, chat-ops sent to one replica
// (/askops pending, stop, mode, grants and Revoke) act on a run living on
// the other, and `bot ask`, `bot run`, `bot check-config` and `bot version`
// keep their exit codes.
//
// Every process's output goes to files shown when its test fails; a test
// fails too if a bot printed the fake Slack's secrets or, when the tests run
// with -race (and so the bot is built with it), reported a data race.
//
// The package holds only tests; it is the acceptance test of issue 5 run in
// CI with `go test -race ./e2e/`.
package e2e
