package policy

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Canonical returns command as the policy parses it, printed back from the
// syntax tree (comments dropped, layout normalised). Running, showing and
// judging this text instead of the raw string means a difference between
// the parser and bash can no longer change what runs or what the approver
// reads: the text is what the policy judged.
//
// It fails, and the caller keeps the raw text (which the policy never
// allows), when the command does not parse, contains characters where
// shells disagree (see findUnsafe), or prints back as something that parses
// to other commands or redirections than the original, or is not its own
// canonical form. Canonical(Canonical(x)) == Canonical(x).
func Canonical(command string) (string, error) {
	if spot, bad := findUnsafe(command); bad {
		return "", fmt.Errorf("the command contains %s", spot)
	}
	f, err := parseShell(command)
	if err != nil {
		return "", err
	}
	out, err := printShell(f)
	if err != nil {
		return "", err
	}
	if _, bad := findUnsafe(out); bad {
		return "", errors.New("the printed command contains characters where shells disagree")
	}
	g, err := parseShell(out)
	if err != nil {
		return "", fmt.Errorf("the printed command does not parse: %w", err)
	}
	if !slices.Equal(shellView(f), shellView(g)) {
		return "", errors.New("the printed command parses to other commands than the original")
	}
	again, err := printShell(g)
	if err != nil || again != out {
		return "", errors.New("the printed command is not stable when printed again")
	}
	return out, nil
}

func printShell(f *syntax.File) (string, error) {
	var b bytes.Buffer
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", err
	}
	// The printer ends with a newline; a command line reads better without.
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// shellView lists, in order, every simple command (assignments and words)
// and every redirection (operator, target, here-document body) in f, each
// word by its value as the policy reads it. Two texts with the same view run
// the same programs on the same arguments; the differential test compares
// bash's own reading with this.
func shellView(f *syntax.File) []string {
	var view []string
	quoted := func(ws ...*syntax.Word) string {
		parts := make([]string, len(ws))
		for i, w := range ws {
			parts[i] = strconv.Quote(wordOf(w).loose)
		}
		return strings.Join(parts, " ")
	}
	assigns := func(as []*syntax.Assign) string {
		var parts []string
		for _, a := range as {
			p := ""
			if a.Name != nil {
				p = a.Name.Value
			}
			if a.Append {
				p += "+"
			}
			if a.Value != nil {
				p += "=" + quoted(a.Value)
			} else if a.Array != nil {
				p += "=(…)"
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, " ")
	}
	// `a |& b` is `a 2>&1 | b`: bash prints it so, and it is a redirection
	// of a's output, added after a's own redirections.
	pipeAll := map[*syntax.Stmt]bool{}
	var stack []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			done := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if st, ok := done.(*syntax.Stmt); ok && pipeAll[st] {
				view = append(view, "redir 2>& "+strconv.Quote("1"))
			}
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.PipeAll {
				pipeAll[n.X] = true
			}
		case *syntax.CallExpr:
			args := n.Args
			if len(stack) > 2 {
				// `time -- ls` runs ls: bash skips the --.
				if tc, ok := stack[len(stack)-3].(*syntax.TimeClause); ok && timedDashDash(tc, n) {
					args = args[1:]
				}
			}
			view = append(view, "cmd "+assigns(n.Assigns)+" | "+quoted(args...))
		case *syntax.DeclClause:
			view = append(view, "decl "+n.Variant.Value+" "+assigns(n.Args))
		case *syntax.Redirect:
			view = append(view, redirView(n, quoted))
		case *syntax.FuncDecl:
			name := ""
			if n.Name != nil {
				name = n.Name.Value
			}
			view = append(view, "func "+name)
		}
		return true
	})
	return view
}

// redirView is one redirection: the file descriptor (made explicit: `>`
// is `1>`), the operator, the target and a here-document's body (with the
// leading tabs `<<-` strips removed).
func redirView(r *syntax.Redirect, quoted func(...*syntax.Word) string) string {
	fd := ""
	if r.N != nil {
		fd = r.N.Value
		fd = fdNumber(fd)
	} else {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.DplOut:
			fd = "1"
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			fd = "0"
		}
	}
	target := quoted(r.Word)
	if w := wordOf(r.Word); (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && w.ok {
		if n, moved := strings.CutSuffix(w.lit, "-"); isDigits(n) {
			if moved {
				n = fdNumber(n) + "-"
			} else {
				n = fdNumber(n)
			}
			target = strconv.Quote(n)
		}
	}
	op := r.Op.String()
	if w := wordOf(r.Word); r.Op == syntax.DplIn && w.ok && w.lit == "-" {
		op = syntax.DplOut.String() // N<&- and N>&- both close N; bash prints both as N>&-
	}
	v := "redir " + fd + op + " " + target
	// An empty body is no body: the parser gives one here-document an
	// empty word and another none, as bash's own printing shows.
	if r.Hdoc != nil {
		body := wordOf(r.Hdoc).loose
		if r.Op == syntax.DashHdoc {
			body = stripTabs(body)
		}
		if body != "" {
			v += " <<" + strconv.Quote(body)
		}
	}
	return v
}

// fdNumber is a file descriptor as bash prints it: 00 is 0, 007 is 7.
func fdNumber(fd string) string {
	if !isDigits(fd) {
		return fd
	}
	if fd = strings.TrimLeft(fd, "0"); fd == "" {
		return "0"
	}
	return fd
}

func stripTabs(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}
