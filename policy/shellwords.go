package policy

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// parseShell parses command as bash. A fresh parser per call: syntax.Parser
// is not safe for concurrent use and is cheap to make. A command past the
// bounds of bounds.go is an error, as if it did not parse: never allowed,
// and checked against deny rules from a rough split.
func parseShell(command string) (*syntax.File, error) {
	if err := checkNesting(command); err != nil {
		return nil, err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, err
	}
	if err := checkTree(f); err != nil {
		return nil, err
	}
	return f, nil
}

// SimpleWords returns the literal words of command iff it is exactly one
// simple command made only of literal words (quotes allowed): no pipes, ;,
// &&, ||, redirections, assignments, substitutions, parameter expansion,
// globs, tilde or brace expansion, subshells, here-docs, negation or
// background &. Otherwise an error says why (or is the parse error).
//
// Grants use it to decide whether a command may be granted by prefix.
func SimpleWords(command string) ([]string, error) {
	f, err := parseShell(command)
	if err != nil {
		return nil, fmt.Errorf("command does not parse: %w", err)
	}
	if len(f.Stmts) != 1 {
		if len(f.Stmts) == 0 {
			return nil, errors.New("empty command")
		}
		return nil, errors.New("more than one command (;, & or newline)")
	}
	st := f.Stmts[0]
	switch {
	case st.Background || st.Coprocess || st.Disown:
		return nil, errors.New("runs in the background")
	case st.Negated:
		return nil, errors.New("negated (a leading !)")
	case len(st.Redirs) > 0:
		return nil, errors.New("has a redirection or here-document")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, fmt.Errorf("not a simple command (%s)", commandKind(st.Cmd))
	}
	if len(call.Assigns) > 0 {
		return nil, errors.New("has a variable assignment")
	}
	if len(call.Args) == 0 {
		return nil, errors.New("empty command")
	}
	words := make([]string, 0, len(call.Args))
	for i, w := range call.Args {
		s, why := literalWord(w)
		if why != "" {
			return nil, fmt.Errorf("word %d is not literal: %s", i+1, why)
		}
		words = append(words, s)
	}
	return words, nil
}

func commandKind(c syntax.Command) string {
	switch c.(type) {
	case *syntax.BinaryCmd:
		return "a pipeline or && / || list"
	case *syntax.Subshell:
		return "a subshell"
	case *syntax.Block:
		return "a { } block"
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause:
		return "a control structure"
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.DeclClause:
		return "a declaration"
	case *syntax.ArithmCmd, *syntax.LetClause:
		return "arithmetic"
	case *syntax.TestClause:
		return "a [[ ]] test"
	case *syntax.TimeClause:
		return "a time clause"
	case *syntax.CoprocClause:
		return "a coprocess"
	case nil:
		return "no command"
	}
	return fmt.Sprintf("%T", c)
}

// literalWord returns the value the shell would give w, when that value
// depends on nothing but the text: quotes and backslashes removed. Otherwise
// why says what makes it non-literal (expansion, substitution, glob, ...).
func literalWord(w *syntax.Word) (s string, why string) {
	if w == nil || len(w.Parts) == 0 {
		return "", "empty word"
	}
	// Fast path: the common single unquoted literal without specials.
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[~{") {
			return l.Value, ""
		}
	}
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if why := unquotedLit(&b, p.Value, i == 0); why != "" {
				return "", why
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", "ANSI-C $'…' quoting"
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", `locale $"…" quoting`
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", expansionKind(q)
				}
				dquotedLit(&b, l.Value)
			}
		default:
			return "", expansionKind(p)
		}
	}
	return b.String(), ""
}

func expansionKind(p syntax.WordPart) string {
	switch p := p.(type) {
	case *syntax.ParamExp:
		return "parameter expansion"
	case *syntax.CmdSubst:
		return "command substitution"
	case *syntax.ArithmExp:
		return "arithmetic expansion"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ExtGlob:
		return "extended glob"
	case *syntax.BraceExp:
		return "brace expansion"
	default:
		return fmt.Sprintf("%T", p)
	}
}

// unquotedLit appends an unquoted literal's value, removing backslashes,
// and refuses globs, tilde and brace expansion, whose result depends on the
// file system or environment.
func unquotedLit(b *strings.Builder, v string, first bool) string {
	if strings.Contains(v, "{") && (strings.Contains(v, ",") || strings.Contains(v, "..")) {
		// Possible brace expansion; {} alone (find -exec) stays literal.
		if braceLike(v) {
			return "brace expansion"
		}
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
		case '*', '?', '[':
			return "glob"
		case '~':
			if (first && i == 0) || (i > 0 && (v[i-1] == '=' || v[i-1] == ':')) {
				return "tilde expansion"
			}
		}
		b.WriteByte(c)
	}
	return ""
}

// braceLike reports an unescaped {…,…} or {a..b} in v.
func braceLike(v string) bool {
	depth, start := 0, -1
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					inner := v[start+1 : i]
					if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
						return true
					}
				}
			}
		}
	}
	return false
}

// dquotedLit appends a literal from inside double quotes, where a backslash
// only escapes $ ` " \ and newline.
func dquotedLit(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(v[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// RunsArbitraryCode reports whether a command starting with words runs code
// given to it — in its arguments, options or a file — so that a prefix grant
// on it would allow anything: shells and interpreters, wrappers that run
// another command (env, sudo, xargs, timeout, nice, ...), tools with a
// code-running option (find -exec, tar --to-command, git -c, rsync -e, ...),
// build and task runners, and remote/container exec. It is deliberately
// generous: a false "true" only costs a narrower grant.
//
// Call it on a prefix when recording a prefix grant and again on the full
// words of a command when matching one: a prefix such as "git push" is
// harmless, but "git push --receive-pack=…" is not.
func RunsArbitraryCode(words []string) bool {
	if len(words) == 0 {
		return true // nothing to judge: fail closed
	}
	name := path.Base(words[0])
	if name == "" || name == "." || name == "/" || strings.ContainsAny(words[0], "=$`") {
		return true
	}
	if alwaysRunsCode(name) {
		return true
	}
	if strings.Contains(words[0], "/") && !path.IsAbs(words[0]) {
		return true // ./build.sh, bin/tool: a file in the workspace the agent can rewrite
	}
	switch path.Ext(name) {
	case ".sh", ".bash", ".zsh", ".py", ".rb", ".pl", ".js", ".mjs", ".cjs", ".ts", ".php", ".lua", ".ps1", ".bat", ".cmd":
		return true
	}
	args := words[1:]
	if hasCodeOption(name, args) {
		return true
	}
	if runsOtherPrograms(words) {
		return true
	}
	sub, rest := subcommand(name, args)
	switch name {
	case "git":
		if sub == "" {
			return true // `git` alone: -c, aliases, config can run anything
		}
		switch sub {
		case "config", "submodule", "bisect", "rebase", "difftool", "mergetool",
			"filter-branch", "filter-repo", "daemon", "instaweb", "credential",
			"send-email", "-c", "--exec-path", "help", "var", "hook", "run", "p4", "svn", "remote-ext":
			return true
		}
		for _, a := range rest {
			if a == "-x" || a == "--exec" || a == "-u" || strings.HasPrefix(a, "--receive-pack") ||
				strings.HasPrefix(a, "--upload-pack") || strings.HasPrefix(a, "--exec") ||
				strings.HasPrefix(a, "--extcmd") || strings.HasPrefix(a, "--tool") ||
				strings.HasPrefix(a, "--config") || strings.HasPrefix(a, "ext::") ||
				strings.HasPrefix(a, "--ssh") {
				return true
			}
		}
		if sub == "push" && gitPushesLocally(rest) {
			return true
		}
		return false
	case "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "dotnet", "mix", "stack", "cabal",
		"poetry", "pipenv", "uv", "pdm", "hatch", "conda", "mamba", "pixi", "bundle", "gem", "composer",
		"pip", "pip3", "pipx", "rye", "swift", "dart", "flutter":
		if sub == "" {
			return true
		}
		switch sub {
		case "exec", "x", "dlx", "run", "run-script", "rs", "eval", "repl", "shell", "generate",
			"tool", "script", "scripts", "create", "init", "install-test", "it", "explore", "edit",
			"config", "set", "env", "watch", "start", "restart", "stop", "task", "console",
			"install", "i", "add", "ci", "update", "upgrade", "rebuild", "pack", "publish",
			"-e", "-c", "--eval", "--exec":
			return true
		}
		for _, a := range rest {
			if strings.HasPrefix(a, "--script-shell") || strings.HasPrefix(a, "--node-options") ||
				strings.HasPrefix(a, "--exec") || a == "-exec" || strings.HasPrefix(a, "-exec=") ||
				strings.HasPrefix(a, "-toolexec") || strings.HasPrefix(a, "--toolexec") ||
				strings.HasPrefix(a, "-vettool") || strings.HasPrefix(a, "--vettool") || strings.HasPrefix(a, "--config") ||
				strings.HasPrefix(a, "--userconfig") || strings.HasPrefix(a, "--globalconfig") ||
				strings.HasPrefix(a, "--require") || a == "-r" || strings.HasPrefix(a, "--import") ||
				strings.HasPrefix(a, "--loader") || strings.HasPrefix(a, "--preload") {
				return true
			}
		}
		return false
	case "docker", "podman", "nerdctl", "kubectl", "oc", "k3s", "crictl", "ctr", "lxc", "incus",
		"vagrant", "gcloud", "aws", "az", "heroku", "fly", "flyctl", "systemctl", "service", "launchctl":
		if sub == "" {
			return true
		}
		switch sub {
		case "ps", "images", "logs", "inspect", "version", "info", "stats", "top", "port", "diff",
			"history", "get", "describe", "explain", "api-resources", "api-versions", "status",
			"list-units", "is-active", "is-enabled":
			for _, a := range rest {
				if strings.HasPrefix(a, "--exec") || strings.HasPrefix(a, "--kubeconfig") ||
					strings.HasPrefix(a, "--config") || strings.HasPrefix(a, "--context") ||
					strings.HasPrefix(a, "-H") || strings.HasPrefix(a, "--host") {
					return true
				}
			}
			return false
		}
		return true
	}
	return false
}

// alwaysRunsCode lists commands whose purpose is to run other code, or that
// can be made to by an option appended after any prefix.
func alwaysRunsCode(name string) bool {
	switch name {
	// shells
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "ash", "fish", "csh", "tcsh",
		"yash", "rbash", "busybox", "toybox", "elvish", "nu", "xonsh", "oil", "osh", "ysh",
		// interpreters and compilers that run what they are given
		"node", "nodejs", "deno", "bun", "bunx", "npx", "pnpx", "tsx", "ts-node", "perl", "ruby", "irb",
		"php", "lua", "luajit", "tclsh", "wish", "expect", "Rscript", "R", "julia", "osascript",
		"pwsh", "powershell", "awk", "gawk", "mawk", "nawk", "busybox-awk", "sed", "gsed", "perl6",
		"raku", "groovy", "scala", "java", "jshell", "kotlin", "erl", "escript", "elixir", "iex",
		"ghc", "ghci", "runghc", "runhaskell", "swift", "guile", "racket", "sbcl", "clisp", "ocaml",
		"gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "gdb", "lldb", "vim", "vi", "nvim",
		"view", "ex", "emacs", "nano", "ed", "less", "more", "man", "yq", "dc", "bc", "m4",
		"sqlite3", "psql", "mysql", "redis-cli", "ipython", "jupyter", "sage", "octave", "matlab",
		// wrappers that run another command
		"env", "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp", "xargs", "eval", "exec",
		"command", "builtin", "nice", "renice", "nohup", "timeout", "time", "watch", "strace",
		"ltrace", "valgrind", "perf", "parallel", "stdbuf", "ionice", "chrt", "taskset", "setsid",
		"flock", "unbuffer", "chroot", "unshare", "nsenter", "firejail", "bwrap", "proot",
		"fakeroot", "systemd-run", "script", "tmux", "screen", "at", "batch", "crontab", "entr",
		"prlimit", "ssh-agent", "gpg-agent", "dbus-launch", "setarch", "linux32", "linux64", "i386", "x86_64",
		"uname26", "setpriv", "runcon", "numactl", "faketime", "torsocks", "proxychains", "proxychains4",
		"tsocks", "cpulimit", "trickle", "watchexec", "daemonize", "softlimit", "dtach", "abduco",
		"systemd-nspawn", "eatmydata", "nocache", "pgrphack", "envdir", "setuidgid", "envuidgid", "lckdo", "capsh",
		"caffeinate", "coproc", "source", ".", "trap", "alias", "enable", "hash", "declare",
		"typeset", "export", "set", "shopt", "let", "local", "readonly", "function", "select",
		"then", "do", "if", "while", "until", "for", "case", "{", "(", "!", "[[", "((",
		"find", "gfind", "fd", "tar", "gtar", "bsdtar", "zip", "rsync", "ssh", "scp", "sftp",
		"mosh", "telnet", "nc", "ncat", "socat", "curl", "wget", "open", "xdg-open",
		"dpkg", "apt", "apt-get", "yum", "dnf", "rpm", "brew", "snap", "flatpak",
		"make", "gmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "buck", "pants", "just",
		"task", "rake", "gradle", "gradlew", "./gradlew", "mvn", "mvnw", "ant", "sbt", "lein",
		"tox", "nox", "invoke", "fab", "ansible", "ansible-playbook", "terraform", "tofu",
		"pulumi", "helm", "skaffold", "tilt", "docker-compose", "vagrant-ssh", "sshpass",
		"pytest", "py.test", "jest", "vitest", "mocha", "karma", "rspec", "phpunit",
		"pre-commit", "husky", "lefthook", "direnv", "nix", "nix-shell", "nix-build", "guix",
		"asdf", "mise", "rtx", "nvm", "pyenv", "rbenv", "sdk", "volta", "corepack":
		return true
	}
	for _, p := range []string{"python", "pypy", "perl", "ruby", "php", "lua", "node", "tclsh", "pwsh", "jython", "ipython", "gcc-", "clang-", "g++-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// hasCodeOption catches generic code-running options on otherwise harmless
// commands (e.g. `grep`, `less` with LESSOPEN-like hooks are covered above).
func hasCodeOption(name string, args []string) bool {
	for _, a := range args {
		switch {
		case a == "-exec", a == "-execdir", a == "-ok", a == "-okdir",
			strings.HasPrefix(a, "--to-command"), strings.HasPrefix(a, "--checkpoint-action"),
			strings.HasPrefix(a, "--use-compress-program"), strings.HasPrefix(a, "--rsh"),
			strings.HasPrefix(a, "--pager"), strings.HasPrefix(a, "--editor"),
			strings.HasPrefix(a, "--preprocessor"), strings.HasPrefix(a, "--pre="), a == "--pre":
			return true
		}
	}
	return false
}

// subcommand returns the first non-option argument (skipping the global
// options of a few well-known tools that take a value) and what follows it.
func subcommand(name string, args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], args[i+2:]
			}
			return "", nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return a, args[i+1:]
		}
		// -c for git and many tools changes configuration: report it as the
		// "subcommand" so callers treat it as code-running.
		if a == "-c" || a == "-e" || a == "--eval" || a == "--exec" {
			return a, args[i+1:]
		}
		if takesValue(name, a) {
			i++
		}
	}
	return "", nil
}

func takesValue(name, opt string) bool {
	if strings.Contains(opt, "=") {
		return false
	}
	switch name {
	case "git":
		switch opt {
		case "-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path":
			return true
		}
	case "docker", "podman", "nerdctl":
		switch opt {
		case "-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey":
			return true
		}
	case "kubectl", "oc":
		switch opt {
		case "-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--token", "-o", "--output":
			return true
		}
	case "npm", "pnpm", "yarn":
		switch opt {
		case "--prefix", "-C", "--dir", "--cwd", "-w", "--workspace", "--filter", "-F":
			return true
		}
	case "cargo":
		switch opt {
		case "--manifest-path", "-Z", "--config", "--color", "-C":
			return true
		}
	case "go":
		switch opt {
		case "-C":
			return true
		}
	}
	return false
}

// runsOtherPrograms reports whether the policy's own analysis of words
// finds a program they run besides the first (sort --comp=sh, git push
// --rec=PROG: any abbreviation the analysis reads) or a built-in danger.
// The option lists above know the common spellings; this knows every one
// the analysis knows, so a prefix grant on "sort" or "git push" never
// covers a command that runs something else.
func runsOtherPrograms(words []string) bool {
	quoted := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return true
		}
		quoted[i] = q
	}
	a := analyzeCommand(strings.Join(quoted, " "), "", "", nil)
	// A transport (git's or scp's ssh) is the program's own way out, not
	// another program it runs for the caller.
	own := slices.DeleteFunc(slices.Clone(a.cmds), func(s simple) bool { return s.transport })
	return a.parseErr != nil || len(own) != 1 || len(a.dangers) > 0
}

// gitPushesLocally reports a git push (its arguments after "push") to a
// repository on this machine, whose hooks then run (see gitremote.go): a
// path, file://, or a remote helper (ext::, fd::). A bare name may be a
// directory too; without a working directory that cannot be told here, so
// it is left to the analysis (a name the agent made a repository of in an
// earlier call is a known gap, see gitremote.go).
func gitPushesLocally(args []string) bool {
	ws := make([]word, len(args))
	for i, a := range args {
		ws[i] = word{lit: a, ok: true, loose: a}
	}
	p := parseGitPush(ws)
	var remotes []word
	if len(p.refspecs) > 0 {
		remotes = append(remotes, p.refspecs[0])
	}
	for _, r := range append(remotes, longOptionValues(ws, "--repo", 5)...) {
		l := r.loose
		if strings.Contains(l, "::") || strings.HasPrefix(strings.ToLower(l), "file:") {
			return true
		}
		if !gitNetworkURL(l) && localRepoWord(l) {
			return true
		}
	}
	return false
}
