package policy

import "strings"

// Options that make a program run another command: man's pager, rsync's
// remote rsync, scp's ssh, an editor's or debugger's shell escape, make's
// extra makefile text, git grep's pager, sqlite3's dot-commands. What they
// run is a command line like any other: deny rules and the approver see
// it. Where the option's text is code in the tool's own language, which
// may or may not start a program the policy cannot name (gdb's python,
// vim's :call system()), it is an opaque run: never allowed, and the
// approver is told "an unknown program via …".

// opaque is a program a tool may start that the policy cannot name.
func opaque(via string) inner {
	return inner{opaque: via}
}

// runOptions returns what name's command-running options run; ok is false
// for a program that has none the policy knows.
func runOptions(name string, ws []word) (out []inner, ok bool) {
	switch name {
	case "man":
		return optionScripts(ws, []string{"-P", "--pager", "--html", "-H"}, nil), true
	case "scp", "sftp":
		return scpPrograms(ws), true
	case "vim", "vi", "nvim", "view", "vimdiff", "gvim", "ex", "rvim", "nvi", "evim", "gview":
		return vimCommands(name, ws), true
	case "gdb", "gdb-multiarch", "cgdb":
		return gdbCommands(name, ws), true
	case "make", "gmake", "remake":
		return makeEval(name, ws), true
	case "sqlite3", "sqlite":
		return sqliteCommands(name, ws), true
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		return awkCommands(name, ws), true
	case "psql", "mysql", "mariadb":
		return clientCommands(name, ws), true
	case "less", "more":
		return lessCommands(name, ws), true
	case "lldb":
		return lldbCommands(ws), true
	}
	return nil, false
}

// awkCommands: an awk program runs commands with system("…"), print |
// "…" and "…" | getline. Literal command strings are read as scripts; a
// program with any of those forms whose command is not a literal string,
// or a program from a file (-f), is opaque.
func awkCommands(name string, ws []word) []inner {
	var out []inner
	via := name + " program"
	progSeen := false
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		switch {
		case l == "--":
			continue
		case l == "-f" || l == "--file" || strings.HasPrefix(l, "-f") || strings.HasPrefix(l, "--file=") || l == "-E" || l == "--exec":
			out = append(out, opaque(name+" -f"))
			if !strings.Contains(l, "=") && len(l) <= 2 || l == "--file" || l == "--exec" {
				i++
			}
			progSeen = true
		case l == "-v" || l == "-F" || l == "--assign" || l == "--field-separator" || l == "-W":
			i++
		case strings.HasPrefix(l, "-") && !progSeen:
		case !progSeen:
			progSeen = true
			if !ws[i].known() {
				return append(out, opaque(via))
			}
			out = append(out, awkProgram(l, via)...)
		}
	}
	return out
}

// awkProgram finds the command strings of one awk program text.
func awkProgram(prog, via string) []inner {
	if strings.Contains(prog, "@load") || strings.Contains(prog, "@include") {
		// gawk's @load loads a shared library (AWKLIBPATH), @include
		// another program file (AWKPATH): code the policy does not read.
		return []inner{opaque(via + " (@load or @include)")}
	}
	var out []inner
	for i := 0; i < len(prog); i++ {
		runs := false
		switch {
		case prog[i] == '"' || (prog[i] == '/' && awkRegexStart(prog[:i])):
			// A string or a regular expression: a | in it is text.
			for j := i + 1; j < len(prog); j++ {
				if prog[j] == '\\' {
					j++
					continue
				}
				if prog[j] == prog[i] {
					i = j
					break
				}
			}
		case strings.HasPrefix(prog[i:], "system"):
			j := i + len("system")
			for j < len(prog) && (prog[j] == ' ' || prog[j] == '\t') {
				j++
			}
			if j < len(prog) && prog[j] == '(' {
				i, runs = j, true
			}
		case prog[i] == '|' && i+1 < len(prog) && prog[i+1] == '|':
			i++ // logical or
			continue
		case prog[i] == '|':
			runs = true
			if i+1 < len(prog) && prog[i+1] == '&' {
				i++
			}
		}
		if !runs {
			continue
		}
		// The command: a string literal right after, or one right before
		// (`"cmd" | getline`).
		if lit, ok := awkStringAfter(prog[i+1:]); ok {
			out = append(out, scriptOf(word{loose: lit}))
		} else if lit, ok := awkStringBefore(prog[:i]); ok && prog[i] == '|' {
			out = append(out, scriptOf(word{loose: lit}))
		} else {
			out = append(out, opaque(via))
		}
	}
	return out
}

// awkRegexStart reports whether a / after before starts a regular
// expression (not a division): at the start, or after an operator.
func awkRegexStart(before string) bool {
	before = strings.TrimRight(before, " \t")
	return before == "" || strings.ContainsRune("(,~!&|{};\n", rune(before[len(before)-1]))
}

func awkStringAfter(s string) (string, bool) {
	lit, _, ok := awkString(s)
	return lit, ok
}

func awkStringBefore(s string) (string, bool) {
	s = strings.TrimRight(s, " \t")
	if !strings.HasSuffix(s, `"`) {
		return "", false
	}
	start := strings.LastIndexByte(s[:len(s)-1], '"')
	if start < 0 || strings.Contains(s[start+1:len(s)-1], `\`) {
		return "", false
	}
	return s[start+1 : len(s)-1], true
}

// clientCommands: psql -c/--command and mysql -e/--execute take SQL and
// the client's backslash commands, of which \! (psql, mysql: system) runs
// a shell command; -f/--file and \i read commands from a file (opaque).
func clientCommands(name string, ws []word) []inner {
	var out []inner
	opts := []string{"-c", "--command"}
	if name != "psql" {
		opts = []string{"-e", "--execute"}
	}
	for _, in := range optionScripts(ws, opts, nil) {
		if in.scriptUnknown {
			out = append(out, opaque(name+" "+opts[0]))
			continue
		}
		for _, line := range strings.Split(in.script, "\n") {
			line = strings.TrimSpace(line)
			for _, esc := range []string{`\!`, "system ", `\system `} {
				if rest, ok := strings.CutPrefix(line, esc); ok {
					out = append(out, scriptOf(word{loose: rest}))
				}
			}
			if strings.Contains(line, `\!`) && !strings.HasPrefix(line, `\!`) {
				out = append(out, opaque(name+" "+opts[0]))
			}
		}
	}
	return out
}

// lessCommands: +CMD runs a less command at start; !cmd in it runs a
// shell, | a pipe to a command.
func lessCommands(name string, ws []word) []inner {
	var out []inner
	for _, w := range ws[1:] {
		l := w.loose
		if l == "--" {
			break
		}
		cmd, ok := strings.CutPrefix(l, "+")
		if !ok {
			continue
		}
		cmd = strings.TrimLeft(cmd, "+")
		if i := strings.IndexAny(cmd, "!|"); i >= 0 {
			if !w.known() {
				out = append(out, opaque(name+" +"))
				continue
			}
			rest := cmd[i+1:]
			if cmd[i] == '|' && rest != "" {
				rest = rest[1:] // |m: the mark letter comes first
			}
			out = append(out, scriptOf(word{loose: rest}))
		}
	}
	return out
}

// lldbCommands: -o/--one-line and -O CMD are lldb commands; `platform
// shell CMD` (and its alias `shell`) runs CMD; script runs Python
// (opaque); -s/-S FILE read commands from a file (opaque).
func lldbCommands(ws []word) []inner {
	var out []inner
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		switch {
		case (l == "-o" || l == "-O" || l == "--one-line" || l == "--one-line-before-file" || l == "-k" || l == "--one-line-on-crash") && i+1 < len(ws):
			i++
			c := ws[i]
			if !c.known() {
				out = append(out, opaque("lldb -o"))
				continue
			}
			t := strings.TrimSpace(c.loose)
			if rest, ok := strings.CutPrefix(t, "platform shell "); ok {
				out = append(out, scriptOf(word{loose: rest}))
			} else if rest, ok := strings.CutPrefix(t, "shell "); ok {
				out = append(out, scriptOf(word{loose: rest}))
			} else if strings.HasPrefix(t, "script") || strings.HasPrefix(t, "command script") || strings.HasPrefix(t, "command source") {
				out = append(out, opaque("lldb -o"))
			}
		case (l == "-s" || l == "-S" || l == "--source" || l == "--source-before-file") && i+1 < len(ws):
			out = append(out, opaque("lldb "+l))
			i++
		}
	}
	return out
}

// scpPrograms: -S PROGRAM is run instead of ssh (with ssh's arguments),
// -o ProxyCommand=… and the like are run by the ssh it starts.
func scpPrograms(ws []word) []inner {
	var out []inner
	shells := optionValues(ws[1:], "-S")
	for _, p := range shells {
		out = append(out, inner{words: []word{p, {loose: anyText, splat: true}}})
	}
	name := cmdName(ws[0])
	if name == "sftp" {
		// -D runs a local sftp-server in place of the connection.
		for _, p := range optionValues(ws[1:], "-D") {
			out = append(out, inner{words: []word{p}})
		}
	}
	// Without -S, a host is reached through ssh (scp host:a out/ ran
	// "ssh … host sftp"), and scp copies between two local paths with
	// cp, found on PATH.
	remote, local := name == "sftp" && len(optionValues(ws[1:], "-D")) == 0, 0
	if name == "scp" {
		for _, o := range operandsOf(ws[1:], "cDFiJloPSX", nil) {
			if scpRemote(o) {
				remote = true
			} else {
				local++
			}
		}
	}
	if remote && len(shells) == 0 {
		out = append(out, transportOf("ssh"))
	}
	if local >= 2 {
		out = append(out, transportOf("cp"))
	}
	for _, o := range optionValues(ws[1:], "-o") {
		k, v, ok := strings.Cut(o.loose, "=")
		if !ok {
			k, v, ok = strings.Cut(o.loose, " ")
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "proxycommand", "localcommand", "knownhostscommand":
			if ok {
				// ssh runs it as sh -c "exec LINE".
				out = append(out, throughShell([]inner{scriptOf(word{loose: v})})...)
			}
		}
	}
	return out
}

// scpRemote reports whether an scp operand names a file on another host:
// scp://…, or [USER@]HOST:PATH (a colon before any slash, as git reads
// it too). A word the policy cannot read may be one.
func scpRemote(w word) bool {
	return !w.known() || strings.HasPrefix(strings.ToLower(w.loose), "scp://") || gitNetworkURL(w.loose)
}

// vimCommands: -c CMD, +CMD and --cmd CMD are Ex commands; `!cmd` (also
// after :, silent, read/write) runs cmd in a shell. -S FILE sources a
// script and -u FILE is another vimrc: code the policy cannot read.
func vimCommands(name string, ws []word) []inner {
	var out []inner
	via := name + " -c"
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		var cmd word
		switch {
		case l == "--":
			return out
		case (l == "-c" || l == "--cmd") && i+1 < len(ws):
			cmd = ws[i+1]
			i++
		case strings.HasPrefix(l, "+"):
			cmd = word{loose: l[1:], splat: ws[i].splat}
		case strings.HasPrefix(l, "-c") && len(l) > 2:
			cmd = word{loose: l[2:], splat: ws[i].splat}
		case (l == "-S" || l == "-u" || l == "-U" || l == "--startuptime") && i+1 < len(ws):
			if l != "--startuptime" {
				out = append(out, opaque(name+" "+l))
			}
			i++
			continue
		case strings.HasPrefix(l, "-S") && len(l) > 2:
			out = append(out, opaque(name+" -S"))
			continue
		default:
			continue
		}
		out = append(out, exCommands(cmd, via)...)
	}
	return out
}

// exCommands reads one Ex command line of vim: commands separated by `|`,
// each harmless (a line number, a search, :q, :w, :set …), a shell escape
// whose rest of line is a shell command, or anything else (:call system(),
// :py, :normal, :source), which is opaque.
func exCommands(cmd word, via string) []inner {
	if !cmd.known() {
		return []inner{opaque(via)}
	}
	var out []inner
	rest := cmd.loose
	for rest != "" {
		part, more, _ := strings.Cut(rest, "|")
		c := strings.TrimLeft(part, " \t:")
		for _, p := range []string{"silent!", "silent", "sil!", "sil"} {
			if strings.HasPrefix(c, p) && !strings.HasPrefix(c, p+"e") {
				c = strings.TrimLeft(c[len(p):], " \t")
				break
			}
		}
		if shellEscape(c) {
			// The shell command takes the rest of the line, | included.
			off := len(part) - len(c)
			return append(out, scriptOf(word{loose: rest[off+strings.IndexByte(c, '!')+1:]}))
		}
		if !harmlessEx(strings.TrimSpace(c)) {
			return append(out, opaque(via))
		}
		rest = more
	}
	return out
}

// shellEscape reports an Ex command that runs a shell: !cmd, r !cmd,
// w !cmd, {range}!cmd.
func shellEscape(c string) bool {
	c = strings.TrimLeft(c, "0123456789,.$%'<>+- \t")
	for _, p := range []string{"!", "r !", "r!", "read !", "read!", "w !", "write !"} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	return false
}

// harmlessEx reports Ex commands that start nothing.
func harmlessEx(c string) bool {
	if c == "" || isDigits(c) || c == "$" || strings.HasPrefix(c, "/") || strings.HasPrefix(c, "?") {
		return !strings.Contains(c, "!")
	}
	switch c {
	case "q", "q!", "qa", "qa!", "qall", "quit", "wq", "wqa", "x", "xa", "w", "wa", "e", "e!", "noh", "nohlsearch", "syntax on", "syntax off":
		return true
	}
	return strings.HasPrefix(c, "set ") && !strings.ContainsAny(c, "!`=") // set shell=… or set makeprg=… names programs
}

// gdbCommands: -ex/--eval-command/-iex CMD are gdb commands; `shell CMD`
// and `!CMD` run CMD in a shell. -x/-ix FILE run a command file. Other
// commands that can start programs (python, pipe, |, make, source,
// $_shell) are opaque; run/start go through a shell when their arguments
// have anything it would expand.
func gdbCommands(name string, ws []word) []inner {
	var out []inner
	valued := []string{"-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command", "--init-eval-command"}
	files := []string{"-x", "--x", "-command", "--command", "-ix", "--ix", "-init-command", "--init-command"}
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		if l == "--args" || l == "--" {
			// The program gdb loads, which its run starts.
			if l == "--args" && i+1 < len(ws) {
				out = append(out, inner{words: ws[i+1:]})
			}
			return out
		}
		opt, v, hasValue := strings.Cut(l, "=")
		switch {
		case contains(valued, opt):
			cmd := word{loose: v}
			if !hasValue {
				if i+1 >= len(ws) {
					continue
				}
				cmd = ws[i+1]
				i++
			}
			out = append(out, gdbCommand(cmd, name+" -ex")...)
		case contains(files, opt):
			out = append(out, opaque(name+" "+opt))
			if !hasValue {
				i++
			}
		}
	}
	return out
}

func gdbCommand(cmd word, via string) []inner {
	if !cmd.known() {
		return []inner{opaque(via)}
	}
	c := strings.TrimSpace(cmd.loose)
	if strings.Contains(c, "$_shell") {
		return []inner{opaque(via)}
	}
	verb, rest, _ := strings.Cut(c, " ")
	switch {
	case strings.HasPrefix(c, "!"):
		return []inner{scriptOf(word{loose: c[1:]})}
	case verb == "shell" || verb == "she" || verb == "shel":
		return []inner{scriptOf(word{loose: rest})}
	case strings.HasPrefix(c, "|") || verb == "pipe" || verb == "python" || verb == "py" || verb == "pi" ||
		verb == "python-interactive" || verb == "guile" || verb == "gu" || verb == "source" || verb == "make" ||
		verb == "define" || verb == "compile" || verb == "expression" || verb == "interpreter-exec":
		return []inner{opaque(via)}
	case verb == "run" || verb == "r" || verb == "start" || verb == "starti":
		// gdb starts the program through a shell with these arguments.
		if !plainText(rest) || strings.ContainsAny(rest, ";&|<>()*?[{~#") {
			return []inner{opaque(via)}
		}
	}
	return nil
}

// makeEval: --eval TEXT is makefile text: its $(shell …) calls and its
// recipes run commands. Any --eval is opaque; literal $(shell …) calls
// are also read as scripts, so deny rules see what they run. So are -E
// TEXT (make 4.4's short --eval) and the value of a variable set on the
// command line that refers to anything ($): make 'x:=$(shell rm -f zz)'
// ran rm (make expands := at once, = where x is used), allowed in mode
// full while the same text after --eval was denied.
func makeEval(name string, ws []word) []inner {
	var out []inner
	type text struct {
		v   word
		via string
	}
	var texts []text
	for _, v := range longOptionValues(ws[1:], "--eval", 4) {
		texts = append(texts, text{v, name + " --eval"})
	}
	for _, v := range shortOptionValues(ws[1:], "CfIoWE", 'E') {
		texts = append(texts, text{v, name + " -E"})
	}
	for _, w := range ws[1:] {
		if w.loose == "--" || strings.HasPrefix(w.loose, "-") {
			continue // an option, or --: VAR=VALUE operands follow
		}
		if n, v, ok := strings.Cut(w.loose, "="); ok && !strings.ContainsAny(n, " \t$") && strings.ContainsAny(v, "$`") {
			texts = append(texts, text{word{loose: v}, name + " " + clip(n, 30) + "=…"})
		}
	}
	for _, t := range texts {
		v := t.v
		out = append(out, opaque(t.via))
		if !v.known() {
			continue
		}
		text := v.loose
		for {
			i := strings.Index(text, "$(shell ")
			if i < 0 {
				break
			}
			text = text[i+len("$(shell "):]
			end := strings.LastIndexByte(text, ')')
			if end < 0 {
				out = append(out, scriptOf(word{loose: text}))
				break
			}
			out = append(out, scriptOf(word{loose: text[:end]}))
		}
		// A rule written on one line, `t:;cmd`, and recipe lines (a tab
		// first).
		for _, line := range strings.Split(v.loose, "\n") {
			if recipe, ok := strings.CutPrefix(line, "\t"); ok {
				out = append(out, scriptOf(word{loose: recipe}))
			} else if _, recipe, ok := strings.Cut(line, ";"); ok {
				out = append(out, scriptOf(word{loose: recipe}))
			}
		}
	}
	return out
}

// sqliteCommands: every argument after the database (and -cmd's value)
// is SQL or dot-commands: .shell/.system run a command line, .once/.output/
// .read/.import with '|cmd' run cmd, -init FILE and .load are opaque.
func sqliteCommands(name string, ws []word) []inner {
	var out []inner
	sl := readSqliteLine(ws[1:])
	if sl.init {
		out = append(out, opaque(name+" -init"))
	}
	for _, t := range sl.texts {
		out = append(out, sqliteText(t, name+" dot-command")...)
	}
	return out
}

func sqliteText(w word, via string) []inner {
	if !w.known() {
		return []inner{opaque(via)}
	}
	var out []inner
	for _, line := range strings.Split(w.loose, "\n") {
		line = strings.TrimSpace(line)
		dot, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch {
		case sqliteRunsCommand(dot):
			// system(3) and popen(3): sh -c LINE.
			out = append(out, throughShell([]inner{scriptOf(word{loose: unquoteSqlite(rest)})})...)
		}
		switch dot {
		case ".once", ".output", ".read", ".import", ".out", ".outp", ".outpu", ".re", ".rea", ".imp", ".impo", ".impor":
			// .once '|cmd args': the text after | is a command line.
			if i := strings.IndexByte(rest, '|'); i >= 0 {
				cmd := rest[i+1:]
				if q := rest[0]; (q == '\'' || q == '"') && strings.HasSuffix(cmd, string(q)) {
					cmd = cmd[:len(cmd)-1]
				}
				out = append(out, throughShell([]inner{scriptOf(word{loose: cmd})})...)
			}
		case ".load", ".lo", ".loa":
			out = append(out, opaque(via))
		}
		if strings.Contains(strings.ToLower(line), "load_extension") || strings.Contains(strings.ToLower(line), "edit(") {
			out = append(out, opaque(via))
		}
	}
	return out
}

// sqliteRunsCommand reports a dot-command that runs the rest of its line
// as a shell command: .shell and .system and every abbreviation sqlite3
// takes (.sh, .she, .sy, tried with sqlite3 3.40; .s alone is .scanstats).
func sqliteRunsCommand(dot string) bool {
	return len(dot) >= 3 && (strings.HasPrefix(".shell", dot) || strings.HasPrefix(".system", dot))
}

func unquoteSqlite(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
