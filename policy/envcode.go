package policy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Environment variables that decide what code runs. Setting one, wherever
// the assignment is written (VAR=… cmd, export, declare -x, local,
// readonly, env VAR=… cmd), is never allowed by rules; where the value is
// itself code (a command line, a prompt string bash expands, a git config
// value) it is analysed as such, so deny rules see the rm in
// GIT_SSH_COMMAND='rm -rf x' or PS4='$(rm -rf x)'.

// codeVariable names environment variables whose value a program runs as a
// command line: FOO='rm -rf /' git fetch runs it.
func codeVariable(name string) bool {
	switch name {
	case "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF",
		"GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN",
		"LESSCLOSE", "PROMPT_COMMAND", "BROWSER", "RSYNC_RSH", "GIT_PROXY_COMMAND", "FCEDIT", "SYSTEMD_PAGER",
		"GIT_DIFF_OPTS", "GIT_TRACE_REDACT", "SYSTEMD_EDITOR", "SUDO_EDITOR", "CVS_RSH", "RSH",
		"DIFFTOOL", "MERGETOOL", "GPG_TTY_COMMAND", "TEXEDIT", "BZR_EDITOR", "HGEDITOR", "SVN_EDITOR",
		"KUBECTL_EXTERNAL_DIFF", "KUBE_EDITOR", "GH_PAGER", "GH_EDITOR", "GH_BROWSER", "AWS_PAGER", "BAT_PAGER",
		"DELTA_PAGER", "PSQL_PAGER", "PSQL_EDITOR", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER",
		"GIT_SEQUENCE_EDITOR_COMMAND", "JJ_PAGER", "JJ_EDITOR", "HG_PAGER", "SSH_ASKPASS_REQUIRE_COMMAND",
		"RSYNC_CONNECT_PROG", "FZF_DEFAULT_COMMAND":
		return true
	}
	if strings.HasPrefix(name, "CARGO_TARGET_") && strings.HasSuffix(name, "_RUNNER") {
		return true // cargo run and cargo test start the binary through it
	}
	return strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// codeLoadingValue reports whether NAME=VALUE makes a program load code
// the value names, which no Runs: line shows (env LD_PRELOAD=./x.so ls was
// allowed in mode full): a shared library (LD_PRELOAD, LD_AUDIT,
// DYLD_INSERT_LIBRARIES, GCONV_PATH's modules), a script a shell reads as
// it starts (BASH_ENV, ENV), a debugger (PERL5DB), the programs git runs
// for its subcommands and remote helpers (GIT_EXEC_PATH), or a module an
// interpreter's options load (NODE_OPTIONS=--require x.js, PERL5OPT=-Mx,
// RUBYOPT=-rx, JAVA_TOOL_OPTIONS=-javaagent:x.jar). NODE_OPTIONS=
// --max-old-space-size=4096 loads nothing.
func codeLoadingValue(name, value string) bool {
	value = strings.TrimSpace(value)
	switch name {
	case "LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "GCONV_PATH", "PERL5DB", "GIT_EXEC_PATH":
		return value != ""
	case "BASH_ENV", "ENV":
		return value != "" && value != "/dev/null"
	}
	var loaders []string
	switch name {
	case "NODE_OPTIONS":
		loaders = []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "--experimental-policy", "--env-file"}
	case "PERL5OPT":
		loaders = []string{"-M", "-m", "-d", "-I"}
	case "RUBYOPT":
		loaders = []string{"-r", "-I"}
	case "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS":
		loaders = []string{"-javaagent", "-agentpath", "-agentlib", "-Xbootclasspath", "-XX:OnOutOfMemoryError", "-XX:OnError", "@"}
	default:
		return false
	}
	if strings.Contains(value, anyText) {
		return true // a value not known until run time
	}
	for _, f := range strings.Fields(value) {
		for _, l := range loaders {
			if strings.HasPrefix(f, l) {
				return true
			}
		}
	}
	return false
}

// expandedVariable names variables whose value bash itself expands (and
// so runs the command substitutions in): the prompt strings (PS4 with
// bash -x) and the startup file names BASH_ENV and ENV.
func expandedVariable(name string) bool {
	switch name {
	case "PS0", "PS1", "PS2", "PS3", "PS4", "BASH_ENV", "ENV", "MAILPATH", "MAIL":
		return true
	}
	return false
}

// configVariable names variables that change which code a later command
// runs, or how the shell reads it: never allowed by rules.
func configVariable(name string) bool {
	if codeVariable(name) || expandedVariable(name) {
		return true
	}
	switch name {
	case "PATH", "IFS", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "BASH_LOADABLES_PATH", "BASH_XTRACEFD",
		"POSIXLY_CORRECT", "HISTFILE", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE", "PYTHONEXECUTABLE",
		"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "NPM_CONFIG_SCRIPT_SHELL", "NPM_CONFIG_USERCONFIG",
		"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "GEM_HOME", "GEM_PATH",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
		"GOFLAGS", "GOENV", "GOTOOLCHAIN", "GOPATH", "GOROOT", "CC", "CXX", "CGO_CFLAGS", "CGO_LDFLAGS",
		"RUSTC", "RUSTC_WRAPPER", "RUSTFLAGS", "CARGO_HOME", "CARGO_BUILD_RUSTC_WRAPPER",
		"MAKEFLAGS", "MAKEFILES", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF",
		"TERMINFO", "INPUTRC", "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "GCC_COMPARE_DEBUG", "LESSKEY", "ZDOTDIR", "SSH_AUTH_SOCK", "SSH_CONFIG", "KUBECONFIG", "DOCKER_HOST",
		"GNUPGHOME", "CURL_HOME", "WGETRC", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG",
		"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_DIR", "GIT_WORK_TREE",
		"GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER", "GIT_NAMESPACE":
		return true
	}
	// Every GIT_ variable (GIT_TRACE writes a file, GIT_CEILING_DIRECTORIES
	// and GIT_DISCOVERY_ACROSS_FILESYSTEM change which repository and so
	// which configuration git uses), and the variables that point the
	// clouds' and clusters' tools at another endpoint, account or config.
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "npm_config_", "PIP_", "UV_", "POETRY_",
		"CARGO_", "RUSTC", "DOCKER_", "AWS_", "GH_", "HELM_", "CLOUDSDK_", "VAULT_", "KUBE", "GOOGLE_APPLICATION_CREDENTIALS",
		"AZURE_CONFIG_DIR", "YARN_", "PNPM_", "BUN_", "DENO_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// writtenVariable names environment variables whose value is a file or
// directory a program writes, as an output option names one would:
// DEPENDENCIES_OUTPUT=.env gcc -E a.c writes .env (gcc's -MD in the
// environment; SUNPRO_DEPENDENCIES the same, its value "FILE TARGET"), and
// go writes its build cache, module cache, temporary files and coverage
// data where GOCACHE, GOMODCACHE, GOTMPDIR and GOCOVERDIR say. The value
// is judged as a write wherever the assignment is written (VAR=… cmd,
// export, env VAR=…), as configVariable is: a program that never reads it
// makes the judgement only stricter.
func writtenVariable(name string) bool {
	switch name {
	case "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "GOCACHE", "GOMODCACHE", "GOTMPDIR", "GOCOVERDIR",
		"SSLKEYLOGFILE", "LESSHISTFILE", "HISTFILE", "PYTHONPYCACHEPREFIX", "NODE_REPL_HISTORY", "GCOV_PREFIX",
		"LLVM_PROFILE_FILE", "GMON_OUT_PREFIX",
		// git's work tree: checkout, reset, merge and stash write the
		// tracked files there.
		"GIT_WORK_TREE":
		return true
	}
	return false
}

// optionVariable names environment variables a program reads as more of
// its own command line (or as the path of a file of options): GNU tar
// prepends TAR_OPTIONS to its arguments, so
// TAR_OPTIONS='--to-command=rm\ -f\ zz' tar -xf out/a.tar ran rm; man
// MANOPT (-P PAGER), unzip UNZIPOPT (-d DIR), rg the file
// RIPGREP_CONFIG_PATH names (--pre CMD). The policy reads options on the
// command line only, through each program's table; options from here it
// does not read, so a value makes the reading incomplete.
func optionVariable(name string) bool {
	switch name {
	case "TAR_OPTIONS", "UNZIP", "UNZIPOPT", "ZIPOPT", "ZIP", "GZIP", "XZ_OPT", "XZ_DEFAULTS", "BZIP", "BZIP2",
		"LESS", "MORE", "SYSTEMD_LESS", "MANOPT", "RIPGREP_CONFIG_PATH", "BAT_OPTS", "BAT_CONFIG_PATH",
		"FZF_DEFAULT_OPTS", "PARALLEL", "GREP_OPTIONS", "ZSTD_CLEVEL", "ZSTD_NBTHREADS", "LZ4_CLEVEL",
		"RSYNC_ARGS", "WGET_ARGS", "CURL_OPTS", "SSH_OPTS":
		return true
	}
	return false
}

// firstField is the file name of a written variable's value: up to the
// first blank (gcc reads DEPENDENCIES_OUTPUT as "FILE TARGET").
func firstField(v word) word {
	if i := strings.IndexAny(v.loose, " \t\n"); i > 0 && v.ok {
		f := v.loose[:i]
		return word{lit: f, ok: true, loose: f}
	}
	return v
}

// assignment judges NAME=VALUE wherever it is written.
func (z *analyzer) assignment(name string, value word, depth int) {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	z.noteValue(name, factsOf(value), value)
	z.noteDash(name, value.loose)
	if codeLoadingValue(name, value.loose) {
		z.a.cannotRead("an assignment to " + name + " that loads code a program runs (" + clip(printable(strings.ReplaceAll(value.loose, anyText, "…")), 60) + "), which Runs: does not show")
	}
	if configVariable(name) {
		z.a.refuseAllow("an assignment to " + name + ", which decides what code programs run")
		// A file or directory it names that the command wrote (a list
		// such as PATH or MAKEFILES, any of them) is code unread.
		for _, f := range strings.FieldsFunc(value.loose, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' }) {
			z.writtenConfig(word{loose: f}, name)
		}
	}
	if strings.HasPrefix(name, "GIT_TRACE") && (strings.HasPrefix(value.loose, "/") || strings.HasPrefix(value.loose, "~") || !value.known()) {
		// git appends its trace to an absolute path (GIT_TRACE2's to a
		// new file in it, if it is a directory); a value the policy
		// cannot see may be one (GIT_TRACE=$PWD/.env wrote .env), and
		// so is ~/t once bash has expanded it.
		if strings.HasPrefix(name, "GIT_TRACE2") && value.ok && z.isDir(value.lit) {
			z.treeWrite(value, name)
		} else {
			z.writeWord(value, name)
		}
	}
	if optionVariable(name) && value.loose != "" {
		z.a.cannotRead("$" + name + " holds options a program reads as its own, which the policy does not read there")
	}
	if writtenVariable(name) && value.loose != "" {
		z.writeWord(firstField(value), name)
	}
	switch {
	case codeVariable(name):
		z.scriptValue(value, depth, true, !readsInputOnly(name))
	case strings.HasPrefix(name, "BASH_FUNC_"):
		// An exported function: the value is its body, "() { …; }".
		if value.known() {
			z.script("f"+value.loose, depth+1, false)
		} else {
			z.unknown("an exported function that is not literal")
		}
	case name == "GIT_CONFIG_PARAMETERS":
		z.gitConfigParameters(value, depth)
	case name == "BASH_ENV" || name == "ENV":
		z.scriptPath(value, name) // the file bash sources before the script
	case name == "GOFLAGS" && value.known():
		// go's flags, read as they are on go's command line; what they
		// run is a guess, as go may not be what the variable reaches.
		var flags []word
		for _, f := range strings.Fields(value.loose) {
			flags = append(flags, word{loose: f, lit: f, ok: true})
		}
		z.goCodeFlags(flags)
		z.guessing++
		for _, in := range goFlagPrograms(flags) {
			z.inner("go", in, depth)
		}
		z.guessing--
	default:
		z.programValue(value, depth)
	}
	// Any value holding a substitution may be evaluated later: PS4 and
	// BASH_ENV by bash itself, others by arithmetic (declare -i, [[ -eq ]])
	// or a nameref.
	z.expansions(value.loose, depth)
}

// programValue guesses at a command line in the value of a variable not
// known to hold one, whose first word names a watched program: CC='rm x'
// make and RUSTC=rm cargo build ran rm, and no list of the variables
// programs run is whole. The command is a guess (hiddenRuns makes the same
// of a word of a program the policy does not model): deny rules and
// dangers look at it. A shell or an interpreter alone (SHELL=/bin/bash)
// runs nothing the line names.
func (z *analyzer) programValue(v word, depth int) {
	f := strings.Fields(v.loose)
	if !v.known() || len(f) == 0 || !watchedProgram(path.Base(f[0])) {
		return
	}
	if _, interp := codeInterpreterOf(path.Base(f[0])); len(f) == 1 && (isShell(path.Base(f[0])) || interp) {
		return
	}
	z.guessing++
	z.script(v.loose, depth+1, false)
	z.guessing--
}

// scriptValue analyses a value a program runs as a command line (a leading
// | or ! is how some programs mark one): through sh -c where viaShell,
// and with the program's own arguments after it where args (withArgs).
func (z *analyzer) scriptValue(v word, depth int, viaShell, args bool) {
	v.loose = strings.TrimLeft(v.loose, "|! ")
	in := scriptOf(v)
	if in.scriptUnknown {
		z.unknown("a variable that holds code is set to a value that is not literal")
		return
	}
	if viaShell {
		z.command(simple{words: transportOf("sh").words, transport: true}, depth+1)
	}
	if args {
		in = withArgs([]inner{in})[0]
	}
	z.script(in.script, depth+1, false)
}

// readsInputOnly names the code variables whose command gets no arguments
// of its program's: a pager reads its input, PROMPT_COMMAND and
// FZF_DEFAULT_COMMAND run alone, LESSOPEN and RSYNC_CONNECT_PROG put
// their file or host in the line itself (%s, %H); GIT_DIFF_OPTS and
// GIT_TRACE_REDACT are options, not commands. Every other one (an
// editor, an askpass, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, a wrapper, a
// git config value) gets arguments after it.
func readsInputOnly(name string) bool {
	switch name {
	case "PROMPT_COMMAND", "FZF_DEFAULT_COMMAND", "LESSOPEN", "LESSCLOSE", "RSYNC_CONNECT_PROG", "GIT_DIFF_OPTS",
		"GIT_TRACE_REDACT":
		return true
	}
	return strings.HasSuffix(name, "PAGER")
}

// gitConfigParameters reads GIT_CONFIG_PARAMETERS ('key'='value' pairs,
// quoted as the shell quotes) and analyses the values git runs.
func (z *analyzer) gitConfigParameters(v word, depth int) {
	if !v.known() {
		z.unknown("GIT_CONFIG_PARAMETERS is not literal")
		return
	}
	var words []string
	for w, err := range syntax.NewParser(syntax.Variant(syntax.LangBash)).WordsSeq(strings.NewReader(v.loose)) {
		if err != nil {
			z.unknown("GIT_CONFIG_PARAMETERS does not parse")
			return
		}
		words = append(words, wordOf(w).loose)
	}
	for _, kv := range words {
		// Every value: a key git runs may be spelt in many ways (case,
		// subsections), and a value that is not code costs nothing.
		if key, val, ok := strings.Cut(kv, "="); ok {
			z.scriptValue(word{loose: val}, depth, true, !gitPagerKey(strings.ToLower(key)))
		}
	}
}

// envOperands handles env's NAME=VALUE operands, which set the
// environment of the command env runs.
func (z *analyzer) envOperands(ws []word, depth int) {
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		switch {
		case strings.Contains(l, "=") && !strings.HasPrefix(l, "-"):
			// env takes any NAME=VALUE, even a name bash would refuse
			// (BASH_FUNC_ls%%=() { …; } defines a function for bash).
			n, v, _ := strings.Cut(l, "=")
			z.assignment(n, word{loose: v}, depth)
			_, lit, _ := strings.Cut(ws[i].lit, "=")
			z.environmentFiles(word{loose: v, lit: lit, ok: ws[i].ok})
		case l == "-u" || l == "-C" || l == "--unset" || l == "--chdir":
			i++
		case l == "--" || !strings.HasPrefix(l, "-"):
			return
		}
	}
}

// shellStateCommands handles builtins that change what a later name runs:
// hash -p PATH NAME (NAME now runs PATH) and enable -f (a builtin loaded
// from a shared object).
func (z *analyzer) shellStateCommands(name string, ws []word, depth int) {
	switch name {
	case "hash":
		for i := 1; i < len(ws); i++ {
			l := ws[i].loose
			var target word
			switch {
			case l == "--" || !strings.HasPrefix(l, "-"):
				return
			case strings.HasSuffix(l, "p") && i+1 < len(ws):
				target = ws[i+1]
				i++
			case strings.Contains(l, "p") && !strings.HasSuffix(l, "p"):
				target = word{loose: l[strings.IndexByte(l, 'p')+1:]}
			default:
				continue
			}
			// Later uses of the name run target with unknown arguments.
			z.command(simple{words: []word{target, {loose: anyText, splat: true}}, guess: true}, depth+1)
		}
	case "alias":
		// Bash expands an alias on the lines after it when expand_aliases
		// is set (shopt, set -o posix, an interactive shell): alias a=eval
		// makes `a 'rm …'` run rm, and no later word is then what it reads.
		for _, w := range ws[1:] {
			if !w.known() || strings.Contains(w.loose, "=") {
				z.a.cannotRead("alias changes what a later word runs")
				return
			}
		}
	case "fc":
		// fc re-runs history lines (history -s adds any text) and runs an
		// editor on them: only listing (-l) runs nothing.
		for _, w := range ws[1:] {
			if strings.HasPrefix(w.loose, "-") && strings.Contains(w.loose, "l") && w.known() {
				return
			}
		}
		z.a.cannotRead("fc runs history lines and an editor the policy does not read")
	case "shopt":
		// cdable_vars: cd NAME goes to the directory $NAME holds.
		for _, w := range ws[1:] {
			if !w.known() || w.loose == "cdable_vars" {
				z.a.cannotRead("shopt cdable_vars makes cd go where a variable says")
				return
			}
		}
	case "enable":
		for _, w := range ws[1:] {
			if strings.HasPrefix(w.loose, "-") && strings.Contains(w.loose, "f") || !w.known() {
				z.unknown("enable -f loads a builtin from a shared object")
				return
			}
			if strings.HasPrefix(w.loose, "-") && strings.Contains(w.loose, "n") {
				// A disabled builtin's name runs a program found on PATH
				// instead (enable -n cd: cd no longer changes directory).
				z.a.cannotRead("enable -n disables a builtin, so its name runs something else")
				return
			}
		}
	}
}
