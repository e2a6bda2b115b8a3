// Package askview is what a person is shown of an Ask before deciding,
// computed in one place so that every surface (the Slack message and its
// modals, the web console) shows the same thing: Of gives an Ask's View
// (the call as a command with the programs it runs, a write, an edit's
// diff or the arguments; the characters that may not be what they look
// like; what was cut; the quorum's count; the deadline; the session; the
// reminder and escalations already tried), and Prepare works out, once,
// when the Ask is made, the part of it that is stored with the Ask
// (pending.Shown) so that no surface parses the command again. The
// surfaces only word and format a View.
package askview
