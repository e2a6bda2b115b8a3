package slackui

import (
	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// callKind is how a tool call is shown.
type callKind int

const (
	callCommand callKind = iota // a shell command, in a code block
	callWrite                   // a file write: the path and the new content
	callEdit                    // a file edit: the path and a -/+ diff
	callOther                   // anything else: the arguments as JSON
)

// callView is the redacted, display-ready form of an Ask's call. Every string
// in it has been through Redact; none has been escaped yet.
type callView struct {
	kind    callKind
	tool    string
	command string // callCommand
	path    string // callWrite, callEdit
	body    string // callWrite: content; callEdit: diff; callOther: JSON
	lines   int    // callWrite: lines of content
	cwd     string // callCommand: the cwd argument, when it differs from the Ask's
	dropped int    // runes left out before redaction (viewCall's limit)

	// callEdit, for when the diff is too long to show: its removed and
	// added lines apart, so both sides can be previewed.
	removed, added string

	// programs (callCommand) is every program the command runs, from the
	// policy's own parse of the whole command (names redacted): shown
	// above the code, so a long or padded command cannot hide its tail.
	programs     []string
	morePrograms int // programs the Ask's record left out
	// lookAlikes are characters in the whole call that may not be what
	// they look like.
	lookAlikes []askview.LookAlike
	// lines is how many lines the whole of fullText has, before any cut.
	lines0 int

	view askview.View // the whole of what the approver is shown
}

// viewCall is a's view (askview.Of, whose limit is limit: see there) in
// the form the renderer reads.
func viewCall(a pending.Ask, limit int) callView {
	av := askview.Of(a, limit)
	v := callView{
		tool: av.Tool, command: av.Command, path: av.Path, cwd: av.Cwd,
		lines: av.ContentLines, dropped: av.Cut, removed: av.Removed, added: av.Added,
		programs: av.Programs, morePrograms: av.MorePrograms, lookAlikes: av.LookAlikes, lines0: av.Lines,
		view: av,
	}
	switch av.Kind {
	case askview.Command:
		v.kind = callCommand
	case askview.Write:
		v.kind, v.body = callWrite, av.Content
	case askview.Edit:
		v.kind, v.body = callEdit, av.Diff
	default:
		v.kind, v.body = callOther, av.Arguments
	}
	return v
}

// fullText is everything the "Show full" modal pages through.
func (v callView) fullText() string {
	if v.kind == callCommand {
		return v.command
	}
	return v.body
}
