package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The hostile-command corpus: policy/testdata/corpus/*.txt, one command a
// line, each with the decision the policy must reach. Format (blank lines
// and lines starting with # are skipped):
//
//	EXPECT<TAB>"COMMAND"[<TAB>why]
//
// EXPECT is allow, ask or deny, optionally with @full or @never (the
// session's mode; ask by default). COMMAND is a Go double-quoted string, so
// CR, NUL, newlines and invalid UTF-8 are written exactly. Every line is
// evaluated with one engine (corpusEngine) in a fresh workspace, and every
// command that parses is read by real bash and compared with the policy's
// reading (differential_test.go).

type corpusLine struct {
	file    string
	line    int
	want    Decision
	mode    Mode
	command string
	why     string
}

func (l corpusLine) String() string {
	return fmt.Sprintf("%s:%d", l.file, l.line)
}

func readCorpus(t testing.TB) []corpusLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []corpusLine
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
				continue
			}
			l, err := parseCorpusLine(text)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, i+1, err)
			}
			l.file, l.line = filepath.Base(name), i+1
			lines = append(lines, l)
		}
	}
	return lines
}

func parseCorpusLine(text string) (corpusLine, error) {
	fields := strings.SplitN(text, "\t", 3)
	if len(fields) < 2 {
		return corpusLine{}, fmt.Errorf("want EXPECT<TAB>\"COMMAND\"[<TAB>why], got %q", text)
	}
	var l corpusLine
	expect, mode, _ := strings.Cut(fields[0], "@")
	l.want, l.mode = Decision(expect), Mode(mode)
	if !l.want.Valid() {
		return l, fmt.Errorf("unknown decision %q", expect)
	}
	if l.mode != "" && !l.mode.Valid() {
		return l, fmt.Errorf("unknown mode %q", mode)
	}
	cmd, err := strconv.Unquote(fields[1])
	if err != nil {
		return l, fmt.Errorf("the command %s is not a Go double-quoted string: %v", fields[1], err)
	}
	l.command = cmd
	if len(fields) == 3 {
		l.why = fields[2]
	}
	return l, nil
}

// corpusRules is the one rule set every corpus line is judged with.
func corpusRules() []Rule {
	rules := []Rule{
		{Tool: ToolBash, Command: "rm", Decision: Deny},
		{Tool: ToolBash, Command: "shutdown", Decision: Deny},
		{Tool: ToolBash, Command: "reboot", Decision: Deny},
	}
	for _, c := range []string{
		"ls", "cat", "echo", "printf", "test", `"["`, "true", "grep", "head", "wc", "sort", "sed", "touch",
		"mkdir", "cp", "find", "dd", "git status", "git log", "git diff", "git push",
		"go test", "npm test", "systemctl start", "hash", `"declare"`, `"let"`, "read", `"export"`,
		// Tools whose options write or run (options.txt).
		"tar", "unzip", "zip", "patch", "gcc", "cc", "make", "cargo build", "pip", "rsync", "awk", "perl", "man",
		"curl", "wget", "git config", "bat", "git archive", "git bundle", "git worktree", "git clone", "git init",
		"git apply", "git am", "git grep", "git checkout-index", "docker build", "docker save", "docker cp", "kubectl cp",
		"kubectl config", "kubectl get", "ssh-keygen", "openssl", "iconv", "split", "gzip", "xxd",
		"fd", "rg", "nc", "ncat", "socat", "scp", "sftp", "nodemon", "lftp", "rlwrap", "ifne", "git remote", "zstd", "cargo watch",
	} {
		rules = append(rules, Rule{Tool: ToolBash, Command: c, Decision: Allow})
	}
	return append(rules,
		Rule{Tool: ToolWriteFile, Path: "out/**", Decision: Allow},
		Rule{Tool: ToolWriteFile, Path: "**/.env", Decision: Deny},
		Rule{Tool: ToolReadFile, Path: "**/.env", Decision: Deny},
		Rule{Tool: ToolReadFile, Path: "secrets/**", Decision: Ask},
	)
}

// corpusWorkspace makes the corpus workspace: a fresh directory with
// .git/hooks/ and out/ in it.
func corpusWorkspace(t testing.TB) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git/hooks", "out"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// corpusEngine returns the corpus engine and its workspace.
func corpusEngine(t testing.TB) (*Engine, string) {
	t.Helper()
	e, err := New(Config{Rules: corpusRules()})
	if err != nil {
		t.Fatal(err)
	}
	return e, corpusWorkspace(t)
}

func corpusCall(command, ws string, mode Mode) Call {
	return Call{Tool: ToolBash, Safety: SideEffect, Command: command, Cwd: ws, Workspace: ws, Mode: mode}
}

// TestCorpus judges every corpus line and compares bash's reading of every
// command that parses with the policy's. At the end it reports the counts.
func TestCorpus(t *testing.T) {
	lines := readCorpus(t)
	if len(lines) == 0 {
		t.Fatal("no corpus lines in testdata/corpus")
	}
	e, ws := corpusEngine(t)
	r := newBashReader(t)
	var compared, ran, allowed, wronglyAllowed, hidden, failed int
	for _, l := range lines {
		v := e.Evaluate(t.Context(), corpusCall(l.command, ws, l.mode))
		if slices.Contains(v.Unread, failedReading) {
			t.Errorf("%s: the policy failed reading %q", l, l.command)
		}
		if v.Decision == Allow {
			allowed++
			if l.want != Allow {
				wronglyAllowed++
			}
		}
		if v.Decision != l.want {
			failed++
			t.Errorf("%s: %q: got %s (%s; %s), want %s %s", l, l.command, v.Decision, v.Reason, v.Rule, l.want, l.why)
		}
		d, err := r.compare(t.Context(), l.command, v.Decision == Allow)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if d.compared {
			compared++
		}
		if d.ran {
			ran++
		} else if v.Decision == Allow {
			t.Logf("%s: %q is allowed but was not run in bash", l, l.command)
		}
		// The approver's runs: line names every program of bash's reading.
		shown := Programs(l.command)
		for _, p := range bashPrograms(d.bashReading) {
			if !slices.Contains(shown, p) && !slices.Contains(shown, p+"?") {
				hidden++
				t.Errorf("%s: %q: bash runs %s, but the runs: line shows only %q", l, l.command, p, shown)
			}
		}
		switch {
		case d.problem != "":
			failed++
			t.Errorf("%s: %q (%s): %s", l, l.command, v.Decision, d.problem)
		case d.bashErr != "" && v.Decision == Allow:
			failed++
			t.Errorf("%s: the policy allows %q but bash rejects it: %s", l, l.command, d.bashErr)
		}
	}
	t.Logf("corpus: %d commands, %d compared with bash, %d run in bash, %d allowed, %d wrongly allowed, %d programs hidden from the approver, %d failures",
		len(lines), compared, ran, allowed, wronglyAllowed, hidden, failed)
}
