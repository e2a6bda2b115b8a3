// Package askview is what a person is shown of an Ask before deciding,
// computed in one place so that every surface (the Slack message and its
// modals, the web console) shows the same thing: here, the characters of
// the call that may not be what they look like. The surfaces only word
// and format it.
package askview
