package slackui

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
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
	programs []string
	// lookAlikes are characters in the whole call that may not be what
	// they look like.
	lookAlikes []askview.LookAlike
	// lines is how many lines the whole of fullText has, before any cut.
	lines0 int
}

// viewCall reads a's call from its description (pending.Request.Describe).
// The exact call is what will run, so it is shown rather than the agent's
// Summary; the Summary stands in only when a call that describes nothing
// has arguments that cannot be read.
//
// limit > 0 bounds, in runes, how much of a command, file content or
// argument string is redacted and kept (rendering a message shows far less;
// redacting 100 KB to show 3 KB would be waste). The cut is safe: any secret
// that starts in what is shown ends long before limit, and the multi-line
// rule (PEM) also matches a block cut short. An edit is always read whole:
// its diff needs both sides.
func viewCall(a pending.Ask, limit int) callView {
	v := callView{tool: a.Tool, lookAlikes: askview.Call(a)}
	head := func(s string) string {
		if limit <= 0 {
			return redact.Secrets(s)
		}
		n := utf8.RuneCountInString(s)
		if n <= limit {
			return redact.Secrets(s)
		}
		v.dropped += n - limit
		return redact.Secrets(s[:byteOffset(s, limit)])
	}
	switch c := a.Describe(); c.Kind {
	case pending.CallCommand:
		v.kind = callCommand
		v.command = head(c.Command)
		v.lines0 = strings.Count(c.Command, "\n") + 1
		// Programs quote pieces of the command, which redacted alone lose
		// what says they are secrets (a key's lines parse as programs):
		// they are read from the redacted command, whose code is the same.
		v.programs = policy.Programs(redact.Secrets(c.Command))
		if c.Cwd != "" && c.Cwd != a.Cwd {
			// Where it runs is part of what is approved.
			v.cwd = redactHead(c.Cwd, 300)
		}
		return v
	case pending.CallWrite:
		v.kind = callWrite
		v.path = redactHead(c.Path, 600)
		v.body = head(c.Content)
		v.lines0 = strings.Count(c.Content, "\n") + 1
		v.lines = strings.Count(c.Content, "\n")
		if c.Content != "" && !strings.HasSuffix(c.Content, "\n") {
			v.lines++
		}
		return v
	case pending.CallEdit:
		v.kind = callEdit
		v.path = redactHead(c.Path, 600)
		newText := redact.Secrets(c.New)
		v.body = lineDiff(redact.Secrets(c.Old), newText)
		v.lines0 = strings.Count(v.body, "\n") + 1
		for _, l := range strings.Split(v.body, "\n") {
			switch {
			case strings.HasPrefix(l, "- "):
				v.removed += l + "\n"
			case strings.HasPrefix(l, "+ "):
				v.added += l + "\n"
			}
		}
		return v
	}
	// A call that describes nothing is shown as its arguments.
	v.kind = callOther
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(a.Args))
	dec.UseNumber()
	if a.Args == "" || dec.Decode(&args) != nil || args == nil {
		v.body = head(a.Args)
		if strings.TrimSpace(v.body) == "" {
			v.dropped = 0
			v.body = head(a.Summary)
		}
		v.lines0 = strings.Count(v.body, "\n") + 1
		return v
	}
	v.body = askview.ArgumentsText(redact.JSONValue(args, head))
	v.lines0 = strings.Count(v.body, "\n") + 1
	return v
}

// fullText is everything the "Show full" modal pages through.
func (v callView) fullText() string {
	if v.kind == callCommand {
		return v.command
	}
	return v.body
}

// maxDiffCells bounds the LCS table; beyond it the diff falls back to
// trimming the common head and tail, which is still correct, only coarser.
const maxDiffCells = 1 << 20

// diffContext is how many unchanged lines are kept around a change.
const diffContext = 2

// lineDiff shows how old becomes new, line by line: "- " removed, "+ "
// added, "  " unchanged context (at most diffContext lines around a change;
// longer unchanged runs collapse to "  …").
func lineDiff(oldS, newS string) string {
	a := splitLines(oldS)
	b := splitLines(newS)
	type op struct {
		kind byte // ' ', '-', '+'
		line string
	}
	var ops []op
	// Common head and tail first: cheap, and keeps the LCS table small.
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	for _, l := range a[:head] {
		ops = append(ops, op{' ', l})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if (len(ma)+1)*(len(mb)+1) <= maxDiffCells {
		// lcs[i][j] = LCS length of ma[i:], mb[j:]
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i]})
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', ma[i]})
				i++
			default:
				ops = append(ops, op{'+', mb[j]})
				j++
			}
		}
	} else {
		for _, l := range ma {
			ops = append(ops, op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, op{'+', l})
		}
	}
	for _, l := range a[len(a)-tail:] {
		ops = append(ops, op{' ', l})
	}

	// Keep context lines near a change only.
	near := make([]bool, len(ops))
	for i, o := range ops {
		if o.kind == ' ' {
			continue
		}
		for k := max(0, i-diffContext); k <= min(len(ops)-1, i+diffContext); k++ {
			near[k] = true
		}
	}
	var out strings.Builder
	skipped := false
	for i, o := range ops {
		if o.kind == ' ' && !near[i] {
			if !skipped {
				out.WriteString("  …\n")
				skipped = true
			}
			continue
		}
		skipped = false
		out.WriteByte(o.kind)
		out.WriteByte(' ')
		out.WriteString(o.line)
		out.WriteByte('\n')
	}
	return strings.TrimRight(out.String(), "\n")
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
