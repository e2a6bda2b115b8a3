// Package slackui is askops' Slack face: it renders Asks as Block Kit messages
// in every state, takes button clicks (HTTP with signature check, and Socket
// Mode), checks who may approve, and keeps messages in step with the store.
// Its Notifier is Slack's approval.Notifier: the round trip itself (create,
// wait, grant) is package approval's.
package slackui
