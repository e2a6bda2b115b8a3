package policy

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/askops/askops/internal/realpath"
)

// anyText stands, in a word's loose form, for text the shell decides at run
// time (an expansion, a glob): it matches any string when deny rules are
// matched, so "could match" counts as a match.
const anyText = "\x00"

// maxDepth bounds nested scripts (bash -c '…', eval, wrappers) so a hostile
// command cannot make the analysis recurse without end; deeper means unknown.
const maxDepth = 8

// word is one shell word in two forms: its literal value (when it has one)
// for allow rules, and a loose form for deny rules and danger checks.
type word struct {
	lit   string // the value, when ok
	ok    bool   // fully literal: no expansion, glob, tilde, brace or $'…'
	loose string // best guess at the value; anyText where unknown
	splat bool   // has an unquoted expansion: may become zero or several words
	// found: find's {} in its -exec command, one of the files find found:
	// what a delete of it reaches find's own tree judges (unnamedDelete).
	found bool
	// pat: when not ok, the word as a pathname pattern if its only
	// non-literal parts are unquoted glob characters or a leading tilde
	// (quoted text escaped), else ""; what bash may expand it to is a read
	// of every file it matches (unnamed.go).
	pat string
}

func (w word) known() bool { return !strings.Contains(w.loose, anyText) }

// simple is one simple command found anywhere in a command line.
type simple struct {
	words []word
	outer bool // written in the command itself, not found by unwrapping or in a nested script
	// guess: a candidate the analysis cannot place (every word after
	// `docker run IMAGE` might start the command). Deny rules and dangers
	// look at guesses; allow rules need every command that is not a guess.
	guess bool
	// via: a program the option via may start, which the policy cannot
	// name (gdb -ex 'python …'). Its one word is empty: no deny rule
	// matches it, and no allow rule covers it.
	via string
	// transport: a program the one that runs it starts by what it is, to
	// reach a host or copy a file (scp's and rsync's ssh, scp's cp). It is
	// on Runs:, deny rules and dangers look at it, and the allow rule that
	// covers the program starting it covers it.
	transport bool
}

func (s simple) String() string {
	parts := make([]string, len(s.words))
	for i, w := range s.words {
		parts[i] = strings.ReplaceAll(w.loose, anyText, "…")
	}
	return clip(strings.Join(parts, " "), 120)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// analysis is what the policy needs to know about one command line.
type analysis struct {
	parseErr    error
	cmds        []simple
	uncoverable string        // first reason allow rules cannot apply; empty if they can
	dangers     []string      // built-in dangerous commands found
	writes      []writeTarget // files the command writes (redirections, tee, …): judged as write_file
	// maybeWrites: files named on the command line of a program whose
	// writing options are not modelled (possibleWrites): a write_file
	// deny or ask rule on one asks.
	maybeWrites []writeTarget
	// ungrantable: why no grant may cover the command either (it runs
	// code nobody was shown, e.g. a local repository's hooks); empty if
	// grants apply.
	ungrantable string
	// unread: what the command can run that the reading could not see (a
	// value bash evaluates at run time, a script read from a descriptor,
	// code in a language the policy does not read). The reading is
	// closed-world: with any of these it is incomplete, and an incomplete
	// reading is never an allow, in any mode (decideBash step 2).
	unread []string
	// assigned: the variables the command assigns that the reading saw
	// (values.go), which a run of the command may change.
	assigned map[string]bool
	// reads: operands and input redirections that may name files the
	// command reads, for the read_file rules (reads.go); readsCut: more
	// than maxMentions.
	reads    []readMention
	readsCut bool
	// trees: reads of files the command does not name (a glob, a
	// directory's files, grep -r's "."), for the read_file rules
	// (unnamed.go); treeHits caches their judgment.
	trees    []treeRead
	treeHits *treeHits
	// writeTreeHits caches the judgment of the tree writes (writeTarget.tree)
	// against the write_file rules.
	writeTreeHits *treeHits
	// unjudged: why a file the command reads cannot be checked against
	// the read_file rules (the first reason): a program run on file
	// names read from input (xargs cat), an operand set to a value the
	// policy cannot see (operandvalues.go); "" if none.
	unjudged string
}

// cannotRead records that the reading is incomplete: never allowed, by
// rules, grants or mode full, and shown on the approver's Runs: line as
// unknown code.
func (a *analysis) cannotRead(why string) {
	a.refuseGrant(why)
	if len(a.unread) < maxUnread && !contains(a.unread, why) {
		a.unread = append(a.unread, why)
	}
}

// maxUnread bounds the reasons kept (the first is enough to ask; a few
// help the approver).
const maxUnread = 8

// refuseGrant keeps both allow rules and grants from covering the command.
func (a *analysis) refuseGrant(why string) {
	a.refuseAllow(why)
	if a.ungrantable == "" {
		a.ungrantable = why
	}
}

// unjudgedRead records why a file the command reads cannot be checked
// against the read_file rules; the first reason is kept. With read rules
// the command asks, in every mode (unjudgedVerdict).
func (a *analysis) unjudgedRead(why string) {
	if a.unjudged == "" {
		a.unjudged = why
	}
}

func (a *analysis) refuseAllow(why string) {
	if a.uncoverable == "" {
		a.uncoverable = why
	}
}

func (a *analysis) danger(why string) {
	for _, d := range a.dangers {
		if d == why {
			return
		}
	}
	a.dangers = append(a.dangers, why)
}

// maxCommands bounds the simple commands one analysis records (wrappers
// with unknown options fan out into candidates); past it the command is
// treated as unknown, which never allows.
const maxCommands = 2000

// maxScripts bounds the nested scripts (bash -c '…', vim -c '!…', git -c
// alias.x='!…') one analysis parses: each is a parse of its own, and past
// it the rest is unknown, which never allows.
const maxScripts = 256

// analyzer walks a command line; cwd and workspace resolve relative paths.
type analyzer struct {
	a   *analysis
	cwd string
	// cwds: after cd to literal directories, every directory the command
	// may then be in (the cd may not have run: cd out || true); nil when
	// a cd the policy cannot follow ran. Only read when cwd is "".
	cwds []string
	// implied: the write being recorded is writeTarget.implied.
	implied bool
	// tree, treeHere: the write being recorded is writeTarget.tree, and
	// writeTarget.here.
	tree, treeHere bool
	// treeFrom: the directory whose files the tree being recorded
	// receives (writeTarget.from).
	treeFrom string
	// optionUnknown: the simple command being read has an option its
	// program's table does not know (unknownOption), so its writes are
	// not modelled either (possibleWrites).
	optionUnknown bool
	// madePaths: what cp, mv, ln and the like made earlier in the line.
	madePaths []string
	// linksMade: the first command earlier in the line that may have
	// made links from data (tar -x, unzip, patch, git checkout:
	// makesLinks), so a later read may follow one the policy never saw;
	// opensNone: the command being read opens none of its operands
	// (readsNoOperand).
	linksMade string
	opensNone bool
	// linkedPaths: what cp -a, mv and rsync -a put at a name the command
	// gives, which may be a link they found.
	linkedPaths  []string
	workspace    string
	protected    []string
	budget       int                        // simple commands still allowed to be recorded
	scripts      int                        // nested scripts parsed so far (maxScripts)
	braces       int                        // brace-expanded words still allowed to be made
	guessing     int                        // > 0 while analysing what a guessed command runs
	realWS       string                     // workspace with symlinks resolved; see realWorkspace
	piped        map[*syntax.BinaryCmd]bool // pipelines already looked at as part of a longer one
	dlPiped      map[*syntax.BinaryCmd]bool // the same, for pipedDownload
	dz           dangerState                // carried between commands for the danger checks (danger_paths.go)
	madeDirs     bool                       // a mkdir ran earlier in the line (gitremote.go)
	gitBefore    int                        // the writes recorded before the git command being analysed (gitChdir)
	names        map[*syntax.Stmt][]string  // compoundNames' answers
	expanded     [8]expandedEntry           // wordsOf's recent answers
	nextExpanded int                        // the entry the next answer replaces
	values       valueState                 // assignments and evaluated uses (values.go)
	// redirWrites: for a simple command, the writes its own redirections
	// recorded (z.a.writes[from:to]), which bash opens before it runs;
	// ownWrites is that range for the command being analysed. A test
	// runner's own > out/log is its output, not code it runs
	// (writtenSources).
	redirWrites map[*syntax.CallExpr][2]int
	ownWrites   [2]int
	// dashVars: variables the command assigns a value with a field that
	// starts with "-" (dashExpansion); dashAny: a value holding "-"
	// anywhere, which counts once the command sets IFS (ifsSet).
	dashVars map[string]bool
	dashAny  map[string]bool
	ifsSet   bool
}

func analyzeCommand(command, cwd, workspace string, protected []string) *analysis {
	z := &analyzer{a: &analysis{}, cwd: cwd, workspace: workspace, protected: protected, budget: maxCommands, braces: maxBraceBudget}
	if cwd == "" {
		z.cwd = workspace
	}
	if z.cwd == "" {
		// No directory given (Programs): relative paths stay unresolved,
		// which is no cd the policy could not follow.
		z.cwds = []string{""}
	}
	if strings.Trim(command, " \t\n") == "" { // the shell's blanks, not Unicode's
		z.a.refuseAllow("empty command")
		return z.a
	}
	z.script(command, 0, true)
	z.judgeValues()
	z.judgeOperandValues()
	return z.a
}

// script parses src and records everything in it. Nested scripts (depth > 0)
// never count as outer commands.
func (z *analyzer) script(src string, depth int, outer bool) {
	if depth > maxDepth {
		z.unknown("commands nested too deeply to analyse")
		return
	}
	if depth > 0 {
		if z.scripts++; z.scripts > maxScripts {
			if z.scripts == maxScripts+1 {
				z.unknown(fmt.Sprintf("more than %d nested scripts to analyse", maxScripts))
			}
			return
		}
	}
	f, err := parseShell(src)
	if err != nil {
		if depth == 0 {
			z.a.parseErr = err
		}
		z.a.refuseAllow("a nested script does not parse: " + err.Error())
		for _, words := range crudeCommands(src) {
			z.command(simple{words: words}, depth+1)
		}
		return
	}
	z.bashReadings(f, src, depth)
	if depth > 0 {
		z.values.positionals = true // bash -c SCRIPT ARG…: the caller's words are its $0, $1 …
	}
	z.file(f, depth, outer)
}

// digitTarget refuses to allow a redirection whose target is all digits
// with another redirection right after it, as in `cat<0<000`: the parser
// reads the file "0", bash reads the digits as the next redirection's file
// descriptor (and here rejects the line). Written with a blank between
// them, both read the same.
func (z *analyzer) digitTarget(r *syntax.Redirect, src string) {
	if r.Word == nil || !isDigits(r.Word.Lit()) {
		return
	}
	if end := int(r.Word.End().Offset()); end < len(src) && (src[end] == '<' || src[end] == '>') {
		z.a.refuseAllow("a redirection to a file named by digits right before another redirection, which bash reads as a file descriptor")
	}
}

// heredocEnd refuses to allow a here-document whose text, as the parser
// delimited it, does not end in a line holding exactly its delimiter
// (after the leading tabs `<<-` strips): there the parser ended the
// document somewhere bash does not (bash reads on to the next such line,
// or to the end of the input), so the two disagree on which lines are text
// and which are commands.
func (z *analyzer) heredocEnd(r *syntax.Redirect, src string) {
	if r.Hdoc == nil || (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) {
		return
	}
	start, end := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
	delim, literal := heredocDelimiter(r.Word)
	if !literal || start > end || end > len(src) {
		z.a.refuseAllow("a here-document whose end cannot be checked")
		return
	}
	text := src[start:end]
	last := text[strings.LastIndexByte(text, '\n')+1:]
	if r.Op == syntax.DashHdoc {
		last = strings.TrimLeft(last, "\t")
	}
	if last != delim {
		z.a.refuseAllow("a here-document the parser ends where bash does not (no line " + strconv.Quote(delim) + " there)")
	}
}

// heredocDelimiter is the delimiter bash compares lines with: the word with
// its quotes removed. literal is false for anything else (an expansion).
func heredocDelimiter(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	var lits func(parts []syntax.WordPart) bool
	lits = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(strings.ReplaceAll(p.Value, "\\", ""))
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !lits(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	ok := lits(w.Parts)
	return b.String(), ok
}

// unknown records a command whose text cannot be known: it could be
// anything, so any deny rule could match it.
func (z *analyzer) unknown(why string) {
	z.a.cannotRead(why)
	z.a.cmds = append(z.a.cmds, simple{words: []word{{loose: anyText, splat: true}}})
}

// operandsAreInner reports whether name's operands are the command it
// runs (timeout 5 ls ., bash -c 'ls' ., eval ls .), not its own. A program
// that runs something through an option or as its transport (zip -TT,
// tar --checkpoint-action, rsync -e, scp's ssh, find -exec, git -c)
// still reads what its operands name: zip -r -TT 'unzip -t' out/a.zip .
// archives .env.
func operandsAreInner(name string) bool {
	if _, ok := wrapperSpec(name); ok || isShell(name) {
		return true
	}
	switch name {
	case "eval", "alias", "trap", "source", ".", "sg", "capsh":
		return true
	}
	return false
}

// inner analyses what the wrapper name runs on behalf of its words.
func (z *analyzer) inner(name string, in inner, depth int) {
	switch {
	case in.opaque != "":
		z.opaque(in.opaque)
	case in.scriptUnknown:
		z.unknown(name + " runs a script that is not literal")
	case in.script != "":
		z.script(in.script, depth+1, false)
	default:
		z.command(simple{words: in.words, guess: z.guessing > 0, transport: in.transport}, depth+1)
	}
}

// keepDirs returns what puts the analysis back where the shell is now
// (its directories as the cds so far left them), for a command that runs
// somewhere else while the shell stays (git -C, find -execdir).
func (z *analyzer) keepDirs() (back func()) {
	cwd, cwds, moved, dirs, lost := z.cwd, z.cwds, z.dz.moved, z.dz.dirs, z.dz.lostDir
	return func() { z.cwd, z.cwds, z.dz.moved, z.dz.dirs, z.dz.lostDir = cwd, cwds, moved, dirs, lost }
}

// loseDir forgets where the shell is, as a cd to a place not known until
// run time does, for a command that runs elsewhere (inner.elsewhere); it
// returns what puts the directories back.
func (z *analyzer) loseDir() (back func()) {
	back = z.keepDirs()
	z.cwd, z.cwds, z.dz.moved, z.dz.lostDir = "", nil, true, true
	return back
}

// opaque records a program the option via may start that the policy
// cannot name: never allowed, and shown to the approver as such.
func (z *analyzer) opaque(via string) {
	z.a.cannotRead(via + " (it may run a program the policy cannot name)")
	z.a.cmds = append(z.a.cmds, simple{words: []word{{}}, via: via})
}

func (z *analyzer) file(f *syntax.File, depth int, outer bool) {
	z.walk(f, depth, outer)
}

// walk records everything in n: a parsed script, or a word bash expands.
func (z *analyzer) walk(node syntax.Node, depth int, outer bool) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			z.stmt(n, depth)
		case *syntax.CallExpr:
			if len(n.Assigns) > 0 {
				z.a.refuseAllow("a variable assignment")
			}
			for _, as := range n.Assigns {
				if as.Name != nil {
					z.arithmetic(as.Index, depth)
				}
				if as.Name != nil && as.Append {
					z.noteWords(as.Name.Value, nil) // f+=x: the old value and x, which no word holds
				}
				switch {
				case as.Name != nil && as.Value != nil:
					z.assignment(as.Name.Value, valueWord(as.Value), depth)
					if len(n.Args) > 0 || z.values.allExport {
						z.environmentFiles(valueWord(as.Value)) // VAR=FILE cmd, set -a; VAR=FILE
					}
				case as.Name != nil && as.Array != nil:
					var elems []word
					for _, el := range as.Array.Elems {
						if el.Value != nil {
							elems = append(elems, wordOf(el.Value))
							z.noteDash(as.Name.Value, wordOf(el.Value).loose)
						}
					}
					if len(elems) == 0 {
						elems = []word{{}} // a=(): empty
					}
					z.noteValue(as.Name.Value, arrayFacts(as.Array), elems...)
				}
			}
			ws := z.wordsOf(n.Args)
			if len(ws) == 0 {
				return true
			}
			z.operandVariables(n.Args, ws)
			z.globOptions(n.Args, ws)
			s := simple{words: ws, outer: outer, guess: z.guessing > 0}
			saved := z.ownWrites
			z.ownWrites = z.redirWrites[n]
			z.command(s, depth)
			z.ownWrites = saved
			z.substFedToInterpreter(n)
		case *syntax.CmdSubst:
			z.a.refuseAllow("a command substitution")
		case *syntax.ProcSubst:
			z.a.refuseAllow("a process substitution")
		case *syntax.ParamExp:
			z.a.refuseAllow("a parameter expansion")
			z.paramValues(n)
			z.arithmetic(n.Index, depth)
			if n.Slice != nil {
				z.arithmetic(n.Slice.Offset, depth)
				z.arithmetic(n.Slice.Length, depth)
			}
		case *syntax.ArithmExp:
			z.a.refuseAllow("arithmetic evaluation")
			z.arithmetic(n.X, depth)
		case *syntax.ArithmCmd:
			z.a.refuseAllow("arithmetic evaluation")
			z.arithmetic(n.X, depth)
		case *syntax.LetClause:
			z.a.refuseAllow("arithmetic evaluation")
			for _, x := range n.Exprs {
				z.arithmetic(x, depth)
			}
		case *syntax.ArrayElem:
			// a=([i]=v …): i is evaluated, and v may be (declare -i a=(…)).
			z.arithmetic(n.Index, depth)
			if n.Value != nil {
				z.expansions(wordOf(n.Value).loose, depth)
			}
		case *syntax.CStyleLoop:
			z.a.refuseAllow("arithmetic evaluation")
			z.arithmetic(n.Init, depth)
			z.arithmetic(n.Cond, depth)
			z.arithmetic(n.Post, depth)
		case *syntax.TestClause:
			z.a.refuseAllow("a [[ ]] test (it evaluates arithmetic)")
			z.testClause(n, depth)
		case *syntax.FuncDecl:
			z.a.refuseAllow("a function definition")
			z.forkBomb(n)
			z.values.positionals = true // a call gives its body $1, $2 …
		case *syntax.DeclClause:
			z.a.refuseAllow("a declaration (" + n.Variant.Value + ")")
			z.declClause(n, depth)
			z.a.cmds = append(z.a.cmds, simple{words: []word{{lit: n.Variant.Value, ok: true, loose: n.Variant.Value}}})
		case *syntax.CoprocClause:
			z.a.refuseAllow("a coprocess")
		case *syntax.ForClause:
			// The loop variable is an assignment (for PATH in …).
			z.a.refuseAllow("a for/select loop (it assigns a variable)")
			z.loopValues(n)
			z.loopReads(n)
		case *syntax.ExtGlob:
			z.a.refuseAllow("an extended glob")
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				z.pipeline(n, depth)
			}
		}
		return true
	})
}

func (z *analyzer) stmt(st *syntax.Stmt, depth int) {
	if st.Background || st.Coprocess || st.Disown {
		z.a.refuseAllow("a background command (&)")
	}
	var name string
	stdinScript := false
	if call, ok := st.Cmd.(*syntax.CallExpr); ok {
		if ws := z.wordsOf(call.Args); len(ws) > 0 {
			name = cmdName(ws[0])
			stdinScript = z.readsScript(ws)
			if from := feedsStdin(st); from != "" && z.commandsFromStdin(name, ws) {
				z.a.cannotRead(name + " reads its program from " + from)
			}
		}
	}
	start := len(z.a.writes)
	for _, r := range st.Redirs {
		z.redirect(r, name, stdinScript, depth)
	}
	if call, ok := st.Cmd.(*syntax.CallExpr); ok && len(z.a.writes) > start {
		if z.redirWrites == nil {
			z.redirWrites = map[*syntax.CallExpr][2]int{}
		}
		z.redirWrites[call] = [2]int{start, len(z.a.writes)}
	}
	z.stmtDangers(st)
}

// readsScript reports whether the command (or what it wraps) is a shell
// that takes its script from stdin: sh, bash -s, sudo bash, at, batch.
func (z *analyzer) readsScript(ws []word) bool {
	if len(ws) == 0 {
		return false
	}
	for _, cand := range append([][]word{ws}, z.innerWords(cmdName(ws[0]), ws)...) {
		if len(cand) == 0 {
			continue
		}
		switch n := cmdName(cand[0]); {
		case n == "at" || n == "batch":
			return !hasLong(cand[1:], "-f")
		case isShell(n) && readsStdin(cand):
			return true
		}
	}
	return false
}

func (z *analyzer) redirect(r *syntax.Redirect, cmd string, stdinScript bool, depth int) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		body := r.Hdoc
		if r.Op == syntax.WordHdoc {
			body = r.Word
		}
		if cmd == "" || alwaysRunsCode(cmd) || cmd != path.Base(cmd) {
			z.a.refuseAllow("a here-document fed to " + orUnknown(cmd))
		}
		if body != nil && (cmd == "read" || cmd == "mapfile" || cmd == "readarray") {
			// What read assigns may be evaluated later (PS4, declare -i).
			z.expansions(wordOf(body).loose, depth)
		}
		if stdinScript && body != nil {
			// The body is the script: check it like the command line.
			w := wordOf(body)
			if w.known() {
				z.script(w.loose, depth+1, false)
			} else {
				z.unknown("a here-document with expansions fed to a shell")
			}
		}
		return
	case syntax.DplIn, syntax.DplOut:
		w := wordOf(r.Word)
		if w.ok && (w.lit == "-" || isDigits(w.lit) || isDigits(strings.TrimSuffix(w.lit, "-"))) {
			return // a file descriptor duplicated, moved or closed
		}
	}
	targets := []*syntax.Word{r.Word}
	if z.braces <= 0 && r.Word != nil && mayBrace(r.Word) && braceish(r.Word) {
		z.a.refuseAllow("a brace expansion in a redirection target")
		return
	}
	if alts, expanded, ok := braceExpand(r.Word); expanded || (r.Word != nil && braceish(r.Word)) {
		z.braces -= max(len(alts), 1)
		if !ok {
			z.braces -= maxBraceWords
		}
		// Bash brace-expands a redirection target; more than one word is
		// an error ("ambiguous redirect"). Never allowed either way, but
		// each word is judged so rules on the paths still apply.
		z.a.refuseAllow("a brace expansion in a redirection target")
		if !ok || !expanded {
			return
		}
		targets = alts
	}
	for _, t := range targets {
		z.redirectTarget(r.Op, wordOf(t))
		if r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut {
			z.inputVariable(t) // cat < $f
		}
		if w := wordOf(t); stdinScript && (r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut) && (r.N == nil || r.N.Value == "0") && w.loose != "/dev/null" {
			// sh < FILE runs what FILE holds, as python3 < FILE does
			// (interpreterCode): a program nobody named on the line,
			// so the reading is incomplete whatever the file.
			z.a.cannotRead(orUnknown(cmd) + " reads its program from " + clip(printable(w.loose), 60))
		}
	}
}

func (z *analyzer) redirectTarget(op syntax.RedirOperator, w word) {
	if (op == syntax.RdrIn || op == syntax.RdrInOut) && w.ok {
		z.mention(w.lit)
	}
	if (op == syntax.RdrIn || op == syntax.RdrInOut) && !w.ok && w.pat != "" {
		// bash expands a glob in a redirection (to one file, or fails):
		// a read of the file it may match. A directory there is not read.
		z.patternRead(w.pat, false, true)
	}
	writes := op != syntax.RdrIn
	if writes {
		z.dangerousWrite("writes to", w.loose)
		z.writeWord(w, "a redirection")
		return
	}
	if !w.ok {
		z.a.refuseAllow("a redirection to a path that is not literal")
		return
	}
	switch w.lit {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin":
		return
	}
	p, inside := z.resolve(w.lit)
	if !inside {
		z.a.refuseAllow("a redirection outside the workspace (" + w.lit + ")")
		return
	}
	// Judged where it lands: a link inside the workspace (a repository can
	// ship one) may lead out of it, or into .git.
	real, ok := realPath(p)
	if !ok || !within(real, z.realWorkspace()) {
		z.a.refuseAllow("a redirection through a symlink that leads outside the workspace (" + w.lit + ")")
		return
	}
}

// realWorkspace is the workspace with symlinks resolved (the agent already
// passes it so), for comparing with realPath's answers.
func (z *analyzer) realWorkspace() string {
	if z.realWS == "" {
		z.realWS = z.workspace
		if r, ok := realPath(z.workspace); ok {
			z.realWS = r
		}
	}
	return z.realWS
}

// realPath resolves the symlinks on the longest existing prefix of the
// absolute path p and appends the rest (which does not exist, so holds no
// links), each existing part named as its directory lists it (on a disk
// that folds case, .GIT/hooks is .git/hooks): realpath.Existing, the
// resolution the agent and the gateway make. ok is false when an existing
// part cannot be resolved: a dangling link would be created wherever it
// points.
func realPath(p string) (string, bool) {
	r, err := realpath.Existing(filepath.FromSlash(p))
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown command"
	}
	return s
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// resolve makes p absolute against the cwd and reports whether it lies
// inside the workspace.
func (z *analyzer) resolve(p string) (string, bool) {
	return resolveIn(p, z.cwd, z.workspace)
}

func resolveIn(p, cwd, workspace string) (string, bool) {
	if !path.IsAbs(p) {
		if cwd == "" || !path.IsAbs(cwd) {
			return "", false
		}
		p = cwd + "/" + p // not path.Join: it would clean "link/.." as text
	}
	p = kernelCleanIn(p, cwd, workspace)
	return p, within(p, workspace)
}

// within reports whether p is root or below it (both clean and absolute).
func within(p, root string) bool {
	if root == "" || !path.IsAbs(root) {
		return false
	}
	root = path.Clean(root)
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

func isGitInternal(p, workspace string) bool {
	rel := strings.TrimPrefix(p, path.Clean(workspace))
	return strings.Contains(rel+"/", "/.git/")
}

// command records a simple command and everything it runs on behalf of its
// words: wrappers (sudo, env, timeout, xargs, …) and scripts (bash -c, eval).
func (z *analyzer) command(s simple, depth int) {
	if len(s.words) == 0 {
		return
	}
	if z.budget <= 0 {
		if z.budget == 0 {
			z.budget--
			z.unknown("too many commands to analyse")
		}
		return
	}
	z.budget--
	z.a.cmds = append(z.a.cmds, s)
	if cmdName(s.words[0]) == "git" {
		defer z.gitChdir(s.words[1:])()
	}
	z.dangerous(s.words)
	if depth >= maxDepth {
		z.unknown("commands nested too deeply to analyse")
		return
	}
	name := cmdName(s.words[0])
	z.noteDir(name, s.words)
	if name == "" && !s.guess {
		z.a.cannotRead("a command whose name the policy cannot see (" + clip(printable(s.words[0].loose), 40) + ")")
	}
	switch name {
	case "cd", "pushd", "popd", "":
		// The directory changes (or might, for an unknown command): relative
		// paths after this point are judged in every directory the command
		// may be in, and cannot be resolved after a cd it cannot follow.
		z.changeDir(name, s.words[1:])
	}
	if !s.guess && shellMeta(name) {
		z.a.refuseAllow("the shell builtin " + name)
	}
	z.evaluatedArgs(name, s.words, depth)
	z.opensNone = readsNoOperand(name)
	defer func() {
		z.opensNone = false
		if z.linksMade == "" && !s.guess && makesLinks(name, s.words) {
			z.linksMade = name
		}
	}()
	firstRead, firstTree := len(z.a.reads), len(z.a.trees)
	z.mentionWords(s.words[1:])
	z.gitObjectReads(name, s.words[1:])
	z.treeOperands(name, s.words, firstRead)
	z.listedNames(name, s.words)
	firstWrite := len(z.a.writes)
	z.writtenSources(name, s.words[1:], firstWrite)
	outer := z.optionUnknown
	z.optionUnknown = false
	z.commandWrites(name, s.words, depth)
	if !s.guess {
		z.possibleWrites(name, s.words, firstWrite)
	}
	z.optionUnknown = outer
	z.notReadDests(name, s.words, firstRead, firstWrite)
	z.codeOptions(name, s.words)
	z.scriptFiles(name, s.words)
	z.interpreterCode(name, s.words)
	z.unmodelledCode(name, s.words)
	z.compgenCode(name, s.words[1:])
	z.deleteCommands(name, s.words[1:])
	z.configCommands(name, s.words[1:])
	if strings.Contains(s.words[0].loose, "/") {
		z.writtenScript(s.words[0], "the command")
	}
	z.shellStateCommands(name, s.words, depth)
	if name == "env" {
		z.envOperands(s.words, depth)
	}
	ins := z.unwrap(name, s.words)
	if len(ins) > 0 && operandsAreInner(name) {
		// A wrapper's operands are its command's: judged as that
		// program's (timeout 5 ls . lists names), not as the wrapper's.
		z.wrapperOperands(firstRead, firstTree)
	}
	if len(ins) == 0 && !s.guess {
		// Guesses only: the program's own operands stay its own
		// (mytool find . may read everything under . itself).
		ins = hiddenRuns(name, s.words)
	}
	for _, in := range ins {
		z.inputNames(name, in)
		if in.guess {
			z.guessing++
		}
		if in.elsewhere {
			back := z.loseDir()
			z.inner(name, in, depth)
			back()
		} else {
			z.inner(name, in, depth)
		}
		if in.guess {
			z.guessing--
		}
	}
}

// shellMeta names builtins that change how later words are read or run
// code from strings or files: never covered by allow rules.
func shellMeta(name string) bool {
	switch name {
	case "eval", "source", ".", "alias", "unalias", "shopt", "enable", "hash", "trap",
		"builtin", "command", "exec", "set", "declare", "typeset", "export", "readonly",
		"local", "let", "unset", "coproc", "fc", "history", "bind", "complete", "mapfile", "readarray", "read", "getopts", "wait", "ulimit", "umask", "disown", "suspend", "caller":
		return true
	}
	return false
}

// cmdName is the command name a word would run, path stripped; "" if unknown.
func cmdName(w word) string {
	if !w.known() || w.splat {
		return ""
	}
	return path.Base(w.loose)
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "ash", "yash", "rbash", "posh", "lksh", "busybox":
		return true
	}
	return false
}

func isInterpreter(name string) bool {
	if isShell(name) {
		return true
	}
	switch name {
	case "fish", "csh", "tcsh", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit",
		"osascript", "pwsh", "powershell", "Rscript", "julia", "tclsh", "source", ".", "eval":
		return true
	}
	for _, p := range []string{"python", "pypy", "perl", "ruby", "php", "lua", "node"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func isDownloader(name string) bool {
	switch name {
	case "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "GET", "lynx", "links", "w3m", "nc", "ncat", "socat":
		return true
	}
	return false
}

// substFedToInterpreter flags `bash <(curl …)`, `sh -c "$(wget …)"`,
// `eval "$(curl …)"`: downloaded code run directly.
func (z *analyzer) substFedToInterpreter(call *syntax.CallExpr) {
	ws := z.wordsOf(call.Args)
	if len(ws) == 0 {
		return
	}
	names := []string{cmdName(ws[0])}
	for _, in := range z.unwrap(names[0], ws) {
		if len(in.words) > 0 {
			names = append(names, cmdName(in.words[0]))
		}
	}
	interp := false
	for _, n := range names {
		interp = interp || isInterpreter(n)
	}
	if !interp {
		return
	}
	for _, arg := range call.Args[1:] {
		if z.downloads(arg) {
			z.a.danger("runs code downloaded from the network (" + names[0] + " with a substitution of a download)")
			return
		}
	}
}

// downloads reports a downloader inside any substitution within n.
func (z *analyzer) downloads(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			ws := z.wordsOf(call.Args)
			if len(ws) == 0 {
				return true
			}
			if isDownloader(cmdName(ws[0])) {
				found = true
			}
			for _, w := range ws[1:] {
				if isDownloader(path.Base(w.loose)) {
					found = true // behind a wrapper: sudo curl, env curl
				}
			}
		}
		return !found
	})
	return found
}

// pipelineStages lists the stages of the pipeline b, in order, and marks
// in seen every inner pipeline it went through: a | b | c nests, and every
// statement is visited, so a caller that skips those already seen looks at
// each stage once (without that, n stages cost n²).
func pipelineStages(b *syntax.BinaryCmd, seen map[*syntax.BinaryCmd]bool) []*syntax.Stmt {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
			seen[bc] = true
			flatten(bc.X)
			flatten(bc.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(b.X)
	flatten(b.Y)
	return stages
}

// pipeline looks at `a | b`: downloaded code piped into an interpreter, and
// literal scripts piped into a shell (`echo 'rm -rf /' | sh`).
func (z *analyzer) pipeline(b *syntax.BinaryCmd, depth int) {
	if z.piped[b] {
		return
	}
	if z.piped == nil {
		z.piped = map[*syntax.BinaryCmd]bool{}
	}
	stages := pipelineStages(b, z.piped)
	downloaded := false
	for i, st := range stages {
		names := z.stageNames(st)
		if downloaded {
			for _, n := range names {
				if isInterpreter(n) {
					z.a.danger("pipes a download into " + n)
				}
			}
		}
		for _, n := range names {
			if isDownloader(n) {
				downloaded = true
			}
		}
		if i == 0 {
			continue
		}
		// A shell reading its script from the pipe.
		shellReadsStdin := false
		if call, ok := st.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			shellReadsStdin = z.readsScript(z.wordsOf(call.Args))
			if ws := z.wordsOf(call.Args); len(ws) > 0 && z.commandsFromStdin(cmdName(ws[0]), ws) {
				z.a.cannotRead(cmdName(ws[0]) + " reads its program from a pipe")
			}
		}
		if !shellReadsStdin {
			continue
		}
		z.a.refuseAllow("a script piped into a shell")
		prev, ok := stages[i-1].Cmd.(*syntax.CallExpr)
		if !ok || len(prev.Args) == 0 {
			z.a.cannotRead("a script piped into a shell from a compound command")
			continue
		}
		ws := z.wordsOf(prev.Args)
		if len(ws) == 0 {
			continue
		}
		switch cmdName(ws[0]) {
		default:
			z.a.cannotRead("a script piped into a shell from " + orUnknown(cmdName(ws[0])))
		case "echo", "printf":
			var parts []string
			known := true
			for _, w := range ws[1:] {
				if strings.HasPrefix(w.loose, "-") && len(parts) == 0 && cmdName(ws[0]) == "echo" {
					continue
				}
				known = known && w.known()
				parts = append(parts, w.loose)
			}
			if !known {
				z.unknown("a script with expansions piped into a shell")
				continue
			}
			src := strings.Join(parts, " ")
			src = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(src)
			z.script(src, depth+1, false)
		}
	}
}

// stageNames names the programs of one statement: for a simple command,
// its name and what it wraps; for a compound one (a group, a chain, a
// loop), the first program in it and the interpreters and downloaders
// anywhere in it, which is all the callers ask about.
func (z *analyzer) stageNames(st *syntax.Stmt) []string {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return z.compoundNames(st)
	}
	ws := z.wordsOf(call.Args)
	if len(ws) == 0 {
		return nil
	}
	names := []string{cmdName(ws[0])}
	for _, in := range z.innerWords(names[0], ws) {
		if len(in) > 0 {
			names = append(names, cmdName(in[0]))
		}
	}
	return names
}

// readsStdin reports whether a shell invocation takes its script from stdin
// (no -c and no script file).
func readsStdin(ws []word) bool {
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		switch {
		case l == "-s" || l == "-":
			return true
		case l == "-o" || l == "+o" || l == "-O" || l == "+O":
			i++
		case strings.HasPrefix(l, "--"):
		case strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+"):
			if strings.Contains(l, "c") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// wordsOf converts parsed words, brace-expanded as bash would: one parsed
// word may become several, or none ({,}).
func wordsOf(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		out = append(out, expandedWords(w)...)
	}
	return out
}

func wordOf(w *syntax.Word) word {
	if w == nil || len(w.Parts) == 0 {
		return word{loose: anyText}
	}
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[~{") {
			return word{lit: l.Value, ok: true, loose: l.Value}
		}
	}
	var out word
	lit, why := literalWord(w)
	if why == "" {
		out.lit, out.ok = lit, true
	}
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if braceLike(p.Value) {
				out.splat = true
			}
			looseUnquoted(&b, p.Value, i == 0)
		case *syntax.SglQuoted:
			if p.Dollar {
				if s, ok := decodeANSIC(p.Value); ok {
					b.WriteString(s)
				} else {
					b.WriteString(anyText)
				}
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					dquotedLit(&b, q.Value)
				case *syntax.ParamExp:
					b.WriteString(paramLoose(q))
				default:
					b.WriteString(anyText)
				}
			}
		case *syntax.ParamExp:
			b.WriteString(paramLoose(p))
			out.splat = true
		case *syntax.CmdSubst:
			b.WriteString(anyText)
			out.splat = true
		default:
			b.WriteString(anyText)
		}
	}
	out.loose = b.String()
	if !out.ok {
		out.pat = globPattern(w)
	}
	return out
}

// paramLoose keeps $HOME recognisable as ~ for the danger checks.
func paramLoose(p *syntax.ParamExp) string {
	if p.Param != nil && p.Param.Value == "HOME" && p.Exp == nil && p.Repl == nil && p.Slice == nil &&
		p.Index == nil && !p.Length && !p.Excl && p.NestedParam == nil {
		return "~"
	}
	return anyText
}

// looseUnquoted is unquotedLit without refusing: globs and braces become
// anyText, backslashes are removed, a tilde is kept.
func looseUnquoted(b *strings.Builder, v string, first bool) {
	if braceLike(v) {
		b.WriteString(anyText)
		return
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i])
			}
			continue
		case '*', '?':
			b.WriteString(anyText)
			continue
		case '[':
			if j := strings.IndexByte(v[i+1:], ']'); j >= 0 {
				b.WriteString(anyText)
				i += j + 1
				continue
			}
		}
		b.WriteByte(c)
	}
}

// decodeANSIC decodes the body of $'…'.
func decodeANSIC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j < i+1+max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:j], 16, 32)
			if err != nil {
				return "", false
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 16)
				b.WriteByte(byte(n))
				i = j - 1
			} else {
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// crudeCommands splits text that does not parse into rough commands at shell
// operators, for deny checks only: it never makes anything allowed.
func crudeCommands(src string) [][]word {
	var out [][]word
	seg := strings.FieldsFunc(src, func(r rune) bool {
		return strings.ContainsRune(";&|()`\n{}<>", r)
	})
	unquote := strings.NewReplacer(`'`, "", `"`, "", `\`, "") // one per call: building it costs more than using it
	for _, s := range seg {
		var ws []word
		for _, f := range strings.Fields(s) {
			f = unquote.Replace(f)
			if f == "" {
				continue
			}
			w := word{}
			if i := strings.IndexByte(f, '$'); i >= 0 {
				f, w.splat = f[:i]+anyText, true
			}
			var b strings.Builder
			looseUnquoted(&b, f, false)
			w.loose = b.String()
			ws = append(ws, w)
		}
		if len(ws) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

// forkBomb flags a function that calls itself in a pipeline or in the
// background: `:(){ :|:& };:` and its renamings.
func (z *analyzer) forkBomb(fn *syntax.FuncDecl) {
	if fn.Name == nil || fn.Body == nil {
		return
	}
	name := fn.Name.Value
	self, spawns := false, false
	syntax.Walk(fn.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 && wordOf(n.Args[0]).loose == name {
				self = true
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				spawns = true
			}
		case *syntax.Stmt:
			if n.Background {
				spawns = true
			}
		}
		return true
	})
	if self && spawns {
		z.a.danger(fmt.Sprintf("a fork bomb (function %q spawns itself)", name))
	}
}

// maxNamesKept bounds the interpreters and the downloaders compoundNames
// keeps for one statement (beyond the first program).
const maxNamesKept = 4

// compoundNames is stageNames for a compound statement. Every statement is
// asked about (stmtDangers), and a compound one holds all those inside
// it: walking each afresh cost the square of the nesting (10,000 `&&`
// took a minute). One walk of the outermost statement records the answer
// for every statement inside it, built from its children's.
func (z *analyzer) compoundNames(st *syntax.Stmt) []string {
	if names, ok := z.names[st]; ok {
		return names
	}
	if z.names == nil {
		z.names = map[*syntax.Stmt][]string{}
	}
	type frame struct {
		node   syntax.Node
		names  []string
		interp int // interpreters kept
		dl     int // downloaders kept
	}
	add := func(f *frame, n string, first bool) {
		switch {
		case first && len(f.names) == 0:
		case isInterpreter(n) && f.interp < maxNamesKept && !contains(f.names[1:], n):
			f.interp++
		case isDownloader(n) && f.dl < maxNamesKept && !contains(f.names[1:], n):
			f.dl++
		default:
			return
		}
		f.names = append(f.names, n)
	}
	var stack []*frame
	syntax.Walk(st, func(n syntax.Node) bool {
		if n == nil {
			done := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if s, ok := done.node.(*syntax.Stmt); ok {
				z.names[s] = done.names
			}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				for i, name := range done.names {
					add(parent, name, i == 0)
				}
			}
			return true
		}
		if s, ok := n.(*syntax.Stmt); ok && s != st {
			if names, ok := z.names[s]; ok {
				// Already known (a statement seen through another path).
				for i, name := range names {
					add(stack[len(stack)-1], name, i == 0)
				}
				return false
			}
		}
		f := &frame{node: n}
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			add(f, cmdName(wordOf(c.Args[0])), true)
		}
		stack = append(stack, f)
		return true
	})
	return z.names[st]
}

// globOptions: a glob bash expands to file names that may begin with "-"
// (a file named -o.env, which any repository can ship or an earlier
// command can make) is read by the program as options: sort * then runs
// sort -o.env and writes .env. Before a "--", such a word is options the
// policy cannot read. echo's options (-n, -e, -E) do nothing but shape
// its output.
func (z *analyzer) globOptions(args []*syntax.Word, ws []word) {
	if cmdName(ws[0]) == "echo" {
		return
	}
	for _, w := range args[1:] {
		if l, ok := literalWord(w); ok == "" && l == "--" {
			return
		}
		if globMayBeOption(w) {
			z.a.cannotRead("a glob (" + clip(printable(wordOf(w).loose), 40) + ") may expand to file names read as options")
			return
		}
		if v := z.dashExpansion(w); v != "" {
			z.a.cannotRead("$" + v + " expands to an option (a word starting with -) that the program reads, which the policy did not read as one")
			return
		}
	}
}

// dashExpansion names the parameter a word starts with when the command
// itself gives it a value holding an option: x=-o.env; sort $x, a=(-o
// .env); sort "${a[@]}", sort ${1:--o.env} (the default is used when $1
// is unset). Each made sort write .env in mode full: the option tables
// read the word as a value the policy cannot see. Values from outside
// the command (the environment, read) are left as they were judged.
func (z *analyzer) dashExpansion(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	parts := unquoted(w.Parts)
	if len(parts) == 0 {
		return ""
	}
	p, ok := parts[0].(*syntax.ParamExp)
	if !ok || p.Param == nil {
		return ""
	}
	if p.Exp != nil && p.Exp.Word != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
			syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			if dashField(wordOf(p.Exp.Word).loose) {
				return p.Param.Value
			}
		}
	}
	_, quoted := w.Parts[0].(*syntax.DblQuoted)
	if z.dashVars[p.Param.Value] || !quoted && z.ifsSet && z.dashAny[p.Param.Value] {
		return p.Param.Value
	}
	return ""
}

// dashField reports a value one of whose blank-separated fields starts
// with "-" (unquoted, bash splits it into words).
func dashField(v string) bool {
	for _, f := range strings.Fields(v) {
		if strings.HasPrefix(f, "-") {
			return true
		}
	}
	return false
}

// noteDash records that the command gives name a value holding an option.
func (z *analyzer) noteDash(name string, v string) {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if name == "IFS" {
		// IFS=, makes a,-o.env two words: any "-" may start one.
		z.ifsSet = true
	}
	if strings.Contains(v, "-") {
		if z.dashAny == nil {
			z.dashAny = map[string]bool{}
		}
		z.dashAny[name] = true
	}
	if !dashField(v) {
		return
	}
	if z.dashVars == nil {
		z.dashVars = map[string]bool{}
	}
	z.dashVars[name] = true
}

// globMayBeOption reports a word whose first character is a glob that can
// match "-": *, ?, […] or an extended glob.
func globMayBeOption(w *syntax.Word) bool {
	if w == nil || len(w.Parts) == 0 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.ExtGlob:
		return true
	case *syntax.Lit:
		if p.Value != "" && p.Value[0] == '{' {
			return strings.ContainsAny(p.Value, "*?[") // {*,x}: a brace whose words may start with a glob
		}
		return p.Value != "" && strings.IndexByte("*?[", p.Value[0]) >= 0
	}
	return false
}
