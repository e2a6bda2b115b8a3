package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func shellEvaluate(t *testing.T, e *Engine, ws, cmd string, mode Mode) Verdict {
	t.Helper()
	return e.Evaluate(t.Context(), Call{Tool: "bash", Command: cmd, Cwd: ws, Workspace: ws, Safety: SideEffect, Mode: mode})
}

// checkShellDecisions evaluates each command with e, run in ws in the
// default mode, and wants its decision.
func checkShellDecisions(t *testing.T, e *Engine, ws string, want map[string]Decision) {
	t.Helper()
	for cmd, d := range want {
		if v := shellEvaluate(t, e, ws, cmd, ""); v.Decision != d {
			t.Errorf("%q: %s (%s; rule %q), want %s", cmd, v.Decision, v.Reason, v.Rule, d)
		}
	}
}

type shellCase struct {
	cmd  string
	want Decision
	why  string // substring of the reason or rule, optional
}

func runShellCases(t *testing.T, cases []shellCase) {
	t.Helper()
	ws := corpusWorkspace(t)
	e := newTestEngine(t, Config{Rules: corpusRules()})
	for _, tc := range cases {
		v := shellEvaluate(t, e, ws, tc.cmd, "")
		if v.Decision != tc.want || !strings.Contains(v.Reason+" "+v.Rule, tc.why) {
			t.Errorf("%q: %s (%s; rule %q), want %s with %q", tc.cmd, v.Decision, v.Reason, v.Rule, tc.want, tc.why)
		}
	}
}

// Finding 2: brace expansion with quoted elements moved a write out of the
// workspace or into .git, and hid a command name from deny rules.
func TestBraceExpansionIsSeenThrough(t *testing.T) {
	runShellCases(t, []shellCase{
		{`echo x > {"../outside",}`, Ask, "brace expansion"},
		{`echo x > {"../outside",}`, Ask, ""},
		{`echo x > {".git/hooks/pre-commit",}`, Ask, ""},
		{`echo x > {'.env',}`, Deny, `write_file "**/.env"`},
		{`echo x > {out/.env,out/a}`, Deny, `write_file "**/.env"`},
		{`{"rm",-rf,x}`, Deny, `deny bash "rm"`},
		{`{rm,-rf,x}`, Deny, `deny bash "rm"`},
		{`{'r'm,-rf,x}`, Deny, `deny bash "rm"`},
		{`{{r,}m,-rf,x}`, Deny, `deny bash "rm"`},
		{`{,}rm -rf x`, Deny, `deny bash "rm"`},
		{`r{m,}`, Deny, `deny bash "rm"`},
		{`ls; {"shut"down,now}`, Deny, `deny bash "shutdown"`},
		{`echo {a..z}`, Ask, "no allow rule covers"},
		{`echo {1..3}`, Ask, ""},
		{`cat {a,b}.txt`, Ask, ""},
		{`echo {1..100000}{1..100000}`, Ask, ""},
		{`echo {} x{}`, Allow, ""},
		{`echo {x}`, Allow, ""},
		{`echo '{a,b}'`, Allow, ""},
		{`echo \{a,b\}`, Allow, ""},
	})
}

// Bash's own brace expansion must equal the analysis' for the words the
// analysis expands; otherwise deny rules would look at other words.
func TestBraceExpansionMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed for this test:", err)
	}
	for _, src := range []string{
		`{"rm",-rf,x}`, `{rm,-rf,x}`, `{"../outside",}`, `{,a}`, `x{,}`, `{a..e}`, `{1..10..3}`, `{01..10}`,
		`{-2..2}`, `{5..1}`, `{a..Z}`, `{a,{b,c}d}e`, `{{r,}m,-rf}`, `a{b,c`, `{a,b}}`, `{{a,b}`, `{a\,b,c}`,
		`{'a,b',c}`, `{"",x}`, `{a..b..c}`, `{1..2,3}`, `{a,b..c}`, `pre{x,y}post{1,2}`, `{}`, `{x}`, `\{a,b}`,
		`{a,b\}`, `{1..3}{a,b}`, `{z..w..2}`, `{'x'..z}`,
	} {
		out, err := exec.Command(bash, "-c", "printf '<%s>\\n' "+src).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", src, err)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			want = append(want, strings.TrimSuffix(strings.TrimPrefix(l, "<"), ">"))
		}
		f, err := parseShell("printf '<%s>\\n' " + src)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range wordsOf(f.Stmts[0].Cmd.(*syntax.CallExpr).Args[2:]) {
			got = append(got, w.loose)
		}
		if len(got) == 0 {
			got = []string{""} // printf with no operand prints one empty line
		}
		if len(got) == 1 && got[0] == anyText {
			continue // unknown: never allowed, any deny rule matches
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: analysis %q, bash %q", src, got, want)
		}
	}
}

// Finding 3: subscripts and arithmetic that bash evaluates run the command
// substitutions in them.
func TestEvaluatedSubscriptsAndArithmetic(t *testing.T) {
	runShellCases(t, []shellCase{
		{`test -v 'x[$(rm -rf x)]'`, Deny, `deny bash "rm"`},
		{`test -v "x[\$(rm -rf x)]"`, Deny, `deny bash "rm"`},
		{"test -v 'x[`rm -rf x`]'", Deny, `deny bash "rm"`},
		{`[ -v 'x[$(rm -rf x)]' ]`, Deny, `deny bash "rm"`},
		{`[[ -v 'x[$(rm -rf x)]' ]]`, Deny, `deny bash "rm"`},
		{`[[ 'a[$(rm -rf x)]' -eq 1 ]]`, Deny, `deny bash "rm"`},
		{`x='a[$(rm -rf x)]'; [[ $x -eq 1 ]]`, Deny, `deny bash "rm"`},
		{`(( "a[\$(rm -rf x)]" ))`, Deny, `deny bash "rm"`},
		{`echo $(( "a[\$(rm -rf x)]" ))`, Deny, `deny bash "rm"`},
		{`let 'a[$(rm -rf x)]=1'`, Deny, `deny bash "rm"`},
		{`builtin let 'a[$(rm -rf x)]=1'`, Deny, `deny bash "rm"`},
		{`printf -v 'a[$(rm -rf x)]' %s hi`, Deny, `deny bash "rm"`},
		{`printf -v'a[$(rm -rf x)]' %s hi`, Deny, `deny bash "rm"`},
		{`declare 'a[$(rm -rf x)]=1'`, Deny, `deny bash "rm"`},
		{`declare -i n='a[$(rm -rf x)]'`, Deny, `deny bash "rm"`},
		{`typeset "a[\$(rm -rf x)]"`, Deny, `deny bash "rm"`},
		{`local 'a[$(rm -rf x)]'`, Deny, `deny bash "rm"`},
		{`readonly 'a[$(rm -rf x)]=1'`, Deny, `deny bash "rm"`},
		{`export 'a[$(rm -rf x)]=1'`, Deny, `deny bash "rm"`},
		{`builtin declare 'a[$(rm -rf x)]=1'`, Deny, `deny bash "rm"`},
		{`read -a 'a[$(rm -rf x)]' < /dev/null`, Deny, `deny bash "rm"`},
		{`read 'a[$(rm -rf x)]' < /dev/null`, Deny, `deny bash "rm"`},
		{`mapfile 'a[$(rm -rf x)]' < /dev/null`, Deny, `deny bash "rm"`},
		{`readarray -C 'rm -rf x' -c 1 a < /dev/null`, Deny, `deny bash "rm"`},
		{`unset 'a[$(rm -rf x)]'`, Deny, `deny bash "rm"`},
		{`getopts a 'a[$(rm -rf x)]'`, Deny, `deny bash "rm"`},
		{`declare -n r='a[$(rm -rf x)]'`, Deny, `deny bash "rm"`},
		{`echo ${a['$(rm -rf x)']}`, Deny, `deny bash "rm"`},
		{`declare -i a=('a[$(rm -rf x)]')`, Deny, `deny bash "rm"`},
		{`a=(['$(rm -rf x)']=1)`, Deny, `deny bash "rm"`},
		// Without a deny rule inside, never allowed.
		{`test -v 'x[$(ls)]'`, Ask, "test evaluates"},
		{`[ -v 'x[$(ls)]' ]`, Ask, "evaluates"},
		{`test -v 'x[1]'`, Allow, ""},
		{`test -v x`, Allow, ""},
		{`test -f out/a`, Allow, ""},
		{`printf -v x %s hi`, Ask, "printf -v"},
	})
}

// Finding 3 (environment): variables that carry code.
func TestCodeInTheEnvironment(t *testing.T) {
	runShellCases(t, []shellCase{
		{`PS4='$(rm -rf x)' bash -x -c true`, Deny, `deny bash "rm"`},
		{`export PS4='$(rm -rf x)'`, Deny, `deny bash "rm"`},
		{`declare -x PS4='$(rm -rf x)'`, Deny, `deny bash "rm"`},
		{`env PS4='$(rm -rf x)' bash -xc true`, Deny, `deny bash "rm"`},
		{`BASH_ENV='$(rm -rf x)' bash -c true`, Deny, `deny bash "rm"`},
		{`ENV='$(rm -rf x)' sh -i`, Deny, `deny bash "rm"`},
		{`PROMPT_COMMAND='rm -rf x' bash -i`, Deny, `deny bash "rm"`},
		{`GIT_SSH_COMMAND='rm -rf x' git push`, Deny, `deny bash "rm"`},
		{`env GIT_SSH_COMMAND='rm -rf x' git push`, Deny, `deny bash "rm"`},
		{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -rf x' git status`, Deny, `deny bash "rm"`},
		{`export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -rf x'; git status`, Deny, `deny bash "rm"`},
		{`GIT_CONFIG_PARAMETERS="'core.fsmonitor'='rm -rf x'" git status`, Deny, `deny bash "rm"`},
		{`GIT_CONFIG_PARAMETERS="'core.fsmonitor=rm -rf x'" git status`, Deny, `deny bash "rm"`},
		{`git -c core.fsmonitor='rm -rf x' status`, Deny, `deny bash "rm"`},
		{`git --config-env=core.fsmonitor=CMD status`, Deny, `deny bash "rm"`},
		{`git --config-env core.fsmonitor=CMD status`, Deny, `deny bash "rm"`},
		{`hash -p /bin/rm ls; ls -rf x`, Deny, `deny bash "rm"`},
		{`hash -p/bin/rm ls; ls`, Deny, `deny bash "rm"`},
		{`enable -f ./x.so ls; ls`, Deny, `deny bash "rm"`},
		{`alias ls='rm -rf x'`, Deny, `deny bash "rm"`},
		{`git config core.fsmonitor 'rm -rf x'`, Deny, `deny bash "rm"`},
		{`sort --compress-program=rm -S 1 out/a`, Deny, `deny bash "rm"`},
		{`sort --compress-prog rm out/a`, Deny, `deny bash "rm"`},
		{`git push --receive-pack='rm -rf x' ../r`, Deny, `deny bash "rm"`},
		{`git push --exec='rm -rf x' ../r`, Deny, `deny bash "rm"`},
		{`git push --rec='rm -rf x' ../r`, Deny, `deny bash "rm"`},
		{`git push --e='rm -rf x' ../r`, Deny, `deny bash "rm"`},
		{`git fetch --upload-pack 'rm -rf x' ../r`, Deny, `deny bash "rm"`},
		{`git clone -u 'rm -rf x' ../r`, Deny, `deny bash "rm"`},
		{`go test -exec 'rm -rf x' ./...`, Deny, `deny bash "rm"`},
		{`go test -toolexec='rm -rf x' ./...`, Deny, `deny bash "rm"`},
		{`npm test --script-shell=rm`, Deny, `deny bash "rm"`},
		{`env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls`, Deny, `deny bash "rm"`},
		{`git push --receive-pack=./x ../r`, Ask, ""},
		{`go test -exec ./x ./...`, Ask, ""},
		{`git config set core.pager 'rm -rf x'`, Deny, `deny bash "rm"`},
		{`git config alias.st '!rm -rf x'`, Deny, `deny bash "rm"`},
		{`printf -v PS4 %s '$(rm -rf x)'; bash -xc true`, Deny, `deny bash "rm"`},
		{`read PS4 <<< '$(rm -rf x)'; bash -xc true`, Deny, `deny bash "rm"`},
		// Never allowed, even with nothing denied inside.
		{`env LD_PRELOAD=./x.so ls`, Ask, "LD_PRELOAD"},
		{`env PATH=. ls`, Ask, "PATH"},
		{`env GIT_CONFIG_GLOBAL=./g git status`, Ask, "GIT_CONFIG_GLOBAL"},
		{`env NODE_OPTIONS='--require ./x.js' npm test`, Ask, "NODE_OPTIONS"},
		{`export PAGER=cat; git log`, Ask, ""},
		{`hash -p ./x ls; ls`, Ask, ""},
		{`git --config-env=user.name=NAME status`, Ask, ""},
	})
}

// Finding 5: a redirection (or tee, dd of=, cp) that writes a file is a
// write_file call on it.
func TestWritesAreJudgedAsWriteFile(t *testing.T) {
	runShellCases(t, []shellCase{
		{`echo '{"scripts":{"test":"rm -rf ~"}}' > package.json; npm test`, Ask, "writes package.json, package.json (npm runs its scripts)"},
		{`echo x > out/a.txt; npm test`, Allow, ""},
		{`echo x >> package.json`, Ask, "writes package.json"},
		{`echo x >| package.json`, Ask, "writes package.json"},
		{`echo x &> package.json`, Ask, "writes package.json"},
		{`echo x &>> package.json`, Ask, "writes package.json"},
		{`echo x 1<> package.json`, Ask, "writes package.json"},
		{`echo x >& package.json`, Ask, "writes package.json"},
		{`echo x > out/../package.json`, Ask, "writes out/../package.json"},
		{`dd if=/dev/zero of=package.json count=1`, Ask, "writes package.json"},
		{`cp out/a package.json`, Ask, "writes package.json"},
		{`cp out/a out/b`, Allow, ""},
		{`cp out/a .`, Ask, "writes a"},
		{`cp -t . out/a`, Ask, "writes a"},
		{`sed -i s/a/b/ Makefile`, Ask, "writes Makefile"},
		{`sed -n p Makefile`, Allow, ""},
		{`echo x > .env`, Deny, `write_file "**/.env"`},
		{`echo x > out/.env`, Deny, `write_file "**/.env"`},
		{`echo x > /tmp/.env`, Deny, `write_file "**/.env"`},
		{`echo x > ".e"nv`, Deny, `write_file "**/.env"`},
		{`echo x | tee .env`, Deny, `write_file "**/.env"`},
		{`cd out && echo x > .env`, Deny, `write_file "**/.env"`},
		{`echo x > /dev/null 2>&1`, Allow, ""},
		{`echo x 2>&1 >&2 3>&- 4>&1-`, Allow, ""},
		{`echo x > /dev/stderr`, Allow, ""},
		{`echo x > ../outside`, Ask, "outside the workspace"},
		{`sed -n 'w package.json' out/a`, Ask, "writes package.json"},
		{`sed 's/a/b/w package.json' out/a`, Ask, "writes package.json"},
		{`sed -e p -e 'w package.json' out/a`, Ask, "writes package.json"},
		{`sed -n 'w .env' out/a`, Deny, `write_file "**/.env"`},
		{`sed --expr='w package.json' p`, Ask, "writes package.json"},
		{`sed --e 'w package.json' out/a`, Ask, "writes package.json"},
		{`sed --in s/a/b/ package.json`, Ask, "writes package.json"},
		{`sed --quiet --expression=p out/a`, Allow, ""},
		{`sed --frobnicate p out/a`, Ask, "does not know"},
		{`sed -n -- p -x`, Allow, ""},
		{`cp --target=. out/a`, Ask, "writes a"},
		{`cp --t . out/a`, Ask, "writes a"},
		{`sed -n '/x/w out/log' out/a`, Allow, ""},
		{`sed s/hello/world/g out/a`, Allow, ""},
		{`sed 'e rm -rf x' out/a`, Deny, `deny bash "rm"`},
		{`sed '1e rm -rf x' out/a`, Deny, `deny bash "rm"`},
		{`sed 's/.*/ls/e' out/a`, Deny, `deny bash "rm"`},
		{`sort -o package.json out/a`, Ask, "writes package.json"},
		{`sort -o .env out/a`, Deny, `write_file "**/.env"`},
		{`sort -oout/b out/a`, Allow, ""},
		{`find . -fprint package.json`, Ask, "writes package.json"},
		{`find . -fprintf .env %p`, Deny, `write_file "**/.env"`},
		{`find . -fprint out/list`, Allow, ""},
		{`git diff --output=package.json`, Ask, "writes package.json"},
		{`git diff --output=.env`, Deny, `write_file "**/.env"`},
		{`git log --output out/log`, Allow, ""},
		{`echo x > $'.env'`, Deny, `write_file "**/.env"`},
		{`echo x > $'\x2eenv'`, Deny, `write_file "**/.env"`},
		{`sort -ro package.json out/a`, Ask, "writes package.json"},
		{`sort --out=package.json out/a`, Ask, "writes package.json"},
		{`sort --o=package.json out/a`, Ask, "writes package.json"},
		{`cp -rt . out/a`, Ask, `writes the files under "a"`},
		{`cp -vt. out/a`, Ask, "writes a"},
		{`go test -o package.json -c ./cmd`, Ask, "writes package.json"},
		{`go test -coverprofile=Makefile ./...`, Ask, "writes Makefile"},
		{`go test -coverprofile=out/c ./...`, Allow, ""},
		{`go test -cpuprofile .env ./...`, Deny, `write_file "**/.env"`},
		{`cp --parents ../package.json out/`, Ask, "writes package.json"},
		{`cp -rT out/tmpl .`, Ask, `writes the files under "."`},
		{`cp -r out/tmpl out/copy`, Ask, "may include what a write_file deny rule names"}, // **/.env: treewrite_test.go
		{`npm test --prefix ../other`, Ask, "--prefix"},
		{`npm test --pre ../other`, Ask, "--prefix"},
		{`npm test -C ../other`, Ask, "-C"},
		{`npm test --node-options=--require=./x.js`, Ask, "--node-options"},
		{`npm test -- --prefix=x`, Allow, ""},
		{`go test -C ../other ./...`, Ask, "-C"},
		{`go test -overlay=out/o.json ./...`, Ask, "-overlay"},
		{`echo x > .git/hooks/pre-commit`, Ask, ".git"},
	})
}

func TestTeeWritesAreJudged(t *testing.T) {
	ws := corpusWorkspace(t)
	e := newTestEngine(t, Config{Rules: append(corpusRules(), Rule{Tool: "bash", Command: "tee", Decision: Allow})})
	checkShellDecisions(t, e, ws, map[string]Decision{
		"echo x | tee package.json":   Ask,
		"echo x | tee -a out/log":     Allow,
		"echo x | tee out/a .env":     Deny,
		"echo x | tee out/a -- -x":    Ask,
		"echo x | tee out/a out/b -a": Allow,
	})
}

// A link under an allowed directory does not make a write to where it
// leads allowed.
func TestWriteThroughALinkIsJudgedWhereItLands(t *testing.T) {
	ws := corpusWorkspace(t)
	if err := os.Symlink(filepath.Join(ws, "package.json"), filepath.Join(ws, "out", "pkg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, ".env"), filepath.Join(ws, "out", "settings")); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine(t, Config{Rules: corpusRules()})
	checkShellDecisions(t, e, ws, map[string]Decision{
		"echo x > out/pkg":      Ask,
		"echo x > out/settings": Deny,
		"echo x > out/plain":    Allow,
	})
}

// Mode full still applies write_file deny rules to what a command writes.
func TestWriteDenyRulesHoldInModeFull(t *testing.T) {
	ws := corpusWorkspace(t)
	e := newTestEngine(t, Config{Rules: corpusRules()})
	if v := shellEvaluate(t, e, ws, "echo x > .env", ModeFull); v.Decision != Deny {
		t.Errorf("echo x > .env in mode full: %s (%s), want deny", v.Decision, v.Reason)
	}
	if v := shellEvaluate(t, e, ws, "echo x > out/notes.txt", ModeFull); v.Decision != Allow {
		t.Errorf("echo x > out/notes.txt in mode full: %s (%s), want allow", v.Decision, v.Reason)
	}
	// package.json holds the scripts npm runs: a config write asks in every mode.
	if v := shellEvaluate(t, e, ws, "echo x > package.json", ModeFull); v.Decision != Ask || !v.Dangerous {
		t.Errorf("echo x > package.json in mode full: %s (%s), want a dangerous ask", v.Decision, v.Reason)
	}
}

// Brace expansion is bounded per word and per analysis: these finish and
// are never allowed.
func TestPathologicalBraces(t *testing.T) {
	ws := corpusWorkspace(t)
	e := newTestEngine(t, Config{Rules: corpusRules()})
	for _, cmd := range []string{
		strings.Repeat("echo {1..4000}; ", 3000),
		strings.Repeat("{a,b}", 40),
		"echo " + strings.Repeat("{a,b,c,d}", 30),
		strings.Repeat("{", 5000) + "a,b" + strings.Repeat("}", 5000),
		"echo x > " + strings.Repeat("{a,b}", 30),
	} {
		if v := shellEvaluate(t, e, ws, cmd, ""); v.Decision == Allow {
			t.Errorf("%q: allowed (%s)", clip(cmd, 60), v.Reason)
		}
	}
}

func BenchmarkBraceHeavyCommand(b *testing.B) {
	e := newTestEngine(b, Config{Rules: corpusRules()})
	cmd := strings.Repeat("echo {1..4000}; ", 3000)
	c := Call{Tool: "bash", Command: cmd, Cwd: "/work/repo", Workspace: "/work/repo", Safety: SideEffect}
	for b.Loop() {
		e.Evaluate(b.Context(), c)
	}
}

// A command over MaxCommandBytes is denied before it is parsed, in every
// mode: deeply nested input costs the parser seconds.
func TestOverlongCommandDenied(t *testing.T) {
	ws := corpusWorkspace(t)
	e := newTestEngine(t, Config{Rules: corpusRules()})
	long := strings.Repeat("(", MaxCommandBytes+1)
	for _, mode := range []Mode{"", ModeFull} {
		if v := shellEvaluate(t, e, ws, long, mode); v.Decision != Deny || !strings.Contains(v.Reason, "over the") {
			t.Errorf("mode %q: %s (%s), want deny", mode, v.Decision, v.Reason)
		}
	}
	if v := shellEvaluate(t, e, ws, "echo "+strings.Repeat("a", MaxCommandBytes-5), ""); v.Decision != Allow {
		t.Errorf("a command of exactly MaxCommandBytes: %s (%s), want allow (echo is allowed)", v.Decision, v.Reason)
	}
}
