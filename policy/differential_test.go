package policy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// The differential test asks real bash how it parses a command and compares
// that with the policy's parse: the simple commands (assignments and words,
// by value) and the redirections (operator, target, here-document body), in
// order (shellView). Where the two differ, the policy judges one program and
// bash runs another.
//
// bash --pretty-print reads a script FILE and prints each command instead of
// running it. (With -c it runs the command: never pass the command that
// way.) Nothing in the command runs: substitutions are parsed, not
// executed; aliases are off in a non-interactive shell; a `shopt` or
// `alias` in the command is printed, not run. As a guard all the same, bash
// starts in an empty temporary directory with an empty environment (no
// PATH that leads anywhere, HOME in the temp dir) and a timeout, and
// bashReader checks once that a canary command is printed, not run.

// bashReader runs bash in parse-only mode in its own directory.
type bashReader struct {
	dir    string
	runner *bashRunner // runs the commands the policy allows
}

func newBashReader(t testing.TB) *bashReader {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &bashReader{dir: dir, runner: newBashRunner(t)}
	canary := filepath.Join(dir, "canary")
	printed, ok, err := r.read(t.Context(), "echo ran > "+canary+"; rm -f "+filepath.Join(dir, "script.sh"))
	if err != nil || !ok {
		t.Fatalf("bash --pretty-print does not work here (bash 5.1 or later is needed): %v %q", err, printed)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("bash ran the canary command in --pretty-print mode; refusing to feed it hostile commands")
	}
	if !strings.Contains(printed, "echo ran >") {
		t.Fatalf("bash --pretty-print printed %q for the canary command", printed)
	}
	return r
}

// read returns bash's own printing of src. ok is false when bash reports a
// syntax error (printed then holds its message).
func (r *bashReader) read(ctx context.Context, src string) (printed string, ok bool, err error) {
	script := filepath.Join(r.dir, "script.sh")
	if err := os.WriteFile(script, []byte(src+"\n"), 0o600); err != nil {
		return "", false, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "--pretty-print", script)
	cmd.Dir = r.dir
	cmd.Env = []string{"HOME=" + r.dir, "PATH=/nonexistent/askops-differential", "LC_ALL=C.UTF-8"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return "", false, fmt.Errorf("bash did not finish parsing: %w", ctx.Err())
	}
	if runErr != nil || stderr.Len() > 0 {
		return strings.TrimSpace(stderr.String()), false, nil
	}
	return stdout.String(), true, nil
}

// differential is the result of comparing bash's reading of one command
// with the policy's.
type differential struct {
	compared    bool         // bash was asked and its reading compared
	bashErr     string       // bash rejected the command as a syntax error
	problem     string       // the readings differ: what and how
	bashReading *syntax.File // bash's reading of the command (its printing parsed), when compared
	ran         bool         // the command was also run in the runner
}

// compare asks bash how it reads command and compares that with the
// policy's parse. When the policy allows the command (allowed), the two
// readings must be equal; otherwise every simple command bash would run
// must be among the policy's, so deny rules and danger checks see it (the
// policy may see more: reading a here-document body as code that bash
// takes as text only makes it stricter). For a command with characters where shells disagree, the
// policy's reading for deny rules is the bash-faithful rewrite, so that is
// what must match bash. Otherwise both the raw command and its canonical
// form (what the bash tool runs) must read, in bash, as the policy reads
// the raw command.
func (r *bashReader) compare(ctx context.Context, command string, allowed bool) (differential, error) {
	var d differential
	if strings.ContainsRune(command, 0) {
		return d, nil // cannot be passed to bash -c at all
	}
	f, err := parseShell(command)
	if err != nil {
		return d, nil // never allowed; nothing to compare
	}
	_, unsafe := findUnsafe(command)
	want := shellView(f)
	if unsafe {
		g, err := parseShell(bashFaithful(command))
		if err != nil {
			return d, nil
		}
		want = shellView(g)
	}
	texts := []string{command}
	if !unsafe {
		if c, err := Canonical(command); err == nil && c != command {
			texts = append(texts, c)
		}
	}
	for i, text := range texts {
		printed, ok, err := r.read(ctx, text)
		if err != nil {
			return d, err
		}
		d.compared = true
		if !ok {
			d.bashErr = printed
			return d, nil
		}
		printed = undoBashPrinting(printed, command)
		if unsafe {
			printed = bashFaithful(printed)
		}
		g, err := parseShell(printed)
		if err != nil {
			// bash's printer drops the `;` before a group's `}` when the
			// last word ends in an escaped `&` (`{ ls \&;}` prints as
			// `{ ls \& }`, which bash itself would not read back).
			g, err = parseShell(strings.ReplaceAll(printed, "\\& }", "\\&; }"))
		}
		if err != nil {
			d.problem = fmt.Sprintf("the policy's parser cannot read bash's printing %q: %v", printed, err)
			return d, nil
		}
		got := shellView(g)
		if i == 0 {
			d.bashReading = g
		}
		if !slices.Equal(got, want) && (allowed || !commandsAmong(got, want)) && !slices.Equal(got, readWriteOnZero(want)) {
			which := "the command"
			if i > 0 {
				which = fmt.Sprintf("the canonical text %q", text)
			}
			d.problem = fmt.Sprintf("bash reads %s as\n\t%s\nbut the policy reads it as\n\t%s\n(bash printed %q)",
				which, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"), printed)
			return d, nil
		}
	}
	if !allowed || unsafe {
		// Only what the policy allows is safe to run (it never allows an
		// unsafe command; the test above passes some to see them read).
		return d, nil
	}
	an := analyzeCommand(command, "", "", nil)
	if !runnable(an) {
		return d, nil
	}
	// The canonical text when there is one: it is what the bash tool runs
	// (and the printing check above has read both alike).
	problem, err := r.runner.checkRun(ctx, texts[len(texts)-1], an)
	d.problem, d.ran = problem, err == nil
	return d, err
}

// bashPrograms names the programs of bash's reading: each simple
// command's first word after brace expansion, by its base name; words the
// shell decides at run time are left out.
func bashPrograms(f *syntax.File) []string {
	var names []string
	if f == nil {
		return nil
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			if ws := wordsOf(c.Args); len(ws) > 0 && cmdName(ws[0]) != "" {
				names = append(names, cmdName(ws[0]))
			}
		}
		return true
	})
	return names
}

// undoBashPrinting removes what bash's printer adds that is not in the
// command: its internal quoting byte CTLESC (0x01) before a control byte,
// the default name it gives an unnamed coprocess (which the parser would
// then read as a command name), and `! time` turned round.
func undoBashPrinting(printed, command string) string {
	var b strings.Builder
	for i := 0; i < len(printed); i++ {
		if printed[i] == 0x01 && i+1 < len(printed) {
			i++
		}
		b.WriteByte(printed[i])
	}
	printed = b.String()
	if !strings.Contains(command, "COPROC") {
		printed = strings.ReplaceAll(printed, "coproc COPROC ", "coproc ")
	}
	// bash prints `! time x` as `time ! x`, which it reads back but the
	// parser rejects; the policy never allows either (readings.go).
	// Only where a statement starts: in `printf time !` they are words.
	if strings.Contains(printed, "time") {
		timeBang := regexp.MustCompile(`(^|\n|[;&|({]\s*|\b(?:then|do|else)\s+)([ \t]*)time (-p )?! `)
		printed = timeBang.ReplaceAllString(printed, "$1$2! time $3")
	}
	return printed
}

// readWriteOnZero is a reading with its 1<> redirections as bash's printer
// shows them: it prints `1<>FILE` as `<> FILE` (its default for the
// output fds, where <>'s default is 0), so bash's printing of `echo
// 1<>/dev/null` reads back as fd 0, though bash opens fd 1. Only a reading
// differing by that alone is taken as the same.
func readWriteOnZero(view []string) []string {
	out := make([]string, len(view))
	for i, v := range view {
		out[i] = strings.Replace(v, "redir 1<> ", "redir 0<> ", 1)
	}
	return out
}

// commandsAmong reports whether every simple command in got is in want.
func commandsAmong(got, want []string) bool {
	for _, g := range got {
		if strings.HasPrefix(g, "cmd ") && !slices.Contains(want, g) {
			return false
		}
	}
	return true
}

func TestDifferentialReadsLikeBash(t *testing.T) {
	r := newBashReader(t)
	for _, tc := range []struct {
		command string
		differs bool // the raw parser's reading differs from bash's (the unsafe rewrite must fix it)
	}{
		{command: "ls -la | grep x > out/y 2>&1"},
		{command: `echo 'a b' "c $d" $'e\tf' <<<here`},
		{command: "cat <<EOF\nbody $x\nEOF\necho after"},
		{command: "ls # note \\\nrm -rf x", differs: true},
		{command: "ls \r# $(rm -rf x)", differs: true},
		{command: "ls \\\r\nrm -rf x", differs: true},
	} {
		d, err := r.compare(t.Context(), tc.command, true)
		if err != nil {
			t.Fatal(err)
		}
		if !d.compared || d.bashErr != "" || d.problem != "" {
			t.Errorf("compare(%q) = %+v, want the same reading as bash", tc.command, d)
		}
		if tc.differs {
			// Without the rewrite, the parser reads these otherwise than bash.
			f, err := parseShell(tc.command)
			if err != nil {
				continue
			}
			printed, ok, err := r.read(t.Context(), tc.command)
			if err != nil || !ok {
				t.Fatalf("bash read %q: %v %v", tc.command, ok, err)
			}
			g, err := parseShell(bashFaithful(printed))
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(shellView(f), shellView(g)) {
				t.Errorf("%q: the raw parse already reads like bash (%q); the case no longer shows a differential", tc.command, shellView(f))
			}
		}
	}
}

// FuzzDifferential: for every input the corpus engine allows, bash reads the
// command, and its canonical text, as the policy does.
func FuzzDifferential(f *testing.F) {
	for _, s := range []string{
		"ls -la", "echo 'a' \"b\" $'c' > out/x", "cat <<'EOF'\n$x\nEOF", "git status; git diff | head",
		"ls # c \\\nrm x", "ls \r# x", "echo {HOME}>/dev/null; ls", "ls | time -p echo x", "time -- ls", "find . -name '*.go' | sort | wc -l", "printf '%s\\n' a b >> out/log",
	} {
		f.Add(s)
	}
	for _, l := range readCorpus(f) {
		f.Add(l.command)
	}
	e, ws := corpusEngine(f)
	r := newBashReader(f)
	f.Fuzz(func(t *testing.T, command string) {
		v := e.Evaluate(t.Context(), corpusCall(command, ws, ""))
		if slices.Contains(v.Unread, failedReading) {
			// Read again without Evaluate's recovery: the panic and its stack.
			var grantErr error
			e.decide(t.Context(), corpusCall(command, ws, ModeAsk), ModeAsk, &grantErr)
			t.Fatalf("the policy failed reading %q", command)
		}
		if v.Decision != Allow {
			return
		}
		d, err := r.compare(t.Context(), command, true)
		if err != nil {
			t.Fatal(err)
		}
		if d.bashErr != "" {
			t.Fatalf("the policy allows %q (%s) but bash rejects it: %s", command, v.Reason, d.bashErr)
		}
		if d.problem != "" {
			t.Fatalf("the policy allows %q (%s), but %s", command, v.Reason, d.problem)
		}
	})
}

// The printing check cannot see a difference that bash's printer hides: it
// prints `echo {HOME}>/dev/null` and `ls | time -p echo x` unchanged, and
// the parser reads the printing as it read the command, though bash assigns
// HOME (a named file descriptor) and runs the program time (after `|`, time
// is no keyword). So an allowed command is also run, in real bash, in a
// sandbox where nothing can run: PATH leads nowhere, so every program bash
// would start calls command_not_found_handle instead, and the builtins the
// rules can allow (echo, printf, test, [, true, false, :) are functions.
// Both record the words they were called with and every variable as it
// then is; what bash ran must be among the commands the policy judged, and
// no variable may have changed but those the policy read as assigned.

// recordedBuiltins are the builtins the runner replaces with recording
// functions. A command the policy reads as another builtin or a keyword is
// not run (it would run for real).
var recordedBuiltins = []string{"echo", "printf", "test", "[", "true", "false", ":"}

// bashBuiltins lists bash's builtins and keywords, which a runner must not
// start for real.
func bashBuiltin(name string) bool {
	switch name {
	case "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete", "compopt",
		"continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export", "false", "fc",
		"fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd",
		"printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source",
		"suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset",
		"wait", ".", ":", "[", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while",
		"until", "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc":
		return true
	}
	return false
}

// ranCommand is one command bash started in the runner: its words and the
// variables that differed from the start at that moment.
type ranCommand struct {
	words   []string
	changed []string
}

// bashRunner runs commands in real bash with nothing runnable.
type bashRunner struct {
	dir string
}

const runnerPrelude = `__askops_n=0
__askops_rec() {
	local __askops_in=1
	__askops_n=$((__askops_n + 1))
	if ((__askops_n > 200)); then exit 99; fi
	local __askops_f="$__askops_dir/trace/$BASHPID.$__askops_n"
	{ builtin printf '%d\n' "$#"; builtin printf '%s\0' "$@"; declare -p; } >"$__askops_f"
}
command_not_found_handle() { __askops_rec "$@"; return 127; }
echo() { __askops_rec echo "$@"; builtin echo "$@"; }
printf() { __askops_rec printf "$@"; builtin printf "$@"; }
test() { __askops_rec test "$@"; builtin test "$@"; }
[() { __askops_rec [ "$@"; builtin [ "$@"; }
true() { __askops_rec true "$@"; builtin true "$@"; }
false() { __askops_rec false "$@"; builtin false; }
:() { __askops_rec : "$@"; builtin : "$@"; }
trap 'wait; __askops_rec __askops_exit' EXIT
# A loop of programs that are not found never returns to a recording
# function in this shell: count every simple command, in subshells too.
__askops_steps=0
set -o functrace
__askops_limit() { __askops_steps=-1000000; exit 98; } # the EXIT trap still records
trap '[[ -z $__askops_in ]] && ((++__askops_steps > 500)) && __askops_limit' DEBUG
declare -p >"$__askops_dir/before"
`

func newBashRunner(t testing.TB) *bashRunner {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prelude.sh"), []byte(runnerPrelude), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &bashRunner{dir: dir}
	ran, err := r.run(t.Context(), "echo {HOME}>/dev/null; ls -l; ls | time -p echo x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ran {
		got = append(got, strings.Join(c.words, " ")+" changed:"+strings.Join(c.changed, ","))
	}
	want := []string{" changed:HOME", "echo changed:HOME", "ls changed:HOME", "ls -l changed:HOME", "time -p echo x changed:HOME"}
	if !slices.Equal(got, want) {
		t.Fatalf("the bash runner's canary recorded %q, want %q", got, want)
	}
	return r
}

// runnable reports whether the runner may run command: every command the
// policy reads in it is a program bash would not find or a recorded
// builtin, so nothing in it runs for real.
func runnable(an *analysis) bool {
	for _, c := range an.cmds {
		name := cmdName(c.words[0])
		if name == "" || strings.Contains(c.words[0].loose, "/") || (bashBuiltin(name) && !slices.Contains(recordedBuiltins, name)) {
			return false
		}
	}
	return true
}

// judged reports whether the policy's analysis has a command that could be
// words: the same literal words, or a pattern with unknown parts (a file
// name from find -exec) that the words fit.
func judged(an *analysis, words []string) bool {
	for _, c := range an.cmds {
		if len(c.words) == len(words) && couldMatch(words, c.words, false) {
			return true
		}
	}
	return false
}

// checkRun runs text in the runner and reports the first thing bash did
// that the policy's reading of command (an) does not show: a program it
// did not judge, or a variable it changed. "" if there is none.
func (r *bashRunner) checkRun(ctx context.Context, text string, an *analysis) (string, error) {
	ran, err := r.run(ctx, text)
	if err != nil {
		return "", err
	}
	for _, c := range ran {
		unseen := slices.DeleteFunc(slices.Clone(c.changed), func(name string) bool { return an.assigned[name] })
		switch {
		case len(unseen) > 0:
			return fmt.Sprintf("running %q in bash changed the variables %q (by %q), which the policy does not read as assigned", text, unseen, c.words), nil
		case len(c.words) > 0 && !judged(an, c.words): // no words: the record bash makes as it exits
			return fmt.Sprintf("running %q in bash ran %q, which is not among the commands the policy judged", text, c.words), nil
		}
	}
	return "", nil
}

// volatileVariable names variables bash changes by itself.
func volatileVariable(name string) bool {
	switch name {
	case "BASH_COMMAND", "BASH_LINENO", "BASH_SOURCE", "BASH_ARGC", "BASH_ARGV", "BASH_SUBSHELL", "BASHPID",
		"FUNCNAME", "LINENO", "RANDOM", "SRANDOM", "SECONDS", "EPOCHREALTIME", "EPOCHSECONDS", "PIPESTATUS",
		"_", "HISTCMD", "BASH_REMATCH":
		return true
	}
	return strings.HasPrefix(name, "__askops_")
}

// declared splits `declare -p` output into name → line.
func declared(text string) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(text, "\ndeclare ") {
		line = strings.TrimPrefix(line, "declare ")
		_, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "=")
		vars[name] = line
	}
	return vars
}

// parseRecord reads one record of __askops_rec: the count of words, the
// words (each ended by NUL) and `declare -p` (returned as rest).
func parseRecord(data []byte) (c ranCommand, rest string, err error) {
	count, rest, _ := strings.Cut(string(data), "\n")
	var n int
	if _, err := fmt.Sscanf(count, "%d", &n); err != nil {
		return c, "", fmt.Errorf("a runner record %q: %v", count, err)
	}
	for range n {
		w, more, ok := strings.Cut(rest, "\x00")
		if !ok {
			return c, "", fmt.Errorf("a runner record is cut short: %q", data)
		}
		c.words, rest = append(c.words, w), more
	}
	return c, rest, nil
}

// run runs command in the sandbox and returns what it started, in no
// particular order (pipelines run in parallel).
func (r *bashRunner) run(ctx context.Context, command string) ([]ranCommand, error) {
	trace := filepath.Join(r.dir, "trace")
	work := filepath.Join(r.dir, "work")
	for _, d := range []string{trace, work} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{trace, filepath.Join(work, "out"), filepath.Join(work, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	script := filepath.Join(r.dir, "script.sh")
	if err := os.WriteFile(script, []byte(command+"\n"), 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", script)
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + work, "PATH=/nonexistent/askops-differential", "LC_ALL=C.UTF-8",
		"BASH_ENV=" + filepath.Join(r.dir, "prelude.sh"), "__askops_dir=" + r.dir}
	cmd.Stdin = nil
	_ = cmd.Run() // the exit status is the command's business
	// A command that loops is stopped; what it ran until then counts.
	killed := ctx.Err() != nil
	before, err := os.ReadFile(filepath.Join(r.dir, "before"))
	if err != nil {
		return nil, fmt.Errorf("the runner's prelude did not run: %w", err)
	}
	start := declared(string(before))
	entries, err := os.ReadDir(trace)
	if err != nil {
		return nil, err
	}
	var ran []ranCommand
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(trace, e.Name()))
		if err != nil {
			return nil, err
		}
		c, rest, err := parseRecord(data)
		if err != nil {
			if killed {
				continue // cut short when the run was stopped
			}
			return nil, err
		}
		now := declared(rest)
		for name, line := range now {
			if !volatileVariable(name) && start[name] != line {
				c.changed = append(c.changed, name)
			}
		}
		for name := range start {
			if _, ok := now[name]; !ok && !volatileVariable(name) {
				c.changed = append(c.changed, name)
			}
		}
		slices.Sort(c.changed)
		if len(c.words) == 1 && c.words[0] == "__askops_exit" {
			if len(c.changed) == 0 {
				continue
			}
			c.words = nil
		}
		ran = append(ran, c)
	}
	slices.SortFunc(ran, func(a, b ranCommand) int { return slices.Compare(a.words, b.words) })
	return ran, nil
}

// parserReading is the parser's plain reading of command: its simple
// commands, without what the policy adds for bash's readings.
func parserReading(t *testing.T, command string) *analysis {
	t.Helper()
	f, err := parseShell(command)
	if err != nil {
		t.Fatal(err)
	}
	an := &analysis{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			an.cmds = append(an.cmds, simple{words: wordsOf(c.Args)})
		}
		return true
	})
	return an
}

// The runner sees what the printing hides: run in bash, these assign a
// variable or run a program that the parser's reading does not show (the
// policy refuses them: readings.go), and plain commands show nothing.
func TestDifferentialRunsLikeBash(t *testing.T) {
	r := newBashRunner(t)
	for _, tc := range []struct {
		command string
		problem string // what checkRun must report; "" for none
		assigns bool   // give checkRun the policy's reading of assignments
	}{
		{"echo {HOME}>/dev/null; ls", `changed the variables ["HOME"]`, false},
		{"ls {PATH}</dev/null", `changed the variables ["PATH"]`, false},
		{"ls | { echo {GIT_DIR}>/dev/null; ls; }", `changed the variables ["GIT_DIR"]`, false},
		{"ls | time -p echo x", `ran ["time" "-p" "echo" "x"]`, false},
		{"ls |& time echo x", `ran ["time" "echo" "x"]`, false},
		{"printf -v HOME x", `changed the variables ["HOME"]`, false},
		{"printf %n HOME", `changed the variables ["HOME"]`, false},
		{"ls -la | grep x > out/y 2>&1", "", false},
		{"echo a; printf '%s\\n' b c | sort", "", false},
		{"time ls; ! ls", "", false},
		{"find . -exec echo {} \\;", "", false},
		{"n=5; echo $((n*2))", "", true},                 // an assignment the policy reads
		{"for f in a b; do echo \"$f\"; done", "", true}, // so is a loop variable
		{"n=5; echo {HOME}>/dev/null", `changed the variables ["HOME"]`, true},
	} {
		an := parserReading(t, tc.command)
		if tc.assigns {
			an.assigned = analyzeCommand(tc.command, "", "/w", nil).assigned
		}
		problem, err := r.checkRun(t.Context(), tc.command, an)
		if err != nil {
			t.Fatal(err)
		}
		if tc.problem == "" && problem != "" || !strings.Contains(problem, tc.problem) {
			t.Errorf("checkRun(%q) = %q, want %q", tc.command, problem, tc.problem)
		}
	}
}
