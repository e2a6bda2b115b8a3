package policy

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestSimpleWords(t *testing.T) {
	ok := []struct {
		cmd  string
		want []string
	}{
		{"git status", []string{"git", "status"}},
		{"git status -s", []string{"git", "status", "-s"}},
		{"'git' status", []string{"git", "status"}},
		{`"git" "sta"tus`, []string{"git", "status"}},
		{`\git status`, []string{"git", "status"}},
		{"r''m -rf x", []string{"rm", "-rf", "x"}},
		{"echo 'a b' \"c\\\"d\"", []string{"echo", "a b", `c"d`}},
		{"echo \"a\\b\"", []string{"echo", `a\b`}},
		{"npm test  ", []string{"npm", "test"}},
		{"git log --format=%H", []string{"git", "log", "--format=%H"}},
		{"git commit -m 'fix: a; b && c'", []string{"git", "commit", "-m", "fix: a; b && c"}},
		{"ls -la # trailing comment", []string{"ls", "-la"}},
		{"find . -name x -exec echo {} ;", []string{"find", ".", "-name", "x", "-exec", "echo", "{}"}},
		{"echo a\\\nb", []string{"echo", "ab"}},
		{"echo '*.go' \"~\" \\*", []string{"echo", "*.go", "~", "*"}},
		{"echo a~b", []string{"echo", "a~b"}},
	}
	for _, tc := range ok {
		got, err := SimpleWords(tc.cmd)
		if err != nil {
			t.Errorf("SimpleWords(%q) error %v, want %q", tc.cmd, err, tc.want)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("SimpleWords(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
	bad := []string{
		"", "   ", "# only a comment",
		"git status | cat", "git status; rm x", "git status && rm x", "git status || rm x",
		"git status\nrm x", "git status &", "! git status",
		"git status > out", "git status 2>&1", "cat < in", "cat <<EOF\nx\nEOF", "cat <<< x",
		"FOO=1 git status", "echo $HOME", "echo ${HOME}", "echo $(id)", "echo `id`",
		"echo $((1+2))", "diff <(ls) <(ls a)", "ls *.go", "ls file?", "ls [ab]", "ls ~", "ls ~/x",
		"echo a{b,c}", "echo {1..3}", "echo --x=~/y", "$'\\x72m' -rf /", `$"rm" x`,
		"(git status)", "{ git status; }", "if true; then ls; fi", "for i in a; do ls; done",
		"f() { ls; }", "export A=b", "[[ -f x ]]", "((x++))", "time ls", "coproc ls",
		"echo 'unterminated", "echo \"x", "echo $(", "ls @(a|b)", "echo \"$HOME\"",
	}
	for _, cmd := range bad {
		if got, err := SimpleWords(cmd); err == nil {
			t.Errorf("SimpleWords(%q) = %q, want an error", cmd, got)
		}
	}
}

func TestRunsArbitraryCode(t *testing.T) {
	yes := [][]string{
		nil, {}, {""},
		{"bash"}, {"bash", "-c"}, {"sh", "-c", "ls"}, {"/bin/sh"}, {"zsh"}, {"dash", "x.sh"},
		{"python"}, {"python3", "-c"}, {"python3.12"}, {"python", "script.py"}, {"node", "-e"},
		{"nodejs"}, {"perl", "-e"}, {"ruby"}, {"php"}, {"lua5.4"}, {"awk"}, {"sed"}, {"deno"},
		{"env"}, {"env", "-i"}, {"/usr/bin/env", "FOO=1"}, {"sudo"}, {"sudo", "ls"}, {"doas"}, {"su"},
		{"xargs"}, {"xargs", "-n1"}, {"eval"}, {"exec"}, {"command"}, {"builtin"}, {"nice"},
		{"nohup"}, {"timeout", "5"}, {"time"}, {"watch"}, {"strace"}, {"parallel"}, {"ssh", "host"},
		{"find"}, {"find", "."}, {"tar"}, {"rsync"}, {"make"}, {"make", "test"}, {"npx"}, {"npx", "jest"},
		{"npm"}, {"npm", "exec"}, {"npm", "run"}, {"npm", "run-script"}, {"npm", "x"}, {"npm", "install"},
		{"npm", "test", "--script-shell=/tmp/evil"}, {"yarn", "dlx"}, {"pnpm", "exec"},
		{"go"}, {"go", "run"}, {"go", "generate"}, {"go", "test", "-exec", "evil"},
		{"go", "build", "-toolexec=evil"}, {"cargo", "run"},
		{"git"}, {"git", "-c", "core.pager=sh"}, {"git", "config"}, {"git", "rebase", "-x", "id"},
		{"git", "push", "--receive-pack=evil"}, {"git", "submodule", "foreach"}, {"git", "bisect", "run"},
		{"docker"}, {"docker", "run"}, {"docker", "exec"}, {"docker", "compose"}, {"kubectl"},
		{"kubectl", "exec"}, {"kubectl", "run"}, {"kubectl", "debug"}, {"kubectl", "get", "--kubeconfig=x"},
		{"source"}, {"."}, {"FOO=1"}, {"$X"}, {"vim"}, {"gdb"}, {"pytest"}, {"terraform"},
		{"grep", "-exec"}, {"stdbuf"}, {"ionice"}, {"chroot"}, {"script"},
		{"./build.sh"}, {"bin/tool", "run"}, {"../x"}, {"deploy.py"}, {"/usr/local/bin/node"},
	}
	for _, w := range yes {
		if !RunsArbitraryCode(w) {
			t.Errorf("RunsArbitraryCode(%q) = false, want true", w)
		}
	}
	no := [][]string{
		{"git", "status"}, {"git", "push"}, {"git", "push", "origin", "feature"}, {"git", "log", "-p"},
		{"git", "-C", "sub", "status"}, {"git", "diff"}, {"git", "commit", "-m", "x"},
		{"npm", "test"}, {"npm", "test", "--", "--watch=false"}, {"go", "test", "./..."}, {"go", "vet"},
		{"go", "build", "./..."}, {"cargo", "test"}, {"cargo", "build"},
		{"ls"}, {"ls", "-la"}, {"cat", "README.md"}, {"grep", "-r", "x"}, {"rm", "x"}, {"mkdir", "d"},
		{"docker", "ps"}, {"kubectl", "get", "pods"}, {"kubectl", "-n", "x", "logs", "p"},
		{"echo", "hi"}, {"wc", "-l"}, {"/usr/bin/ls", "-la"},
	}
	for _, w := range no {
		if RunsArbitraryCode(w) {
			t.Errorf("RunsArbitraryCode(%q) = true, want false", w)
		}
	}
}

// The words SimpleWords returns are the words bash would pass: checked by
// letting bash assign them with `set --` (which runs nothing) and print
// them. Only fixed, reviewed inputs go to bash, never generated ones.
func TestSimpleWordsMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	for _, cmd := range []string{
		`git status -s`,
		`'git' "status"`,
		`r''m -rf x`,
		`\rm \-rf \ x`,
		`echo 'a b' "c\"d" "e\\f" "g\h" 'i\j'`,
		"echo a\\\nb",
		`echo "a\$b" '$c' "\` + "`" + `"`,
		`echo \*.go '*' "?"`,
		`echo a~b "~" 'x=~'`,
		`find . -name x -exec echo {} \;`,
		`echo "a"'b'c"d e"`,
		`echo '' ""`,
		`echo ab\#c #comment`,
	} {
		want, err := SimpleWords(cmd)
		if err != nil {
			t.Errorf("SimpleWords(%q): %v", cmd, err)
			continue
		}
		out, err := exec.CommandContext(t.Context(), bash, "--norc", "--noprofile", "-c", "set -- "+cmd+"\nprintf '%s\\0' \"$@\"").Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", cmd, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, want) {
			t.Errorf("%q: SimpleWords %q, bash %q", cmd, want, got)
		}
	}
}

// decodeANSIC (used so deny rules see through $'\x72m') agrees with bash.
func TestDecodeANSICMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	for _, body := range []string{`\x72m`, `\162m`, `\u0072m`, `\U00000072m`, `a\'b`, `\t\n\\`, `\cA`, `\e[0m`, `\x7`, `\q`} {
		got, ok := decodeANSIC(body)
		if !ok {
			t.Errorf("decodeANSIC(%q) failed", body)
			continue
		}
		out, err := exec.CommandContext(t.Context(), bash, "--norc", "--noprofile", "-c", "set -- $'"+body+"'\nprintf '%s' \"$1\"").Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", body, err)
		}
		if got != string(out) {
			t.Errorf("decodeANSIC(%q) = %q, bash %q", body, got, out)
		}
	}
}
