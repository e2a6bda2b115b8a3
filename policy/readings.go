package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Constructs bash reads otherwise than the parser, where bash's own printing
// (bash --pretty-print, which the differential test compares with) prints
// the text unchanged, so the parser reads the printing as wrongly as the
// command: only running the command shows the difference. Allow rules never
// cover them; what bash would run is added for deny rules and the approver.

// bashReadings refuses, and records what bash runs in, every such construct
// in f (parsed from src).
func (z *analyzer) bashReadings(f *syntax.File, src string, depth int) {
	braces := &braceIndex{f: f}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			z.namedFD(n, src, braces, depth)
			z.digitTarget(n, src)
			z.heredocEnd(n, src)
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				z.timeAfterPipe(n.Y, depth)
			}
			if bareTime(n.X) {
				// `time | sort`, `time && ls`: the parser reads a bare
				// time and goes on; bash rejects the line.
				z.a.refuseAllow("time with nothing to time before " + n.Op.String() + " (bash rejects it)")
			}
		case *syntax.Stmt:
			if n.Negated {
				if _, ok := n.Cmd.(*syntax.TimeClause); ok {
					// bash prints `! time ls` as `time ! ls`, which the
					// parser rejects: the differential cannot check it.
					z.a.refuseAllow("`! time`, which bash reads and prints otherwise than the parser")
				}
			}
		case *syntax.TimeClause:
			z.timeDashDash(n, depth)
		case *syntax.CallExpr:
			if len(n.Args) > 0 && len(n.Args[0].Parts) == 1 {
				if l, ok := n.Args[0].Parts[0].(*syntax.Lit); ok && reservedWord(l.Value) {
					// The parser takes `in x` or `else x` for a command
					// named in or else; bash for its keyword (mostly a
					// syntax error, after running the lines before it).
					z.a.refuseAllow("the reserved word " + l.Value + " as a command name")
				}
			}
		}
		return true
	})
}

// namedFD refuses a redirection written right after a `}` that does not
// close a group: bash reads `{NAME}>file` (with any redirection operator,
// here-documents too) as "open file on a new descriptor and assign its
// number to NAME", so `echo {HOME}>/dev/null; npm test` sets HOME to 10
// and npm reads ./10/.npmrc. The parser reads a word `{HOME}` and a
// redirection of echo's output, and so does bash's printing. Any word
// ending in `}` is refused, not only names: `{a[$(…)]}>` evaluates a
// subscript, and where the line between the forms lies is bash's business.
// The parser reads some of these forms as a named descriptor itself
// (Redirect.N holds `{NAME}`); those are refused the same.
func (z *analyzer) namedFD(r *syntax.Redirect, src string, braces *braceIndex, depth int) {
	start := int(r.OpPos.Offset())
	if r.N != nil {
		start = int(r.N.Pos().Offset())
		if !isDigits(r.N.Value) {
			// The parser knows the form too ({NAME} as the descriptor),
			// but nothing else in the policy reads it as an assignment.
			z.a.refuseAllow("a named file descriptor " + clip(r.N.Value, 40) + " (bash assigns the descriptor's number to the variable)")
			name := strings.TrimSuffix(strings.TrimPrefix(r.N.Value, "{"), "}")
			if lowerName(name) {
				z.noteValue(name, numericFacts(), numberWord) // exec {fd}>out/log: a number
			} else {
				// {HOME}>…, {PATH}<…: a variable later programs read.
				z.a.cannotRead("a named file descriptor " + clip(r.N.Value, 40) + " (bash sets that variable to a descriptor's number)")
			}
			// {a[…]}: bash evaluates the subscript.
			z.evaluated(name, "a named file descriptor", depth)
			return
		}
	}
	if start <= 0 || start > len(src) || src[start-1] != '}' || braces.closes(start-1) {
		return
	}
	z.a.cannotRead("a word ending in } right before a redirection (bash reads {NAME}> as a named file descriptor: it assigns the variable NAME)")
	if w, ok := braces.wordEndingAt(start); ok {
		// {a['$(…)']}>: bash may evaluate the subscript without its quotes.
		z.evaluated(wordOf(w).loose, "a named file descriptor", depth)
	}
}

// braceIndex answers namedFD's questions about a parsed script: which
// `}` close a { …; } group and which word ends where. It is built on the
// first question, which only a redirection right after a `}` asks, so
// the usual script is walked once less.
type braceIndex struct {
	f       *syntax.File
	closers map[int]bool         // offsets of the `}` that close a { …; } group
	ends    map[int]*syntax.Word // words by the offset right after them
}

func (b *braceIndex) build() {
	if b.closers != nil {
		return
	}
	b.closers, b.ends = map[int]bool{}, map[int]*syntax.Word{}
	syntax.Walk(b.f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Block:
			if n.Rbrace.IsValid() {
				b.closers[int(n.Rbrace.Offset())] = true
			}
		case *syntax.Word:
			b.ends[int(n.End().Offset())] = n
		}
		return true
	})
}

func (b *braceIndex) closes(offset int) bool {
	b.build()
	return b.closers[offset]
}

func (b *braceIndex) wordEndingAt(offset int) (*syntax.Word, bool) {
	b.build()
	w, ok := b.ends[offset]
	return w, ok
}

// timeAfterPipe handles `a | time b`: after `|` (or `|&`) bash does not
// read time as its keyword but runs the program time, whose options can
// write files (-o) and run what follows; the parser reads the keyword. The
// program's reading is added so deny rules and the approver see it.
func (z *analyzer) timeAfterPipe(st *syntax.Stmt, depth int) {
	if st == nil {
		return
	}
	tc, ok := st.Cmd.(*syntax.TimeClause)
	if !ok {
		return
	}
	z.a.refuseAllow("time right after | (bash runs the program time there, not its keyword)")
	ws := []word{{lit: "time", ok: true, loose: "time"}}
	for {
		if tc.PosixFormat {
			ws = append(ws, word{lit: "-p", ok: true, loose: "-p"})
		}
		if tc.Stmt == nil {
			break
		}
		inner, ok := tc.Stmt.Cmd.(*syntax.TimeClause)
		if !ok {
			break
		}
		// `| time time x`: the program time runs the program time.
		ws = append(ws, word{lit: "time", ok: true, loose: "time"})
		tc = inner
	}
	if tc.Stmt == nil {
		z.command(simple{words: ws}, depth)
		return
	}
	call, ok := tc.Stmt.Cmd.(*syntax.CallExpr)
	if !ok {
		z.unknown("the program time after | runs a compound command the policy cannot read as words")
		return
	}
	z.command(simple{words: append(ws, z.wordsOf(call.Args)...)}, depth)
}

// timeDashDash handles `time -- cmd` and `time -p -- cmd`: bash skips the
// `--` and times cmd; the parser reads `--` as the command's name, so a
// deny rule on cmd would not see it. The command without `--` is added.
func (z *analyzer) timeDashDash(tc *syntax.TimeClause, depth int) {
	if tc.Stmt == nil {
		return
	}
	call, ok := tc.Stmt.Cmd.(*syntax.CallExpr)
	if !ok || !timedDashDash(tc, call) {
		return
	}
	z.a.refuseAllow("time -- (bash skips the --, the parser reads it as the command)")
	if ws := z.wordsOf(call.Args[1:]); len(ws) > 0 {
		z.command(simple{words: ws}, depth) // `time -- -p x` runs the program -p
	}
}

// timedDashDash reports the `--` right after time (and -p), which bash
// skips: the first word of call, when call is what tc times.
func timedDashDash(tc *syntax.TimeClause, call *syntax.CallExpr) bool {
	if tc.Stmt == nil || tc.Stmt.Cmd != syntax.Command(call) || len(call.Args) == 0 || len(call.Assigns) > 0 {
		return false
	}
	w := wordOf(call.Args[0])
	return w.ok && w.lit == "--"
}

// reservedWord reports bash's reserved words, which unquoted in a command's
// place are never a program's name for bash.
func reservedWord(s string) bool {
	switch s {
	case "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
		"select", "then", "until", "while", "{", "}", "time", "[[", "]]":
		return true
	}
	return false
}

// bareTime reports a statement that is only `time` (or `time time`, `time
// -p`), with no command to time.
func bareTime(st *syntax.Stmt) bool {
	for st != nil {
		tc, ok := st.Cmd.(*syntax.TimeClause)
		if !ok {
			return false
		}
		if tc.Stmt == nil {
			return true
		}
		st = tc.Stmt
	}
	return false
}

// lowerName reports a shell variable name with no upper-case letter: not
// one of the environment's (HOME, PATH, GIT_DIR) that programs read.
func lowerName(s string) bool {
	if s == "" || !nameLiteral(s) {
		return false
	}
	return strings.ToLower(s) == s
}
