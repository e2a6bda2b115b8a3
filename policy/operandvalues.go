package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Operands whose value the command itself sets. `f=.env; cat $f`,
// `for f in .env; do cat "$f"; done` and `a=(.env); cat "${a[0]}"` read
// .env, but the word cat is given is an expansion, which the read_file
// rules (reads.go, unnamed.go) cannot match: with a deny rule on **/.env
// all three were allowed in mode full. A value from outside the command
// (the environment, $1 of a fresh shell) is the person's, not the agent's,
// and is left as it was judged (docs/security.md).
//
// So every operand that expands a variable the command assigns is judged
// again, at the end of the analysis (an assignment later in a loop body
// counts too), once for each value the command may give it: the words it
// assigns (an unquoted expansion is split and globbed as bash does), each
// judged as the operand it becomes. A value the policy cannot see (read,
// mapfile, command output, +=) or an operand it cannot take apart makes
// the read unjudged: the command asks, in every mode, where read rules
// exist (unjudgedVerdict), unless the program opens none of its operands
// (readsNoOperand: echo "$line"). So does an operand made of a command
// substitution's output (cat $(printf .%s env)).

// operandUse is an operand that expands a variable the command may assign.
type operandUse struct {
	name        string // the variable
	prefix, sfx string // the literal text around the expansion
	quoted      bool   // inside "…": one word, no globbing
	ws          []word // the command's words, the operand at i
	i           int
	cwd         string
	cwds        []string
	// complex: not one plain expansion between literal text (two of
	// them, an operation such as ${f%x}, escapes): unjudged if any of
	// names is assigned.
	complex bool
	names   []string
	// input: an input redirection's target (< $f), not a command's
	// operand; ws and i are unset.
	input bool
	// positional: the operand expands $1, $@ …, which the command sets
	// where it calls a function, runs set -- or a nested script.
	positional bool
	// dflt: the word of ${x:-WORD} (and :=, :+), a value written in the
	// command whoever set x.
	dflt []word
}

// maxOperandUses bounds the operands kept, and maxOperandValues the values
// one variable may take; past either the reads are unjudged.
const (
	maxOperandUses   = 256
	maxOperandValues = 64
)

// numberWord stands for a value bash sets to a number ($((i++)), exec
// {fd}>…): no file a rule names is called that.
var numberWord = word{lit: "0", ok: true, loose: "0"}

// noteWords records the words assigned to name; none given is a value the
// policy cannot see.
func (z *analyzer) noteWords(name string, vals []word) {
	if z.values.words == nil {
		z.values.words = map[string][]word{}
	}
	if len(vals) == 0 {
		vals = []word{{loose: anyText}}
	}
	if len(z.values.words[name])+len(vals) > maxOperandValues {
		vals = []word{{loose: anyText}}
	}
	z.values.words[name] = append(z.values.words[name], vals...)
}

// operandVariables records the operands of one simple command (args as
// parsed, ws as read) that expand a variable.
func (z *analyzer) operandVariables(args []*syntax.Word, ws []word) {
	name := cmdName(ws[0])
	if name == "set" {
		for k := 1; k < len(ws); k++ {
			l := ws[k].loose
			flag := strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")
			switch {
			case l == "--" || !flag:
				z.values.positionals = true // set -- a b, set a b: $1, $2 …
			case strings.HasSuffix(l, "o"):
				k++ // set -o pipefail, set -euo pipefail: an option's name
				if k < len(ws) && ws[k].loose == "allexport" && l[0] == '-' {
					z.values.allExport = true
				}
			}
			if strings.HasPrefix(l, "-") && l != "--" && strings.ContainsRune(l, 'a') {
				z.values.allExport = true // set -a
			}
		}
	}
	for i := 1; i < len(args); i++ {
		if !readsNoOperand(name) && commandOutput(args[i]) {
			// cat $(printf .%s env): the names are a command's output,
			// which nothing reads before it runs.
			z.a.unjudgedRead("an operand made of a command substitution's output (" + clip(printable(ws[min(i, len(ws)-1)].loose), 40) + ")")
		}
		u, ok := operandOf(args[i])
		if !ok {
			continue
		}
		if len(args) != len(ws) {
			u.complex = true // a brace expansion made more words: no place to put the value
		}
		u.ws, u.i = ws, i
		z.useOperand(u)
	}
}

// useOperand keeps u, in the directory the command is in, for
// judgeOperandValues.
func (z *analyzer) useOperand(u operandUse) {
	if len(z.values.uses) >= maxOperandUses {
		z.a.unjudgedRead("more operands set by the command than the policy judges")
		return
	}
	u.cwd, u.cwds = z.cwd, z.cwds
	z.values.uses = append(z.values.uses, u)
}

// inputVariable records an input redirection's target that expands a
// variable (cat < $f).
func (z *analyzer) inputVariable(t *syntax.Word) {
	if u, ok := operandOf(t); ok {
		u.input = true
		z.useOperand(u)
	}
}

// commandOutput reports a word holding a command substitution ($(…),
// `…`, $(<file)).
func commandOutput(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.CmdSubst); ok {
			found = true
		}
		return !found
	})
	return found
}

// readsNoOperand reports a program that opens none of its operands to read
// what they hold (it takes names, numbers or text), so operands made of a
// command's output are no reads of it.
func readsNoOperand(name string) bool {
	switch name {
	case "ls", "dir", "vdir", "tree", "cd", "pushd", "popd", "mkdir", "rmdir", "touch", "rm", "stat", "du", "df",
		"test", "[", "realpath", "readlink", "dirname", "basename", "chmod", "chown", "chgrp", "echo", "printf",
		"pwd", "true", "false", ":", "kill", "sleep", "wait", "exit", "return", "shift", "export", "declare",
		"local", "readonly", "typeset", "unset", "which", "type", "id", "date", "seq", "expr":
		return true
	}
	return false
}

// operandOf reads w as literal text around one plain expansion of a
// variable ($f, "$f", ${f}, ${a[0]}, "${a[@]}", out/$f.txt); ok is false
// when w expands no variable by name.
func operandOf(w *syntax.Word) (u operandUse, ok bool) {
	syntax.Walk(w, func(n syntax.Node) bool {
		p, isParam := n.(*syntax.ParamExp)
		switch {
		case !isParam || p.Param == nil:
		case isDigits(p.Param.Value) || p.Param.Value == "@" || p.Param.Value == "*":
			u.positional = true
		case identifier(p.Param.Value):
			u.names = append(u.names, p.Param.Value)
		}
		return true
	})
	if len(u.names) == 0 && !u.positional {
		return u, false
	}
	var text strings.Builder
	seen := false
	// take reads one part: literal text, or the one plain expansion.
	take := func(part syntax.WordPart, quoted bool) bool {
		switch part := part.(type) {
		case *syntax.Lit:
			text.WriteString(part.Value)
			if quoted {
				return !strings.Contains(part.Value, `\`)
			}
			return !strings.ContainsAny(part.Value, `\*?[`)
		case *syntax.SglQuoted:
			text.WriteString(part.Value)
			return !part.Dollar
		case *syntax.ParamExp:
			if seen || part.Excl || part.Length || part.Width || part.Slice != nil || part.Repl != nil {
				return false
			}
			if part.Exp != nil {
				// ${x:-.env}, ${x:=.env}, ${x:+.env}: the word is written
				// in the command, and is the value whenever x is unset
				// (or set): a value to judge whatever x holds.
				switch part.Exp.Op {
				case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
					syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
				default:
					return false
				}
				if part.Exp.Word != nil {
					u.dflt = []word{wordOf(part.Exp.Word)}
				} else {
					u.dflt = []word{{}}
				}
			}
			u.name, u.quoted, u.prefix, seen = part.Param.Value, quoted, text.String(), true
			text.Reset()
			return true
		}
		return false
	}
	u.complex = len(u.names) > 1
	for _, part := range w.Parts {
		if dq, isDQ := part.(*syntax.DblQuoted); isDQ {
			for _, in := range dq.Parts {
				if !take(in, true) {
					u.complex = true
				}
			}
		} else if !take(part, false) {
			u.complex = true
		}
	}
	u.sfx = text.String()
	return u, true
}

// judgeOperandValues judges each recorded operand once per value the
// command may give its variable, as the operand it becomes.
func (z *analyzer) judgeOperandValues() {
	cwd, cwds := z.cwd, z.cwds
	defer func() { z.cwd, z.cwds = cwd, cwds }()
	for _, u := range z.values.uses {
		// A value that cannot be placed is no read for a program that
		// opens none of its operands (while read -r l; do echo "$l").
		unjudged := u.input || !readsNoOperand(cmdName(u.ws[0]))
		values, assigned := z.operandValues(u)
		switch {
		case !assigned:
			continue // from outside the command
		case u.complex:
			if unjudged {
				z.a.unjudgedRead("an operand built from values the command sets ($" + strings.Join(u.names, ", $") + ")")
			}
			continue
		}
		for _, v := range values {
			why := ""
			switch {
			case !v.known() && v.pat == "":
				why = "an operand set to a value the policy cannot see ($" + u.name + ")"
			case !u.quoted && z.ifsSet:
				why = "an operand split by an IFS the command sets ($" + u.name + ")"
			}
			if why != "" {
				if unjudged {
					z.a.unjudgedRead(why)
				}
				continue
			}
			z.cwd, z.cwds = u.cwd, u.cwds
			z.judgeOperand(u, v)
		}
	}
}

// operandValues is every value the command may give u's expansion, and
// whether the command gives it any (else it comes from outside): the
// words assigned to the variable, a value no word holds for a nameref
// (its value is another variable's) and for positional parameters the
// command sets (a function's, set --, a nested script's), and the word of
// ${x:-WORD}, written in the command whoever set x.
func (z *analyzer) operandValues(u operandUse) (values []word, assigned bool) {
	unseen := word{loose: anyText}
	if u.positional {
		if z.values.positionals {
			values = append(values, unseen)
		}
	} else {
		for _, n := range u.names {
			vs, set := z.values.words[n]
			if _, ref := z.values.namerefs[n]; ref || bashSetsFromCommand(n) {
				vs, set = []word{unseen}, true
			}
			if set && n == u.name {
				values = append(values, vs...)
			}
			assigned = assigned || set
		}
	}
	values = append(values, u.dflt...)
	return values, assigned || len(values) > 0
}

// bashSetsFromCommand names the variables bash sets itself from the
// command's own text or input, to values no word holds: a function's name
// (.env() { cat "$FUNCNAME"; }; .env read .env), the command running, the
// directory stack, read's and getopts' results. An operand made of one is
// an unjudged read.
func bashSetsFromCommand(name string) bool {
	switch name {
	case "FUNCNAME", "BASH_COMMAND", "BASH_SOURCE", "BASH_ARGV", "BASH_EXECUTION_STRING", "BASH_ALIASES",
		"BASH_CMDS", "DIRSTACK", "COPROC", "MAPFILE", "REPLY", "OPTARG", "BASH_REMATCH":
		return true
	}
	return false
}

// judgeOperand judges u's command with value v in u's place: a literal
// name, or (unquoted, or a glob the assignment left unexpanded) each
// field as the pattern bash matches.
func (z *analyzer) judgeOperand(u operandUse, v word) {
	var fields []word
	switch {
	case v.pat != "":
		// A loop's glob (for f in ./*.go): bash matched it when the loop
		// began, so each value is one of its matches.
		fields = []word{{loose: u.prefix + v.loose + u.sfx, pat: escapeGlob(u.prefix) + v.pat + escapeGlob(u.sfx)}}
	case u.quoted:
		fields = []word{nameWord(u.prefix + v.loose + u.sfx)}
	default:
		// Unquoted: split on blanks, and each field is a pattern (the
		// literal text around the expansion is not).
		parts := strings.Fields(v.loose)
		if len(parts) == 0 {
			parts = []string{""}
		}
		for k, f := range parts {
			if k == 0 {
				f = escapeGlob(u.prefix) + f
			}
			if k == len(parts)-1 {
				f += escapeGlob(u.sfx)
			}
			if hasWild(f) {
				fields = append(fields, word{loose: unescapeGlob(f), pat: f})
			} else {
				fields = append(fields, nameWord(unescapeGlob(f)))
			}
		}
	}
	if u.input {
		for _, f := range fields {
			z.redirectTarget(syntax.RdrIn, f)
		}
		return
	}
	ws := append(append(append([]word{}, u.ws[:u.i]...), fields...), u.ws[u.i+1:]...)
	first := len(z.a.reads)
	z.mentionWords(fields)
	z.treeOperands(cmdName(ws[0]), ws, first)
}

// nameWord is the literal word s.
func nameWord(s string) word { return word{lit: s, ok: true, loose: s} }
