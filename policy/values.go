package policy

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The closed-world reading of values bash evaluates. Bash reads some
// values a second time as code: a variable's value in arithmetic
// ($((x)), (( x )), let x, [[ x -eq 1 ]]) is itself evaluated, so
// x='a[$(rm -rf ~)]' runs rm; ${!x} and declare -n evaluate x's value as
// a name (with its subscript); ${x@P} expands it as a prompt string. A
// value the policy cannot see ($_, $1, a loop, select or read variable,
// command output, the environment) reaching one of those places makes the
// reading incomplete, and an incomplete reading is never an allow.
//
// The analysis keeps, per variable name, what every value assigned to it
// in the command is safe as. Uses are judged at the end of the analysis
// (judgeValues) so that an unsafe assignment anywhere, say later in a
// loop body, still counts: a use is read only when a safe assignment came
// before it and no unsafe one exists at all.

// valueUse is how bash evaluates a value.
type valueUse int

const (
	asArithmetic valueUse = iota // evaluated as an arithmetic expression
	asName                       // evaluated as a variable name (${!x}, declare -n)
	asPrompt                     // expanded as a prompt string (${x@P})
)

func (u valueUse) String() string {
	switch u {
	case asArithmetic:
		return "arithmetic"
	case asName:
		return "a variable name"
	default:
		return "a prompt string"
	}
}

// valueFacts says what every value assigned to one name so far is safe as.
type valueFacts struct{ arithmetic, name, prompt bool }

// and: what both values are safe as.
func (f valueFacts) and(g valueFacts) valueFacts {
	return valueFacts{arithmetic: f.arithmetic && g.arithmetic, name: f.name && g.name, prompt: f.prompt && g.prompt}
}

func (f valueFacts) safeAs(u valueUse) bool {
	switch u {
	case asArithmetic:
		return f.arithmetic
	case asName:
		return f.name
	default:
		return f.prompt
	}
}

// valueRef is one evaluated use of a variable, judged by judgeValues.
type valueRef struct {
	name    string
	use     valueUse
	what    string // where: "$(( ))", "let", "${!x}"
	defined bool   // a safe assignment came before the use
}

// valueState is the analysis' record of assignments and evaluated uses.
type valueState struct {
	vars map[string]valueFacts
	refs []valueRef
	// intVars: declare -i was used, so every later assignment's value is
	// evaluated as arithmetic.
	intVars bool
	// namerefs: the names declared with -n, each with the name it refers
	// to ("" when none is given): an assignment to either is one to both.
	namerefs map[string]string
	// loops: each for/select loop's variable and what its words are safe
	// as (a nameref loop variable refers to each word in turn).
	loops []loopValue
	// words: every value the command assigns to a variable, as words
	// (noteWords); uses: the operands that expand one (operandvalues.go).
	words map[string][]word
	uses  []operandUse
	// positionals: the command gives $1, $2 … values of its own (it
	// defines a function, runs set with operands, or is a nested script).
	positionals bool
	// allExport: set -a (set -o allexport) ran: every later assignment
	// is exported to the programs the command runs.
	allExport bool
}

type loopValue struct {
	name string
	f    valueFacts
}

// maxValueRefs bounds the uses kept; past it the reading is incomplete.
const maxValueRefs = 256

// factsOf says what a value is safe as when bash evaluates it.
func factsOf(v word) valueFacts {
	if !v.known() {
		return valueFacts{}
	}
	s := v.loose
	return valueFacts{arithmetic: arithmeticLiteral(s), name: nameLiteral(s), prompt: plainText(s)}
}

// numericFacts: a number (an arithmetic result, a loop over literal
// numbers) is safe however bash evaluates it.
func numericFacts() valueFacts { return valueFacts{arithmetic: true, name: true, prompt: true} }

// arithmeticLiteral reports a value whose evaluation as arithmetic reads no
// variable: numbers (decimal, 0x hex, BASE#digits), blanks and operators.
func arithmeticLiteral(s string) bool {
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" \t+-*/%()<>=!&|^~", r) }) {
		if !numberLiteral(tok) {
			return false
		}
	}
	return true
}

func numberLiteral(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	if base, digits, ok := strings.Cut(s, "#"); ok {
		return isDigits(base) && digits != "" && strings.Trim(digits, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_") == ""
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		return h != "" && strings.Trim(h, "0123456789abcdef") == ""
	}
	return isDigits(s)
}

// nameLiteral reports a value that names a variable without a subscript
// bash would evaluate: an identifier, a positional's digits, or either
// with a numeric subscript.
func nameLiteral(s string) bool {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if !strings.HasSuffix(s, "]") || !isDigits(s[i+1:len(s)-1]) {
			return false
		}
		s = s[:i]
	}
	return identifier(s) || isDigits(s)
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// alwaysKnown names the variables bash sets itself to a number: safe to
// evaluate whatever the command did. ($_ is not among them: it is the
// last word of the previous command, anything at all.)
func alwaysKnown(name string) bool {
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID",
		"EPOCHSECONDS":
		return true
	}
	return false
}

// noteValue records an assignment to name (a subscript is dropped: an
// array's elements share its facts) of values safe as f: vals, when the
// caller knows the words assigned, else a value the policy cannot see
// (operandValues).
func (z *analyzer) noteValue(name string, f valueFacts, vals ...word) {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	z.noteWords(name, vals)
	switch name {
	case "PS0", "PS1", "PS2", "PS3", "PS4":
		// Expanded as a prompt, command substitutions and all: PS4 on
		// every line set -x traces, PS3 by select.
		if !f.prompt {
			z.a.cannotRead("$" + name + " set to a value the policy cannot read (bash expands it as a prompt, running what it holds)")
		}
	case "PROMPT_COMMAND":
		z.a.cannotRead("$PROMPT_COMMAND set (bash runs it before a prompt)")
	case "BASH_ALIASES", "BASH_CMDS":
		// An alias, or the program a name runs (as hash -p does).
		z.a.cannotRead("$" + name + " set (it changes what a later name runs)")
	case "CDPATH":
		// cd NAME then goes to a directory below any of its entries.
		z.a.cannotRead("$CDPATH set (cd then goes where the policy cannot place)")
	}
	if z.values.vars == nil {
		z.values.vars = map[string]valueFacts{}
	}
	if old, ok := z.values.vars[name]; ok {
		f = old.and(f)
	}
	z.values.vars[name] = f
}

// useValue records that bash evaluates name's value as use.
func (z *analyzer) useValue(name string, use valueUse, what string) {
	if alwaysKnown(name) {
		return
	}
	if len(z.values.refs) >= maxValueRefs {
		z.a.cannotRead("more evaluated values than the policy reads")
		return
	}
	f, ok := z.values.vars[name]
	z.values.refs = append(z.values.refs, valueRef{name: name, use: use, what: what, defined: ok && f.safeAs(use)})
}

// judgeValues makes the reading incomplete for every evaluated value that
// was not assigned safely before its use, or was ever assigned unsafely.
func (z *analyzer) judgeValues() {
	// A nameref and the name it refers to are one variable: what either
	// was assigned, both hold.
	for range z.values.namerefs {
		for r, t := range z.values.namerefs {
			f, okR := z.values.vars[r]
			g, okT := z.values.vars[t]
			switch {
			case t == "" || !okR && !okT:
				continue
			case okR && okT:
				f = f.and(g)
			case okT:
				f = g
			}
			z.values.vars[r], z.values.vars[t] = f, f
		}
	}
	for _, l := range z.values.loops {
		if _, ok := z.values.namerefs[l.name]; ok && !l.f.name {
			z.a.cannotRead("a loop over the nameref $" + l.name + " makes it refer to each word, evaluated as a name")
		}
	}
	for name := range z.values.vars {
		if z.a.assigned == nil {
			z.a.assigned = map[string]bool{}
		}
		z.a.assigned[name] = true
	}
	for _, r := range z.values.refs {
		if f := z.values.vars[r.name]; !r.defined || !f.safeAs(r.use) {
			why := "the value of $" + r.name + ", which the policy cannot see, evaluated as " + r.use.String()
			if r.what != "" {
				why += " by " + r.what
			}
			z.a.cannotRead(why)
		}
	}
	if z.values.intVars {
		for name, f := range z.values.vars {
			if !f.arithmetic {
				z.a.cannotRead("declare -i makes bash evaluate the value of $" + name + ", which the policy cannot see")
				break
			}
		}
	}
}

// arithmeticNames reads the variables an arithmetic expression evaluates,
// in bash's order: an assignment's right side before its name is set.
// Words that are not a name or a number go to evaluated (a quoted
// 'a[$(rm)]' loses its quotes and is evaluated).
func (z *analyzer) arithmeticNames(x syntax.ArithmExpr, what string, depth int) {
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		if name := arithmeticName(x.X); name != "" && arithmeticAssign(x.Op) {
			z.arithmeticNames(x.Y, what, depth)
			if x.Op != syntax.Assgn {
				z.useValue(name, asArithmetic, what)
			}
			z.noteValue(name, numericFacts(), numberWord)
			return
		}
		z.arithmeticNames(x.X, what, depth)
		z.arithmeticNames(x.Y, what, depth)
	case *syntax.UnaryArithm:
		z.arithmeticNames(x.X, what, depth)
	case *syntax.ParenArithm:
		z.arithmeticNames(x.X, what, depth)
	case *syntax.Word:
		z.arithmeticWord(x, what, depth)
	}
}

func arithmeticAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

// arithmeticName is the variable an arithmetic operand names ("x", "a[i]",
// "$x"), or "".
func arithmeticName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok {
		return ""
	}
	parts := unquoted(w.Parts)
	if len(parts) != 1 {
		return ""
	}
	switch p := parts[0].(type) {
	case *syntax.Lit:
		if identifier(p.Value) {
			return p.Value
		}
	case *syntax.ParamExp:
		if p.Param != nil && !p.Length && !p.Excl && !p.Width && !p.IsSet && p.Exp == nil && p.Repl == nil &&
			p.Slice == nil && p.Names == 0 && p.NestedParam == nil {
			return p.Param.Value
		}
	}
	return ""
}

// arithmeticWord judges one operand of an arithmetic expression.
func (z *analyzer) arithmeticWord(w *syntax.Word, what string, depth int) {
	if name := arithmeticName(w); name != "" {
		z.useValue(name, asArithmetic, what)
		return
	}
	if parts := unquoted(w.Parts); len(parts) == 1 {
		switch p := parts[0].(type) {
		case *syntax.ArithmExp:
			return // a number; the main walk reads its operands
		case *syntax.Lit:
			if numberLiteral(p.Value) {
				return
			}
		case *syntax.ParamExp:
			if p.Length && p.Exp == nil && p.Repl == nil && p.Slice == nil {
				return // ${#x} is a number
			}
		}
	}
	if what == "" {
		what = "arithmetic"
	}
	z.evaluatedValue(wordOf(w).loose, what, depth)
}

// paramValues judges the expansions that evaluate a variable's value:
// ${!x} (x's value is a name, its subscript evaluated) and ${x@P}.
func (z *analyzer) paramValues(p *syntax.ParamExp) {
	if p.Param == nil {
		return
	}
	if p.Excl && p.Names == 0 && !wholeArray(p.Index) {
		z.useValue(p.Param.Value, asName, "${!"+p.Param.Value+"}")
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
		z.useValue(p.Param.Value, asPrompt, "${"+p.Param.Value+"@P}")
	}
}

// wholeArray: ${!a[@]} lists an array's keys; nothing is evaluated.
func wholeArray(index syntax.ArithmExpr) bool {
	w, ok := index.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// loopValues records what a for or select loop assigns its variable: each
// of its words.
func (z *analyzer) loopValues(fc *syntax.ForClause) {
	it, ok := fc.Loop.(*syntax.WordIter)
	if !ok || it.Name == nil {
		return
	}
	f := numericFacts()
	items := z.wordsOf(it.Items)
	if fc.Select || !it.InPos.IsValid() {
		f = valueFacts{} // what a person types, or the positionals
		items = nil
	}
	for _, w := range items {
		f = f.and(factsOf(w))
	}
	if len(items) == 0 {
		items = []word{{loose: anyText}} // no words: the positionals, or what a person types
	}
	z.noteValue(it.Name.Value, f, items...)
	z.values.loops = append(z.values.loops, loopValue{name: it.Name.Value, f: f})
}

// declFlags reads the attribute options of declare/typeset/local: -i makes
// later assignments arithmetic, -n makes the value a name.
func declFlags(opts []string) (integer, nameref bool) {
	for _, o := range opts {
		if len(o) > 1 && o[0] == '-' {
			integer = integer || strings.Contains(o, "i")
			nameref = nameref || strings.Contains(o, "n")
		}
	}
	return integer, nameref
}

// builtinOperands splits a builtin's words into its operands and the values
// of the options that take one (valued lists their letters), as bash's
// getopt-style builtins read them.
func builtinOperands(args []word, valued string) (operands []word, values map[byte]word) {
	values = map[byte]word{}
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if l == "--" {
			return append(operands, args[i+1:]...), values
		}
		if len(l) < 2 || l[0] != '-' || !args[i].known() {
			return append(operands, args[i:]...), values
		}
		for j := 1; j < len(l); j++ {
			if strings.IndexByte(valued, l[j]) < 0 {
				continue
			}
			switch {
			case j+1 < len(l):
				values[l[j]] = word{lit: l[j+1:], ok: true, loose: l[j+1:]}
			case i+1 < len(args):
				i++
				values[l[j]] = args[i]
			}
			break
		}
	}
	return operands, values
}

// evaluatedNames judges the operands a builtin evaluates as variable names
// (their subscripts are arithmetic) or as arithmetic, and records what the
// ones it assigns hold: input the policy cannot see.
func (z *analyzer) evaluatedNames(name string, args []word, depth int) {
	assigns := func(ws ...word) {
		for _, w := range ws {
			z.evaluatedValue(w.loose, name, depth)
			if w.known() {
				z.noteValue(w.loose, valueFacts{})
			}
			if v, _, _ := strings.Cut(w.loose, "["); writtenVariable(v) || optionVariable(v) {
				// read DEPENDENCIES_OUTPUT < out/x: gcc then writes a
				// file only the input names; read TAR_OPTIONS: tar takes
				// options only the input holds.
				z.a.cannotRead(name + " sets $" + v + " from input the policy cannot see (a program takes it as a file to write or as options)")
			}
		}
	}
	switch name {
	case "test", "[":
		// Only -v and -R name a variable; [ compares numbers without
		// evaluating them (only [[ ]] does).
		for i, w := range args {
			if (w.loose == "-v" || w.loose == "-R") && i+1 < len(args) {
				z.evaluatedValue(args[i+1].loose, name+" "+w.loose, depth)
			}
		}
	case "let":
		for _, w := range args {
			if !w.known() || !arithmeticLiteral(w.loose) {
				z.a.cannotRead("let evaluates " + strconv.Quote(clip(printable(w.loose), 40)) + ", which the policy does not read")
			}
		}
	case "unset":
		ops, _ := builtinOperands(args, "")
		for _, w := range ops {
			z.evaluatedValue(w.loose, name, depth)
		}
	case "read":
		ops, vals := builtinOperands(args, "adinNptu")
		if a, ok := vals['a']; ok {
			ops = append(ops, a)
		}
		assigns(ops...)
	case "mapfile", "readarray":
		if ops, _ := builtinOperands(args, "dnOsuCc"); len(ops) > 0 {
			assigns(ops[0])
		}
	case "getopts":
		if ops, _ := builtinOperands(args, ""); len(ops) > 1 {
			assigns(ops[1])
		}
	case "wait":
		if _, vals := builtinOperands(args, "p"); vals['p'].loose != "" {
			assigns(vals['p'])
		}
	}
}

// valueWord is an assigned value as the analysis reads it; a value that is
// one arithmetic expansion ($((…)), quoted or not) is a number whatever
// its operands, which are read where they are written.
func valueWord(w *syntax.Word) word {
	if parts := unquoted(w.Parts); len(parts) == 1 {
		if _, ok := parts[0].(*syntax.ArithmExp); ok {
			return word{lit: "0", ok: true, loose: "0"}
		}
	}
	return wordOf(w)
}

// arrayFacts: what every element of a=(…) is safe as.
func arrayFacts(a *syntax.ArrayExpr) valueFacts {
	f := numericFacts()
	for _, el := range a.Elems {
		if el.Value != nil {
			f = f.and(factsOf(valueWord(el.Value)))
		}
	}
	return f
}

// unquoted is a word's parts with one enclosing pair of double quotes
// removed: "$x" names x as $x does.
func unquoted(parts []syntax.WordPart) []syntax.WordPart {
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			return dq.Parts
		}
	}
	return parts
}

// nameref judges the value of a declare -n operand: bash evaluates it as
// a name (with its subscript) on every use of the reference. name is the
// reference; it and the name it refers to are one variable from then on
// (judgeValues), and a reference to a variable bash itself acts on (PS4,
// PROMPT_COMMAND, CDPATH, PATH …) makes every assignment through it one
// the policy cannot place.
func (z *analyzer) nameref(on bool, name string, v word, hasValue bool) {
	if !on {
		return
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if z.values.namerefs == nil {
		z.values.namerefs = map[string]string{}
	}
	if !hasValue {
		if _, ok := z.values.namerefs[name]; !ok {
			z.values.namerefs[name] = ""
		}
		return
	}
	if !factsOf(v).name {
		z.a.cannotRead("declare -n refers to a name the policy cannot see")
		return
	}
	t := v.loose
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	z.values.namerefs[name] = t
	switch t {
	case "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "CDPATH", "BASH_ALIASES", "BASH_CMDS":
		z.a.cannotRead("declare -n refers to $" + t + ", which bash acts on")
		return
	}
	if configVariable(t) {
		z.a.cannotRead("declare -n refers to $" + t + ", which decides what code programs run")
	}
	if writtenVariable(t) || optionVariable(t) {
		z.a.cannotRead("declare -n refers to $" + t + ", which a program takes as a file to write or as options")
	}
}

func looseOf(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.loose
	}
	return out
}
