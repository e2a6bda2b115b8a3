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
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			view = append(view, "cmd "+assigns(n.Assigns)+" | "+quoted(n.Args...))
		case *syntax.DeclClause:
			view = append(view, "decl "+n.Variant.Value+" "+assigns(n.Args))
		case *syntax.Redirect:
			r := "redir "
			if n.N != nil {
				r += n.N.Value
			}
			r += n.Op.String() + " " + quoted(n.Word)
			if n.Hdoc != nil {
				r += " <<" + quoted(n.Hdoc)
			}
			view = append(view, r)
		case *syntax.FuncDecl:
			view = append(view, "func "+n.Name.Value)
		}
		return true
	})
	return view
}
