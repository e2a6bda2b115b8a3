package policy

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates some text a second time, after quotes are gone: array
// subscripts in a variable name (test -v 'x[$(rm -rf x)]' runs rm) and
// arithmetic (let, (( )), $(( )), [[ a -eq b ]], declare -i). The names
// and operands of these builtins, per the bash manual ("Arrays": "the
// subscript is treated as an arithmetic expression"; SHELL BUILTIN
// COMMANDS), are therefore read twice: a text holding anything the shell
// would expand is never allowed, and the substitutions in it are analysed
// like any other command, so deny rules see the rm inside x[$(rm -rf x)].
//
// Builtins whose operands name variables (and so evaluate subscripts):
// test/[ -v and -R, printf -v, read (names and -a), mapfile/readarray
// (the array, and -C's callback is a command), declare/typeset/local/
// readonly/export, unset, getopts, wait -p, let.

// plainText reports text with nothing the shell expands when it evaluates
// it: no $, backtick, quotes, backslashes or control bytes.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			return false
		}
		switch c {
		case '$', '`', '\\', '\'', '"':
			return false
		}
	}
	return true
}

// evaluated handles text that bash evaluates at run time as arithmetic or
// as a variable name with a subscript.
func (z *analyzer) evaluated(text, what string, depth int) {
	if plainText(text) {
		return
	}
	if z.a.uncoverable == "" { // only the first reason is kept: build it once
		z.a.refuseAllow("text that " + what + " evaluates at run time (" + strconv.Quote(clip(strings.ReplaceAll(text, anyText, "…"), 60)) + ")")
	}
	z.expansions(text, depth)
}

// evaluatedValue is evaluated for text bash certainly evaluates (an
// arithmetic operand, the name after test -v, printf -v, read): a part the
// policy cannot see there ($_, $1, a loop variable, command output) makes
// the reading incomplete.
func (z *analyzer) evaluatedValue(text, what string, depth int) {
	if strings.Contains(text, anyText) {
		z.a.cannotRead("a value the policy cannot see, evaluated by " + what)
	}
	z.evaluated(text, what, depth)
}

// expansions analyses what bash would run when it expands text as in a
// here-document: $(…), `…`, ${…}, $((…)). Unknown parts (anyText) are
// dropped; whatever produced them is analysed where it was written.
func (z *analyzer) expansions(text string, depth int) {
	text = strings.ReplaceAll(text, anyText, "")
	if !strings.ContainsAny(text, "$`") {
		return
	}
	if depth >= maxDepth {
		z.unknown("expansions nested too deeply to analyse")
		return
	}
	w, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
	if err != nil {
		z.a.refuseAllow("text that bash expands does not parse: " + err.Error())
		for _, words := range crudeCommands(text) {
			z.command(simple{words: words, guess: true}, depth+1)
		}
		return
	}
	z.walk(w, depth+1, false)
}

// arithmetic reads the words of an arithmetic expression a second time:
// "a[\$(rm x)]" inside (( )) loses its quotes and is then evaluated.
// Substitutions and nested $(( )) written directly are left to the main
// walk.
func (z *analyzer) arithmetic(n syntax.ArithmExpr, depth int) {
	if n == nil {
		return
	}
	z.arithmeticNames(n, "", depth)
}

// testClause: [[ -v x ]], [[ -R x ]] and the arithmetic comparisons
// evaluate their operands; [[ 'a[$(rm)]' -eq 1 ]] runs rm.
func (z *analyzer) testClause(tc *syntax.TestClause, depth int) {
	syntax.Walk(tc, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.UnaryTest:
			if m.Op == syntax.TsVarSet || m.Op == syntax.TsRefVar {
				z.testOperand(m.X, depth)
			}
		case *syntax.BinaryTest:
			switch m.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				z.testNumber(m.X, depth)
				z.testNumber(m.Y, depth)
			case syntax.TsReMatch:
				// =~ sets BASH_REMATCH to the matched text, which no word
				// holds: [[ .env =~ (.*) ]]; cat "${BASH_REMATCH[1]}" read .env.
				z.noteWords("BASH_REMATCH", nil)
			}
		}
		return true
	})
}

func (z *analyzer) testOperand(x syntax.TestExpr, depth int) {
	if w, ok := x.(*syntax.Word); ok {
		z.evaluatedValue(wordOf(w).loose, "[[ ]]", depth)
	}
}

// testNumber: an operand of [[ a -eq b ]] is an arithmetic expression.
func (z *analyzer) testNumber(x syntax.TestExpr, depth int) {
	if w, ok := x.(*syntax.Word); ok {
		z.arithmeticWord(w, "[[ ]]", depth)
	}
}

// declBuiltin names the builtins that declare variables (mvdan parses them
// as DeclClause when written directly; behind `builtin` or `command` they
// are plain commands).
func declBuiltin(name string) bool {
	switch name {
	case "declare", "typeset", "local", "readonly", "export":
		return true
	}
	return false
}

// evaluatedArgs handles a simple command whose operands bash evaluates:
// see the list at the top of this file.
func (z *analyzer) evaluatedArgs(name string, ws []word, depth int) {
	args := ws[1:]
	switch name {
	case "test", "[", "let", "read", "unset", "getopts", "wait":
		for _, w := range args {
			z.evaluated(w.loose, name, depth)
		}
		z.evaluatedNames(name, args, depth)
	case "mapfile", "readarray":
		z.evaluatedNames(name, args, depth)
		for _, w := range args {
			z.evaluated(w.loose, name, depth)
		}
		// -C CALLBACK is a command, wherever it sits in a cluster of
		// options (mapfile -tC 'rm …' -c1 runs rm), which bash runs with
		// the line's index and the line after it (rm -f zz 0 x).
		if _, vals := builtinOperands(args, "dnOsuCc"); vals['C'].loose != "" {
			z.scriptValue(vals['C'], depth, false, true)
		}
	case "printf":
		for i := 0; i < len(args); i++ {
			l := args[i].loose
			switch {
			case l == "-v" && i+1 < len(args):
				z.printfAssigns(args[i+1].loose, args[i+2:], depth)
				i++
			case strings.HasPrefix(l, "-v"):
				z.printfAssigns(l[2:], args[i+1:], depth)
			case l == "--" || !strings.HasPrefix(l, "-"):
				if l == "--" {
					i++
				}
				if i < len(args) && printfFormatAssigns(args[i]) {
					z.a.refuseAllow("printf with %n in its format (it assigns a variable)")
				}
				return
			}
		}
	default:
		if declBuiltin(name) {
			integer, nameref := declFlags(looseOf(args))
			z.values.intVars = z.values.intVars || integer
			for _, w := range args {
				z.evaluated(w.loose, name, depth)
				if n, v, ok := strings.Cut(w.loose, "="); ok {
					z.nameref(nameref, n, word{loose: v}, true)
					z.declAssign(nameref, strings.TrimSuffix(n, "+"), word{loose: v}, depth)
				} else if !strings.HasPrefix(w.loose, "-") {
					z.nameref(nameref, w.loose, word{}, false)
				}
			}
		}
	}
}

// printfFormatAssigns reports whether printf's format may assign a
// variable: bash's printf stores the count of bytes written so far in the
// variable an argument names for each %n conversion (flags, width,
// precision and length letters allowed between, as in %-5ln), so
// `printf %n PATH` sets PATH. A format not known in full may hold one.
func printfFormatAssigns(f word) bool {
	if !f.known() {
		return true
	}
	s := f.loose
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '%' {
			i = j // a literal %
			continue
		}
		for j < len(s) && strings.IndexByte("-+ #0'*.123456789hlLjzt", s[j]) >= 0 {
			j++
		}
		if j < len(s) && s[j] == 'n' {
			return true
		}
		i = j - 1
	}
	return false
}

// printfAssigns: printf -v NAME FORMAT ARGS… assigns the formatted text
// to NAME, which may be PS4 or a variable evaluated later; the text is
// judged like any assigned value.
func (z *analyzer) printfAssigns(name string, rest []word, depth int) {
	z.a.refuseAllow("printf -v (it assigns a variable)")
	z.evaluatedValue(name, "printf -v", depth)
	var b strings.Builder
	for _, w := range rest {
		b.WriteString(w.loose)
		b.WriteByte(' ')
	}
	z.assignment(name, word{loose: b.String()}, depth)
	if len(rest) != 1 || !rest[0].ok || strings.ContainsAny(rest[0].lit, "%\\") {
		// The text is the format with its conversions and escapes done
		// (printf -v f .e%s nv sets f to .env), which no word holds.
		z.noteWords(strings.TrimSpace(name), nil)
	}
}

// declClause handles declare/typeset/local/readonly/export as parsed:
// every operand names a variable (subscripts evaluated) and may assign.
func (z *analyzer) declClause(d *syntax.DeclClause, depth int) {
	variant := d.Variant.Value
	var opts []string
	for _, as := range d.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if l := wordOf(as.Value); l.known() && strings.HasPrefix(l.loose, "-") {
				opts = append(opts, l.loose)
			}
		}
	}
	integer, nameref := declFlags(opts)
	z.values.intVars = z.values.intVars || integer
	exported := variant == "export" || slices.ContainsFunc(opts, func(o string) bool { return strings.Contains(o, "x") })
	for _, as := range d.Args {
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			// A quoted or expanded operand: 'PS4=$(rm)', "a[\$(rm)]".
			l := wordOf(as.Value).loose
			z.evaluatedValue(l, variant, depth)
			if _, v, ok := strings.Cut(l, "="); ok && exported {
				z.environmentFiles(word{loose: v, lit: v, ok: wordOf(as.Value).ok})
			}
			if n, v, ok := strings.Cut(l, "="); ok {
				z.nameref(nameref, n, word{loose: v}, true)
				z.declAssign(nameref, strings.TrimSuffix(n, "+"), word{loose: v}, depth)
			} else if !strings.HasPrefix(l, "-") {
				z.nameref(nameref, l, word{}, false)
			}
		case as.Name != nil:
			z.arithmetic(as.Index, depth)
			if as.Array != nil {
				elems := []word{{}}
				for _, el := range as.Array.Elems {
					if el.Value != nil {
						elems = append(elems, wordOf(el.Value))
						z.noteDash(as.Name.Value, wordOf(el.Value).loose)
					}
				}
				z.noteWords(as.Name.Value, elems)
			}
			if as.Value != nil {
				if exported {
					z.environmentFiles(valueWord(as.Value))
				}
				z.nameref(nameref, as.Name.Value, wordOf(as.Value), true)
				z.declAssign(nameref, as.Name.Value, valueWord(as.Value), depth)
			} else {
				z.nameref(nameref, as.Name.Value, word{}, false)
			}
		}
	}
}

// declAssign judges a declaration's NAME=VALUE. Under -n the value is the
// name referred to, not a value the reference holds: it is judged like
// any assignment, but what NAME holds is left as it was.
func (z *analyzer) declAssign(nameref bool, name string, v word, depth int) {
	key := name
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = key[:i]
	}
	old, had := z.values.vars[key]
	z.assignment(name, v, depth)
	if nameref {
		if had {
			z.values.vars[key] = old
		} else {
			delete(z.values.vars, key)
		}
	}
}
