// Package decidetest holds the test that drives one table of deciding
// rules through every surface a person decides on (a Slack click, the
// console's form, the HTTP API) and checks they agree: the rules are
// approval.Decider's, and each surface only parses and words them.
package decidetest
