package policy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	dir string
}

func newBashReader(t testing.TB) *bashReader {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &bashReader{dir: dir}
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
	compared bool   // bash was asked and its reading compared
	bashErr  string // bash rejected the command as a syntax error
	problem  string // the readings differ: what and how
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
		if got := shellView(g); !slices.Equal(got, want) && (allowed || !commandsAmong(got, want)) {
			which := "the command"
			if i > 0 {
				which = fmt.Sprintf("the canonical text %q", text)
			}
			d.problem = fmt.Sprintf("bash reads %s as\n\t%s\nbut the policy reads it as\n\t%s\n(bash printed %q)",
				which, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"), printed)
			return d, nil
		}
	}
	return d, nil
}

// undoBashPrinting removes what bash's printer adds that is not in the
// command: its internal quoting byte CTLESC (0x01) before a control byte,
// and the default name it gives an unnamed coprocess (which the parser
// would then read as a command name).
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
	return printed
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
		"ls # c \\\nrm x", "ls \r# x", "find . -name '*.go' | sort | wc -l", "printf '%s\\n' a b >> out/log",
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
