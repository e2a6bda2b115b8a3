package pending

import (
	"encoding/json"
	"strings"
)

// CallKind says what a described call does, and so how it is shown.
type CallKind string

const (
	CallCommand CallKind = "command" // a shell command runs
	CallWrite   CallKind = "write"   // a file gets a whole new content
	CallEdit    CallKind = "edit"    // a file has one text replaced by another
)

// Call describes a tool call in the terms an approver reads it: the command
// that runs, or the file and what is written into it. The tool's own
// preparation fills it (the agent's bash and file tools, the gateway's
// mapping of an agent's hook or MCP call, bot ask), so nobody reads Args'
// keys to show a call. The zero Call describes nothing: such a call is
// shown as its arguments.
type Call struct {
	Kind    CallKind `json:"kind,omitempty"`
	Command string   `json:"command,omitempty"` // CallCommand: the command that runs
	Cwd     string   `json:"cwd,omitempty"`     // CallCommand: where, when the call names its own directory
	Path    string   `json:"path,omitempty"`    // CallWrite, CallEdit: the file, as the caller named it
	Content string   `json:"content,omitempty"` // CallWrite: the file's whole new content
	Old     string   `json:"old,omitempty"`     // CallEdit: the text replaced
	New     string   `json:"new,omitempty"`     // CallEdit: its replacement
}

// Describe returns the description of r's call: the one its tool gave, or,
// for a request without one (an Ask recorded before descriptions existed,
// or a caller that gave only arguments), the one read from Args by the
// argument names askops' own tools use. This is the only place that reads
// Args' keys to describe a call. The branch for Asks recorded before
// descriptions existed goes with Remove in v0.2.0; the one for callers
// that give only arguments stays.
func (r Request) Describe() Call {
	if r.Call.Kind != "" {
		return r.Call
	}
	return callFromArgs(r.Args)
}

// callFromArgs reads a description from JSON arguments: {"command"} (with
// at most cwd, a timeout and a description beside it) is a command,
// {"path","content"} a write, {"path","old_string","new_string"} an edit.
// Anything else describes nothing, though the fields found are kept (a
// session grant's scope takes the command or path of any call).
func callFromArgs(args string) Call {
	var m map[string]any
	if args == "" || json.NewDecoder(strings.NewReader(args)).Decode(&m) != nil || m == nil {
		return Call{}
	}
	str := func(k string) (string, bool) { s, ok := m[k].(string); return s, ok }
	c := Call{}
	c.Command, _ = str("command")
	c.Cwd, _ = str("cwd")
	c.Path, _ = str("path")
	c.Content, _ = str("content")
	c.Old, _ = str("old_string")
	c.New, _ = str("new_string")
	if _, ok := str("command"); ok && onlyKeys(m, "command", "cwd", "timeout", "timeout_ms", "description") {
		c.Kind = CallCommand
		return c
	}
	if _, ok := str("path"); !ok {
		return c
	}
	if _, ok := str("content"); ok && onlyKeys(m, "path", "content") {
		c.Kind = CallWrite
		return c
	}
	_, okOld := str("old_string")
	_, okNew := str("new_string")
	if okOld && okNew && onlyKeys(m, "path", "old_string", "new_string", "replace_all") {
		c.Kind = CallEdit
	}
	return c
}

func onlyKeys(m map[string]any, keys ...string) bool {
	for k := range m {
		found := false
		for _, want := range keys {
			found = found || k == want
		}
		if !found {
			return false
		}
	}
	return true
}
