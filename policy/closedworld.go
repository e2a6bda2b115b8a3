package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/askops/askops/internal/globbase"
	"mvdan.cc/sh/v3/syntax"
)

// The closed world's other edges (values.go has the values bash
// evaluates): code that reaches a program from somewhere the policy does
// not read (a descriptor, stdin, a code string in another language),
// deletes judged where they land, and writes that change what later
// commands run.

// descriptorPath reports a script path that reads from a descriptor or a
// socket rather than a file the workspace holds: /dev/stdin, /dev/fd/N,
// /proc/PID/fd/N, /dev/tcp/HOST/PORT, "-". Relative spellings count too
// (after cd /dev, "fd/3" is one).
func descriptorPath(p string) bool {
	if p == "-" {
		return true
	}
	c := path.Clean(p)
	switch {
	case strings.HasPrefix(c, "/dev/"), strings.HasPrefix(c, "/proc/"):
		return true
	case path.IsAbs(c):
		return false
	}
	return c == "stdin" || strings.HasPrefix(c, "fd/") || strings.Contains(c, "/fd/") ||
		strings.HasPrefix(c, "tcp/") || strings.HasPrefix(c, "udp/") || strings.HasPrefix(c, "self/")
}

// scriptPath judges a file a program reads code from (bash FILE, source
// FILE, make -f FILE, BASH_ENV=FILE): one the policy cannot name, or a
// descriptor whose content is whatever was written into it, is code the
// policy cannot read. A link is judged where it leads.
func (z *analyzer) scriptPath(w word, what string) {
	if !w.known() {
		z.a.cannotRead(what + " reads code from a file the policy cannot name")
		return
	}
	z.writtenScript(w, what)
	p := w.loose
	if abs, _ := resolveIn(p, z.cwd, z.workspace); abs != "" {
		if real, ok := realPath(abs); ok && real != abs && descriptorPath(real) {
			p = real
		}
	}
	if descriptorPath(p) {
		z.a.cannotRead(what + " reads code from " + printable(w.loose) + ", which the policy cannot read")
	}
}

// scriptFiles finds the files a command reads code from: a shell's script
// operand and --rcfile/--init-file, source's and .'s file, make's -f.
func (z *analyzer) scriptFiles(name string, ws []word) {
	args := ws[1:]
	switch {
	case isShell(name) && name != "busybox":
		for i := 0; i < len(args); i++ {
			l := args[i].loose
			switch {
			case l == "--rcfile" || l == "--init-file":
				if i+1 < len(args) {
					z.scriptPath(args[i+1], name+" "+l)
				}
				i++
			case l == "-o" || l == "+o" || l == "-O" || l == "+O":
				i++
			case l == "--":
				if i+1 < len(args) && !shellHasC(args[:i]) {
					z.scriptPath(args[i+1], name)
				}
				return
			case strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+"):
				if !strings.HasPrefix(l, "--") && strings.Contains(l, "c") && l[0] == '-' {
					return // -c: the script is a string, read by shellScript
				}
			default:
				z.scriptPath(args[i], name)
				return
			}
		}
	case name == "source" || name == ".":
		if ops := operands(args); len(ops) > 0 {
			z.scriptPath(ops[0], name)
		}
	case name == "make" || name == "gmake":
		for _, v := range shortOptionValues(args, "CfIjloW", 'f') {
			z.scriptPath(v, "make -f")
		}
		for _, o := range []string{"--file", "--makefile"} {
			for _, v := range longOptionValues(args, o, len(o)) {
				z.scriptPath(v, "make "+o)
			}
		}
	}
}

// shellHasC reports a -c among a shell's options.
func shellHasC(opts []word) bool {
	for _, w := range opts {
		l := w.loose
		if l == "--command" || (len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.Contains(l, "c")) {
			return true
		}
	}
	return false
}

// codeInterpreter describes how a language's interpreter takes code on
// its command line: the options whose value is a program (code), the
// short options that take a value (so a following word is not the
// script), and whether a short option's value may be glued to a cluster
// of flags (perl -lne CODE).
type codeInterpreter struct {
	code   []string // options whose value is code: -c, -e, --eval
	valued string   // short options that take a value, glued or the next word
	// glued lists short options whose value is the rest of their word
	// only, never the next word (perl -i[EXT], -M…, -x[DIR]; ruby -x[DIR]):
	// the cluster ends with them, and the next word is not their value.
	glued string
	// digits lists short options whose value is the digits glued after
	// them, after which the cluster goes on (perl -l0 -0777 -CSD: -le CODE
	// is -l and -e CODE). See clusterDigits.
	digits string
	long   []string // long options that take a separate value
	module string   // the option after which the rest is a module's arguments (python -m)
	// unreadValue says why a short option's value (or the option itself,
	// with v "") is code the policy does not read: perl -M'POSIX;system …'
	// is use POSIX;system …;. Nil: every value is data.
	unreadValue func(opt byte, v string) string
	// readable reports code the policy reads in full (perl's one
	// substitution), which runs nothing it cannot see.
	readable func(code string) bool
}

// codeInterpreterOf returns how name takes code, for the languages the
// policy does not read (awk and sed it reads: awk.go, sed.go).
func codeInterpreterOf(name string) (codeInterpreter, bool) {
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"), name == "ipython":
		return codeInterpreter{code: []string{"-c"}, valued: "WXQ", glued: "m", module: "-m"}, true
	case name == "node" || name == "nodejs" || name == "bun" || name == "tsx" || name == "ts-node":
		return codeInterpreter{code: []string{"-e", "--eval", "-p", "--print"}, valued: "rC",
			long: []string{"--require", "--import", "--loader", "--experimental-loader", "--input-type", "--conditions", "--env-file"}}, true
	case strings.HasPrefix(name, "perl") || name == "raku":
		// Only -I takes the next word; -i, -M, -m, -x, -d, -D, -F and -V
		// take the rest of their word (perl -i -e CODE runs CODE), -l, -0
		// and -C the digits after them (-le CODE runs CODE).
		return codeInterpreter{code: []string{"-e", "-E"}, valued: "I", glued: "iMmxdDFV", digits: "l0C",
			readable: perlEdit, unreadValue: perlUnreadValue}, true
	case strings.HasPrefix(name, "ruby") || name == "irb" || name == "jruby":
		// -x[DIR], -F, -i, -K, -T and -W take the rest of their word.
		return codeInterpreter{code: []string{"-e"}, valued: "rICE", glued: "xFiKTW", digits: "0"}, true
	case strings.HasPrefix(name, "php"):
		return codeInterpreter{code: []string{"-r", "-R", "-B", "-E"}, valued: "dcfz"}, true
	case strings.HasPrefix(name, "lua"):
		return codeInterpreter{code: []string{"-e"}, valued: "l"}, true
	case name == "Rscript" || name == "R":
		return codeInterpreter{code: []string{"-e", "--expr"}}, true
	case name == "julia":
		return codeInterpreter{code: []string{"-e", "-E", "--eval", "--print"}, valued: "LJCtp"}, true
	case name == "osascript":
		return codeInterpreter{code: []string{"-e"}, valued: "ls"}, true
	case name == "pwsh" || name == "powershell":
		return codeInterpreter{code: []string{"-c", "-command", "-commandwithargs", "-cwa", "-encodedcommand", "-ec", "-e", "-enc"}}, true
	case name == "tclsh" || name == "wish" || name == "expect":
		return codeInterpreter{code: []string{"-c"}}, true
	case name == "groovy" || name == "scala" || name == "elixir" || name == "racket" || name == "ghc" || name == "iex":
		return codeInterpreter{code: []string{"-e", "--eval"}}, true
	case name == "guile":
		return codeInterpreter{code: []string{"-c"}}, true
	case name == "erl":
		return codeInterpreter{code: []string{"-eval", "-s", "-run"}}, true
	case name == "sbcl" || name == "clisp":
		return codeInterpreter{code: []string{"--eval", "-x"}}, true
	case name == "dc":
		// dc's ! runs a shell command; -f FILE is a script as an operand is.
		return codeInterpreter{code: []string{"-e", "--expression"}}, true
	case name == "m4" || name == "gm4":
		// m4's input is its program (include(), syscmd(), esyscmd()).
		return codeInterpreter{valued: "DUIotFR", glued: "dl",
			long: []string{"--define", "--undefine", "--include", "--debugfile", "--trace", "--freeze-state", "--reload-state", "--error-output"}}, true
	case name == "gnuplot":
		return codeInterpreter{code: []string{"-e"}}, true
	}
	return codeInterpreter{}, false
}

// interpreterCode makes the reading incomplete when a language the policy
// does not read gets its program from the command line (python -c, node
// -e, perl -pe …) or from a descriptor; a script file it names is judged
// by scriptPath. fromStdin reports an interpreter that reads its program
// from stdin (python3 - , python3 alone): its callers make a here-document
// or a pipe into it unread.
func (z *analyzer) interpreterCode(name string, ws []word) (fromStdin bool) {
	ci, ok := codeInterpreterOf(name)
	if !ok {
		return false
	}
	read := false // a program the policy read was given on the line
	args := ws[1:]
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if !args[i].known() {
			z.a.cannotRead(name + " takes an argument the policy cannot see (it may be code)")
			return false
		}
		if l == "--" {
			if read {
				return false
			}
			if i+1 < len(args) {
				z.scriptPath(args[i+1], name)
			}
			return i+1 >= len(args)
		}
		if !strings.HasPrefix(l, "-") || l == "-" {
			if read {
				return false // the program was given: the rest are its files
			}
			if l == "-" {
				return true
			}
			z.scriptPath(args[i], name)
			return false
		}
		var sc clusterScan
		if !strings.HasPrefix(l, "--") {
			sc = ci.scanCluster(l)
			if sc.unread != "" {
				z.a.cannotRead(name + " " + sc.unread)
				return false
			}
		}
		if c := ci.codeOption(l); c != "" {
			v, glued := codeValue(args, i, c)
			if sc.code != "" {
				v, glued = word{loose: sc.codeValue}, sc.codeValue != ""
				if !glued && i+1 < len(args) {
					v = args[i+1]
				} else if !glued {
					v = word{loose: anyText}
					glued = true
				}
			}
			if ci.readable != nil && v.known() && ci.readable(v.loose) {
				if !glued {
					i++
				}
				read = true
				continue
			}
			z.a.cannotRead(name + " " + c + " runs code in a language the policy does not read")
			return false
		}
		if ci.module != "" && (l == ci.module || strings.HasSuffix(l, ci.module[1:]) && !strings.HasPrefix(l, "--") ||
			sc.last == ci.module[1] && !strings.HasPrefix(l, "--")) {
			return false // a module runs (python -m pytest): the rest is its arguments
		}
		if strings.HasPrefix(l, "--") {
			if !strings.Contains(l, "=") && contains(ci.long, l) {
				i++
			}
			continue
		}
		if sc.takesNext {
			i++ // the option's value is the next word
		}
	}
	return !read
}

// clusterScan is what a cluster of short options holds, read as the
// interpreter reads it (scanCluster).
type clusterScan struct {
	code      string // the code option the cluster ends with ("-e"), or ""
	codeValue string // its value glued in the same word, or "" (the next word)
	takesNext bool   // the cluster's last option takes the next word as its value
	last      byte   // the option that ended the cluster with a value
	unread    string // why an option's value is code the policy does not read
}

// scanCluster reads the short-option word l ("-lne", "-i.bak", "-Mstrict")
// letter by letter: a flag goes on, a digits option eats its digits and
// goes on, a code option or an option with a value ends the cluster.
func (ci codeInterpreter) scanCluster(l string) clusterScan {
	var sc clusterScan
	if len(l) < 2 || l[0] != '-' || l[1] == '-' {
		return sc
	}
	for k := 1; k < len(l); k++ {
		c := l[k]
		if ci.unreadValue != nil && strings.IndexByte(ci.glued+ci.valued, c) < 0 {
			if why := ci.unreadValue(c, ""); why != "" {
				sc.unread = why
				return sc
			}
		}
		for _, o := range ci.code {
			if len(o) == 2 && o[1] == c {
				sc.code, sc.codeValue = o, l[k+1:]
				return sc
			}
		}
		switch {
		case strings.IndexByte(ci.digits, c) >= 0:
			k += clusterDigits(c, l[k+1:])
		case strings.IndexByte(ci.glued, c) >= 0, strings.IndexByte(ci.valued, c) >= 0:
			v := l[k+1:]
			sc.last = c
			sc.takesNext = v == "" && strings.IndexByte(ci.valued, c) >= 0
			if ci.unreadValue != nil && !sc.takesNext {
				sc.unread = ci.unreadValue(c, v)
			}
			return sc
		}
	}
	return sc
}

// clusterDigits is how many characters after the option c are its value:
// perl's -l[OCTAL], -0[OCTAL] or -0xHEX, -C[NUMBER|LETTERS]; ruby's -0.
func clusterDigits(c byte, rest string) int {
	n := 0
	switch c {
	case 'C':
		for n < len(rest) && strings.IndexByte("0123456789IOEioSALDa", rest[n]) >= 0 {
			n++
		}
	case '0':
		if len(rest) > 0 && (rest[0] == 'x' || rest[0] == 'X') {
			n = 1
			for n < len(rest) && isHex(rest[n]) {
				n++
			}
			return n
		}
		fallthrough
	default:
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '7' {
			n++
		}
	}
	return n
}

// perlUnreadValue: -M and -m become "use VALUE;" (perl -M'POSIX;system
// …' runs the rest), -d:MOD "use Devel::MOD;": a value that is not a
// module name with an import list of plain words is code. -S looks the
// script up on PATH, not in the workspace.
func perlUnreadValue(opt byte, v string) string {
	plain := func(s string) bool {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c == '_' || c == ':' || c == ',' || c == '=' || c == '-' || c == '.' ||
				c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
		return true
	}
	switch opt {
	case 'M', 'm':
		if v == "" || !plain(v) || strings.Count(v, "=") > 1 {
			return "-" + string(opt) + " loads a module with code the policy does not read (" + clip(v, 60) + ")"
		}
	case 'd':
		if v == "" || v == "t" {
			// perl5db.pl: it runs the commands it reads from the terminal
			// or stdin (echo 'system …' | perl -d -pe …), and .perldb.
			return "-d runs the debugger, which runs the commands it reads"
		}
		if !plain(strings.TrimPrefix(v, "t")) {
			return "-d loads a debugger module with code the policy does not read"
		}
	case 'S':
		return "-S runs a script found on PATH, which the policy cannot see"
	}
	return ""
}

// codeOption reports the code option an option word is or ends a cluster
// with ("-c", "-e" in perl's -lne), or "".
func (ci codeInterpreter) codeOption(l string) string {
	lower := strings.ToLower(l)
	for _, c := range ci.code {
		if l == c || lower == c && len(c) > 2 {
			return c
		}
		if strings.HasPrefix(c, "--") {
			if strings.HasPrefix(l, c+"=") {
				return c
			}
			continue
		}
		if len(c) == 2 && strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && ci.scanCluster(l).code == c {
			// A cluster of flags: -Ic, -lne, -ccode. A letter that takes a
			// value ends the cluster (scanCluster).
			return c
		}
	}
	return ""
}

// commandsFromStdin reports whether the command takes code from its
// stdin: an interpreter given no program (python3, python3 -), ed and ex,
// which always read their commands there (printf 'r .env\n,p\n' | ed -s
// x printed .env), and sqlite3 given no SQL.
func (z *analyzer) commandsFromStdin(name string, ws []word) bool {
	switch name {
	case "ed", "red", "ex":
		return true
	case "sqlite3", "sqlite":
		sl := readSqliteLine(ws[1:])
		return len(sl.texts) == 0 && sl.opaque == "" && !sl.init
	case "psql", "mysql", "mariadb":
		return !dbClientGiven(name, ws[1:])
	}
	return z.interpreterCode(name, ws)
}

// feedsStdin says what feeds a statement's stdin when it is a here-document, a
// here-string or a file: what an interpreter reading its program from stdin
// runs.
func feedsStdin(st *syntax.Stmt) string {
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			return "a here-document"
		case syntax.WordHdoc:
			return "a here-string"
		case syntax.RdrIn, syntax.RdrInOut:
			return "a file"
		}
	}
	return ""
}

// configFile says why a write to the absolute path p changes what later
// commands run ("" if it does not): anything in .git (hooks, config), a
// Makefile, package.json (its scripts), a package manager's or cargo's
// config, a shell's or tool's startup file, the agent's own settings
// (settings.go). Such a write asks in every
// mode: the next `git status` or `npm test` runs what it wrote.
func configFile(p, workspace string) string {
	if p == "" {
		return ""
	}
	if workspace != "" && isGitInternal(p, workspace) || strings.Contains(p+"/", "/.git/hooks/") ||
		strings.HasSuffix(p, "/.git/config") {
		return "inside .git (hooks and config run code)"
	}
	if why := settingsPath(p, workspace, false); why != "" {
		return why
	}
	base := path.Base(p)
	switch base {
	case "Makefile", "makefile", "GNUmakefile":
		return "a Makefile (make runs its recipes)"
	case "package.json":
		return "package.json (npm runs its scripts)"
	case ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".pypirc", "pip.conf":
		return "a package manager's config"
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
		".zlogin", ".inputrc", ".envrc", ".gitconfig", ".vimrc", ".exrc", ".wgetrc", ".curlrc", ".netrc":
		return "a startup file (the shell or a tool runs or trusts it)"
	}
	if strings.HasSuffix(base, ".mk") {
		return "a makefile (make runs its recipes)"
	}
	if d := path.Base(path.Dir(p)); d == ".cargo" && (base == "config" || base == "config.toml") {
		return "cargo's config"
	}
	return ""
}

// configPath says why a write of p, in every directory the command may
// be in and where its links lead (readMention.targets), would change what
// later commands run, or "".
func (z *analyzer) configPath(p string) string {
	for _, t := range (readMention{p: p, cwd: z.cwd, cwds: z.cwds}).targets(z.workspace) {
		if why := z.configWhy(t.abs, t.real); why != "" {
			return why
		}
	}
	return ""
}

// possibleWrites: a program whose options askops does not model may write
// any file its command line names. Each literal path word of such a
// program is a possible write: where the file changes what later commands
// run (.git, an agent's settings, a Makefile: configFile) the command asks
// in every mode, as a write the policy sees there does, and a write_file
// deny or ask rule naming it asks (not denies: the program may only read
// it). pandoc -o .git/hooks/pre-commit, strace -o, valgrind --log-file=,
// esbuild --outfile=, tsc --outDir .claude, 7z a, mkfifo and fallocate
// each wrote one in mode full. Programs whose writes are modelled
// (writesModelled), a wrapper's command (judged on its own) and the script
// an interpreter or a shell runs are not such words. firstWrite is where
// this command's writes start in the analysis.
func (z *analyzer) possibleWrites(name string, ws []word, firstWrite int) {
	if writesModelled(name, ws) && !z.optionUnknown || isShell(name) {
		return
	}
	if _, ok := codeInterpreterOf(name); ok {
		return
	}
	words := ws[1:]
	if spec, ok := wrapperSpec(name); ok {
		if _, start := spec.parse(ws); start > 0 && start <= len(ws) {
			words = ws[1:start]
		}
	}
	for _, w := range words {
		if !w.ok {
			continue
		}
		p := w.lit
		if strings.HasPrefix(p, "-") {
			_, v, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			p = v
		}
		if z.writtenSince(firstWrite, p) {
			continue
		}
		z.possibleWrite(p, name, " (askops does not know which of its options write a file)")
	}
}

// possibleWrite records p as a file something in the command may write
// (how, and why it may): a write_file deny or ask rule naming it asks,
// and a file that changes what later commands run is a danger.
func (z *analyzer) possibleWrite(p, how, why string) {
	if p == "" || noFile(p) || strings.Contains(p, "://") {
		return
	}
	for _, t := range (readMention{p: p, cwd: z.cwd, cwds: z.cwds}).targets(z.workspace) {
		t.how = how
		if len(z.a.maybeWrites) < maxMentions {
			z.a.maybeWrites = append(z.a.maybeWrites, t)
		}
		if config := z.configWhy(t.abs, t.real); config != "" {
			z.a.danger(how + " may write " + printable(p) + why + ", " + config)
			return
		}
	}
}

// unknownOption records an option a program's table does not know: allow
// rules and grants do not cover the command (why says which option), and
// what it writes is not modelled, so the files named on its line are
// possible writes, as an unmodelled program's are (rsync --log-fi=.git/x
// is --log-file, abbreviated).
func (z *analyzer) unknownOption(why string) {
	z.a.refuseAllow(why)
	z.optionUnknown = true
}

// makesLinks reports whether the command may make symbolic links, at
// names and to targets that come from data the policy does not read: an
// archive, a commit, a patch. A read later in the same command may follow
// one (tar -xf a.tar -C out; cat out/l printed .env through a link in the
// archive). ln is not among them (its target is judged as a read), nor a
// script or a build: what a program does by itself is the OS bound's to
// contain, and it could read the file itself. cp, mv and rsync, which put
// a link at a name the command gives, are copiesLinks'.
func makesLinks(name string, ws []word) bool {
	args := ws[1:]
	switch name {
	case "unzip", "cpio", "7z", "7za", "7zr", "patch", "ar":
		return true
	case "tar", "bsdtar", "gtar":
		if len(args) > 0 && !strings.HasPrefix(args[0].loose, "-") && strings.ContainsRune(args[0].loose, 'x') {
			return true // tar xf a.tar
		}
		for _, a := range args {
			l := a.loose
			if l == "--extract" || l == "--get" || strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.ContainsRune(l, 'x') {
				return true
			}
		}
	case "git":
		// What writes the working tree from commits, the index, stashes
		// or patches.
		switch sub, _ := gitSubcommand(args); sub {
		case "checkout", "switch", "restore", "reset", "merge", "pull", "stash", "apply", "am", "cherry-pick",
			"rebase", "revert", "clone", "worktree", "read-tree", "checkout-index", "submodule", "sparse-checkout":
			return true
		}
	}
	return false
}

// copiesLinks reports whether cp, mv or rsync may put a link it finds at
// the destination the command names (mv always; cp copying a tree or links
// as they are; rsync -a or -l), where a later read in the command follows
// it to wherever it leads.
func copiesLinks(name string, args []word) bool {
	switch name {
	case "mv":
		return true
	case "cp", "rsync":
		for _, a := range args {
			l := a.loose
			if l == "--" {
				break
			}
			if strings.HasPrefix(l, "--") {
				if l == "--recursive" || l == "--no-dereference" || l == "--links" || strings.HasPrefix(l, "--archive") || strings.HasPrefix(l, "--preserve") ||
					name == "cp" && l == "--symbolic-link" {
					return true
				}
				continue
			}
			if strings.HasPrefix(l, "-") && strings.ContainsAny(l, map[string]string{"cp": "rRadPs", "rsync": "al"}[name]) {
				return true
			}
		}
	}
	return false
}

// writtenSince reports whether the command's writes from first on
// include p as written.
func (z *analyzer) writtenSince(first int, p string) bool {
	for _, w := range z.a.writes[first:] {
		if w.shown == p {
			return true
		}
	}
	return false
}

// writesModelled reports whether askops knows every file the program
// writes from its command line: it reads its operands only, or its
// writing options are modelled (writes.go, tooloptions.go).
func writesModelled(name string, ws []word) bool {
	if readsNoOperand(name) || flatReader(name, ws) || knownReader(name, ws) {
		return true
	}
	switch name {
	case "file", "comm", "join", "column", "look", "lsattr", "getfacl", "namei", "shellcheck", "tree",
		"ag", "ack", "ack-grep", "delta", "source", ".", "test", "[", "[[", "yamllint", "hadolint",
		// modelled in writes.go and tooloptions.go
		"awk", "gawk", "mawk", "nawk", "busybox-awk", "sed", "gsed", "perl", "bat", "batcat", "make", "gmake", "bmake",
		"tar", "gtar", "bsdtar", "zip", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd",
		"lz4", "lzma", "compress", "cp", "mv", "install", "ln", "rsync", "scp", "sftp", "lftp", "tee", "dd", "touch",
		"mkdir", "chmod", "chown", "chgrp", "chattr", "setfacl", "truncate", "split", "csplit", "xxd", "iconv",
		"sort", "uniq", "curl", "wget", "git", "go", "gccgo", "cargo", "npm", "pnpm", "yarn", "pip", "pip3", "uv",
		"docker", "podman", "nerdctl", "kubectl", "oc", "openssl", "gpg", "gpg2", "ssh", "ssh-keygen", "ssh-agent",
		"patch", "find", "gfind", "fd", "fdfind", "rg", "ripgrep", "sqlite", "sqlite3", "gcc", "g++", "cc", "c++",
		"clang", "clang++", "cpp", "tcc", "systemctl", "man", "nc", "ncat", "netcat", "socat", "rm", "rmdir", "script",
		"psql", "mysql", "mariadb":
		return true
	}
	return false
}

// configWrite makes a write of p (abs, and real where it lands) a danger
// when it changes what later commands run.
func (z *analyzer) configWrite(how, shown, abs, real string) {
	if why := z.configWhy(abs, real); why != "" {
		z.a.danger(how + " writes " + printable(shown) + ", " + why)
	}
}

// configWhy says why a write of abs (real where it lands) changes what
// later commands run, or "".
func (z *analyzer) configWhy(abs, real string) string {
	why := configFile(abs, z.workspace)
	if why == "" && real != "" {
		why = configFile(real, z.realWorkspace())
	}
	return why
}

// deletes judges what a delete reaches, resolved through links: a path
// whose parents (or, with follow, itself) lead into .git deletes the
// repository's history, hooks or config, whatever it is called.
func (z *analyzer) deletes(w word, how string, follow bool) {
	p := w.loose
	var rest []string // a pattern's segments under p (unnamedDelete)
	flat := false
	if !w.known() || inHome(w) {
		var ok bool
		if p, rest, ok = z.unnamedDelete(w); !ok {
			return
		}
		tree, here := z.tree, z.treeHere
		// rm, unlink, shred without -r delete what the pattern matches,
		// never a directory's files (rm out/*.o cannot reach out/sub/.env).
		flat = !tree && flatDelete(how)
		z.tree, z.treeHere = true, p != "/"
		defer func() { z.tree, z.treeHere = tree, here }()
	}
	if strings.HasSuffix(p, "/") {
		follow = true // a trailing slash makes the kernel follow a final link
	}
	cwd := z.cwd
	if cwd == "" {
		cwd = z.workspace
	}
	abs, _ := resolveIn(p, cwd, z.workspace)
	if abs == "" {
		return
	}
	// A delete is a write of what it reaches: write_file's deny and ask
	// rules apply to it.
	before := len(z.a.writes)
	z.implied = true
	z.write(p, how+" deletes")
	z.implied = false
	for i := before; i < len(z.a.writes); i++ {
		if t := &z.a.writes[i]; t.tree {
			t.follows = follow
			if rest != nil {
				t.rest, t.flat, t.shown = rest, flat, w.pat
			}
		}
	}
	real := abs
	if follow {
		if r, ok := resolveLinks(abs); ok {
			real = r
		}
	} else if r, ok := resolveLinks(path.Dir(abs)); ok {
		real = path.Join(r, path.Base(abs))
	}
	if isGitInternal(abs, z.workspace) || isGitInternal(real, z.realWorkspace()) || isGitInternal(real, z.workspace) {
		z.a.danger(how + " deletes inside .git (" + printable(p) + "): the repository's history, hooks and config")
	}
}

// unnamedDelete is where a delete of a name the policy cannot see lands,
// judged as a tree: a pattern deletes what it matches now under its
// literal directory (rm secrets/*, mv secrets/t* out/: p, and the
// pattern's segments under it, rest), any other word
// may name any file ("/": rm "$f", shred -u "$X", rm ~/x). Every write_file deny
// and ask rule that may name a file there meets it; these deleted what
// a deny on secrets/** protects in mode full. A file find hands its -exec
// as {} is not: find's own tree judges it (deleteCommands); ok is false
// then. One a script it runs gets ("$1" of sh -c '…' _ {}) is any file.
func (z *analyzer) unnamedDelete(w word) (p string, rest []string, ok bool) {
	if w.found {
		return "", nil, false
	}
	if w.pat != "" && hasWild(w.pat) && !strings.HasPrefix(w.pat, "~") {
		if base, r := globbase.Split(w.pat); globbase.StaysUnder(r) {
			return unescapeGlob(base), segments(r), true
		}
	}
	return "/", nil, true
}

// flatDelete: the deletes that remove what they are given and nothing
// under it, unless told to recurse (rm -r, which sets the tree itself).
func flatDelete(how string) bool {
	switch how {
	case "rm", "unlink", "rmdir", "shred", "srm":
		return true
	}
	return false
}

// laterRuns are the commands that store what a program runs later, or
// where it downloads code from, in the user's settings: the person's next
// gh, kubectl, aws, git commit or login runs it, unjudged. Like git config
// and npm config set (configCommands), they are dangers.
var laterRuns = []struct {
	program string
	verbs   []string
	why     string
}{
	{"gh", []string{"alias", "set"}, "stores a command gh runs later (--shell: in sh)"},
	{"gh", []string{"extension", "install"}, "installs a program gh runs later"},
	{"gh", []string{"ext", "install"}, "installs a program gh runs later"},
	{"kubectl", []string{"config", "set-credentials"}, "may set an exec plugin kubectl runs later"},
	{"kubectl", []string{"config", "set"}, "may set an exec plugin kubectl runs later"},
	{"aws", []string{"configure", "set"}, "may set a credential_process aws runs later"},
	{"pre-commit", []string{"install"}, "installs a git hook"},
	{"lefthook", []string{"install"}, "installs git hooks"},
	{"husky", []string{"install"}, "installs git hooks"},
	{"systemctl", []string{"enable"}, "makes a unit start later (at boot or login)"},
	{"systemctl", []string{"reenable"}, "makes a unit start later (at boot or login)"},
	{"systemctl", []string{"link"}, "makes a unit file start later"},
	{"systemctl", []string{"edit"}, "changes what a unit runs"},
	{"pip", []string{"config", "set"}, "changes where pip downloads packages from"},
	{"pip3", []string{"config", "set"}, "changes where pip downloads packages from"},
	{"helm", []string{"repo", "add"}, "adds a source helm downloads charts from"},
	{"docker", []string{"context", "create"}, "points docker at another daemon"},
	{"docker", []string{"context", "use"}, "points docker at another daemon"},
	{"tmux", []string{"set-hook"}, "sets a command tmux runs later"},
	{"tmux", []string{"bind-key"}, "binds a key of the person's session to a command"},
	{"tmux", []string{"bind"}, "binds a key of the person's session to a command"},
}

// deleteCommands finds what rm, unlink, rmdir, shred and find's -delete
// reach. find -L (or -follow) follows every link below its starting
// points while it deletes: where those lead cannot be read from the line.
func (z *analyzer) deleteCommands(name string, args []word) {
	switch name {
	case "rm", "unlink", "rmdir", "shred", "srm":
		z.tree = name == "rm" && hasFlag(args, 'r', 'R', "--recursive")
		z.treeHere = true                 // what is there goes
		valued, long := "", []string(nil) // rm's --interactive[=WHEN] and shred's --remove[=HOW] take theirs after =
		if name == "shred" || name == "srm" {
			valued, long = "ns", []string{"--iterations", "--size", "--random-source"}
		}
		for _, w := range operandsOf(args, valued, long) {
			// shred overwrites what a link names before it removes the name.
			z.deletes(w, name, name == "shred" || name == "srm")
			if w.ok && (name == "shred" || name == "srm") && hasFlag(args, 'u', 'u', "--remove") {
				// shred -u renames the file to zeros before it goes:
				// 0000, 000, 00 and 0 beside it, for a name of four.
				z.implied = true
				z.writePieces(path.Join(path.Dir(w.lit), "0"), path.Join(path.Dir(w.lit), "0…"), "0*", name+" -u renames")
				z.implied = false
			}
		}
		z.tree, z.treeHere = false, false
	case "find", "gfind":
		deleting, follow, starts := findDeletes(args)
		if !deleting {
			return
		}
		if follow == "-L" {
			z.a.cannotRead("find -L deletes through every link below its starting points, wherever they lead")
		}
		z.tree, z.treeHere = true, true // what find finds below its starting points
		for _, s := range starts {
			z.deletes(s, "find", follow != "")
		}
		z.tree, z.treeHere = false, false
	}
}

// findDeletes reads find's words: whether it deletes (-delete, or -exec
// of anything but a reader), how it follows links ("-L", "-H" or "") and
// its starting points.
func findDeletes(args []word) (deleting bool, follow string, starts []word) {
	inStarts := true
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case inStarts && (l == "-H" || l == "-L" || l == "-P"):
			if l != "-P" {
				follow = l
			} else {
				follow = ""
			}
			continue
		case inStarts && l == "-D":
			i++
			continue
		case inStarts && strings.HasPrefix(l, "-O"):
			continue
		}
		if inStarts && !((strings.HasPrefix(l, "-") && len(l) > 1) || l == "(" || l == "!" || l == ",") {
			starts = append(starts, args[i])
			continue
		}
		inStarts = false
		switch l {
		case "-delete":
			deleting = true
		case "-follow":
			follow = "-L"
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) && !findReader(args[i+1]) {
				deleting = true
			}
		}
	}
	if len(starts) == 0 {
		starts = []word{{lit: ".", ok: true, loose: "."}}
	}
	return deleting, follow, starts
}

// configCommands flags the commands whose job is to change what later
// commands run: npm pkg set (package.json's scripts), npm/yarn/pnpm
// config set (.npmrc), git config writes, git remote add/set-url.
func (z *analyzer) configCommands(name string, args []word) {
	ops := leadingOperands(args, 4)
	verb := func(i int) string { return operandText(ops, i) }
	for _, l := range laterRuns {
		if l.program == name && len(ops) >= len(l.verbs) && slices.EqualFunc(ops[:len(l.verbs)], l.verbs, func(w word, v string) bool { return w.loose == v }) {
			z.a.danger(name + " " + strings.Join(l.verbs, " ") + " " + l.why + ", outside the policy and the bound")
		}
	}
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		switch v := verb(0); {
		case v == "pkg" && (verb(1) == "set" || verb(1) == "delete"):
			z.a.danger(name + " pkg " + verb(1) + " changes package.json, whose scripts npm runs")
		case v == "set-script":
			z.a.danger(name + " set-script changes package.json, whose scripts npm runs")
		case (v == "config" || v == "c") && (verb(1) == "set" || verb(1) == "delete" || verb(1) == "edit"),
			v == "set" && name == "npm":
			z.a.danger(name + " config " + verb(1) + " changes the package manager's config")
		}
	case "git":
		sub, rest := gitSubcommand(args)
		switch sub {
		case "config":
			if gitConfigWrites(rest) {
				z.a.danger("git config changes git's config (it decides what git runs and where it pushes)")
			}
		case "lfs":
			if r := leadingOperands(rest, 1); len(r) > 0 && r[0].loose == "install" {
				z.a.danger("git lfs install sets the hooks and filters git runs later")
			}
		}
	case "direnv":
		// direnv allow trusts an .envrc: the person's shell runs it, unbounded,
		// on its next cd into the directory.
		if v := verb(0); v == "allow" || v == "permit" || v == "grant" {
			z.a.danger("direnv " + v + " lets the person's shell run .envrc later, outside the policy and the bound")
		}
	}
}

// gitConfigWrites reports a git config call that writes: an action option,
// a set/unset/edit subcommand (git 2.46), or NAME VALUE.
func gitConfigWrites(args []word) bool {
	for _, w := range args {
		switch l := w.loose; {
		case l == "--get" || l == "--get-all" || l == "--get-regexp" || l == "--get-urlmatch" || l == "--list" ||
			l == "-l" || l == "--get-color" || l == "--get-colorbool":
			return false
		case l == "--add" || l == "--unset" || l == "--unset-all" || l == "--replace-all" || l == "--edit" ||
			l == "-e" || l == "--rename-section" || l == "--remove-section":
			return true
		}
	}
	ops := operandsOf(args, "f", []string{"--file", "--blob", "--type", "--default", "--comment", "--value"})
	if len(ops) > 0 {
		switch ops[0].loose {
		case "get", "list":
			return false
		case "set", "unset", "edit", "rename-section", "remove-section":
			return true
		}
	}
	return len(ops) >= 2 && !inertGitKey(ops[0].loose)
}

// inertGitKey names configuration keys that change nothing git runs or
// where it pushes: who commits, colours, advice.
func inertGitKey(k string) bool {
	k = strings.ToLower(k)
	switch k {
	case "user.name", "user.email", "init.defaultbranch", "pull.rebase", "pull.ff", "core.autocrlf", "core.quotepath":
		return true
	}
	return strings.HasPrefix(k, "color.") || strings.HasPrefix(k, "advice.") || strings.HasPrefix(k, "column.")
}

// gitSubcommand skips git's global options and returns its subcommand and
// the words after it ("" when there is none).
func gitSubcommand(args []word) (string, []word) {
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "-c" || l == "-C" || l == "--git-dir" || l == "--work-tree" || l == "--namespace" ||
			l == "--super-prefix" || l == "--attr-source" || l == "--config-env":
			i++
		case strings.HasPrefix(l, "-"):
		default:
			return l, args[i+1:]
		}
	}
	return "", nil
}

// writtenScript makes the reading incomplete when a command runs a file
// it wrote itself (echo … > run.sh; bash run.sh): the policy judged the
// write, not the program it becomes.
func (z *analyzer) writtenScript(w word, what string) {
	if !w.known() || len(z.a.writes) == 0 {
		return
	}
	cwd := z.cwd
	if cwd == "" {
		cwd = z.workspace
	}
	abs, _ := resolveIn(w.loose, cwd, z.workspace)
	real, _ := landing(abs)
	for _, t := range z.a.writes {
		if abs != "" && (t.abs == abs || t.real != "" && (t.real == abs || t.real == real)) {
			z.a.cannotRead(what + " runs " + printable(w.loose) + ", which the command itself writes")
			return
		}
	}
}

// writtenConfig makes the reading incomplete when a program is pointed
// at a configuration file or directory the command itself writes in
// (printf '[core]\n\tfsmonitor = …' > out/c; GIT_CONFIG_GLOBAL=out/c git
// status; a repository made under out/b and git -C out/b): as with
// writtenScript, the policy judged the write, not the code the program
// makes of it.
func (z *analyzer) writtenConfig(w word, what string) {
	if !w.known() || len(z.a.writes) == 0 || w.loose == "" {
		return
	}
	cwd := z.cwd
	if cwd == "" {
		cwd = z.workspace
	}
	abs, _ := resolveIn(w.loose, cwd, z.workspace)
	if abs == "" {
		return
	}
	real, _ := landing(abs)
	for _, t := range z.a.writes {
		if within(t.abs, abs) || real != "" && (within(t.abs, real) || t.real != "" && within(t.real, real)) {
			z.a.cannotRead(what + " points at " + printable(w.loose) + ", which the command itself writes in")
			return
		}
	}
}

// codeValue is the value of the code option c at args[i]: glued to the
// option (-e'…', --eval=…) or the next word.
func codeValue(args []word, i int, c string) (v word, glued bool) {
	l := args[i].loose
	if strings.HasPrefix(c, "--") {
		if _, val, ok := strings.Cut(l, "="); ok {
			return word{loose: val}, true
		}
	} else if k := strings.IndexByte(l[1:], c[1]); k >= 0 && 1+k+1 < len(l) {
		return word{loose: l[1+k+1:]}, true
	}
	if i+1 < len(args) {
		return args[i+1], false
	}
	return word{loose: anyText}, true
}

// perlEdit reports perl code that is one substitution or transliteration
// (s/a/b/g, y/a-z/A-Z/, tr:…:…:) with no way to run code: no /e flag, no
// (?{ }) or @{[ ]} / ${\ } interpolation, no backticks. The text between
// the delimiters is a pattern, not a program.
func perlEdit(code string) bool {
	code = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(code), ";"))
	var rest string
	switch {
	case strings.HasPrefix(code, "tr"):
		rest = code[2:]
	case strings.HasPrefix(code, "s"), strings.HasPrefix(code, "y"):
		rest = code[1:]
	default:
		return false
	}
	if rest == "" || strings.IndexByte("/|#!,:", rest[0]) < 0 {
		return false
	}
	parts := strings.Split(rest[1:], rest[:1])
	if len(parts) != 3 || strings.Trim(parts[2], "gimsxcdr") != "" {
		return false // an escaped delimiter, a ; and more code, or a flag like e
	}
	body := parts[0] + parts[1]
	for _, bad := range []string{"(?{", "(??{", "@{", "${", "`", "(*"} {
		if strings.Contains(body, bad) {
			return false
		}
	}
	return true
}

// compgenCode: compgen expands its -W word list as bash expands a
// command's words, command substitutions and all, and runs the command
// of -C and the function of -F. A word list the policy cannot read as
// plain text, or either of those, is code it does not read.
func (z *analyzer) compgenCode(name string, args []word) {
	if name != "compgen" {
		return
	}
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if l == "--" {
			return
		}
		if len(l) < 2 || l[0] != '-' {
			continue
		}
		for j := 1; j < len(l); j++ {
			switch l[j] {
			case 'C', 'F':
				z.a.cannotRead("compgen -" + string(l[j]) + " runs a command or function")
				return
			case 'W', 'X', 'P', 'S', 'G', 'A', 'o':
				// These take a value: the rest of the word, or the next.
				var v word
				switch {
				case j+1 < len(l):
					v = word{lit: l[j+1:], ok: args[i].ok, loose: l[j+1:]}
				case i+1 < len(args):
					i++
					v = args[i]
				}
				if l[j] == 'W' && (!v.known() || !plainText(v.loose)) {
					z.a.cannotRead("compgen -W expands a word list the policy cannot read")
					return
				}
				j = len(l)
			}
		}
	}
}

// codeOptionNames are the spellings programs give the option whose value
// is a program in their own language (emacs --eval, octave --eval, ghci
// -e, bb -e, jrunscript -e), and the subcommand that takes one (deno eval,
// crystal eval).
var codeOptionNames = []string{"-e", "--eval", "-eval", "--execute", "-execute", "--exec", "-exec", "--expr",
	"--expression", "-c", "--command", "-command", "--code", "eval"}

// codePunctuation is what code holds and a plain value does not.
const codePunctuation = "\"'`()[]{};|&!$<>"

// unmodelledCode makes the reading incomplete where a program the policy
// does not model (unmodelled, and no runOptions) is given code it cannot
// read. No list of interpreters is ever whole, so the class is read from
// the words:
//   - a code option (codeOptionNames) whose value holds more than one word
//     or code's punctuation, or cannot be seen: a value of one plain word
//     (-c config.toml, -e production) is data;
//   - a word holding code's punctuation that names a watched program as a
//     token of its own (emacs --eval '(shell-command "rm -rf x")', ghci -e
//     ':! rm x', a list ["rm","-rf","x"]): code that may start it, with
//     arguments in a language the policy does not read. It asks, where a
//     deny rule on the program would deny: the word may be prose.
func (z *analyzer) unmodelledCode(name string, ws []word) {
	if !unmodelled(name, ws) {
		return
	}
	if _, ok := runOptions(name, ws); ok {
		return // its code options are read (vim -c, gdb -ex)
	}
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		if !ws[i].known() {
			continue
		}
		if p := codeMention(l); p != "" {
			z.a.cannotRead(name + " is given code that may run " + p)
			return
		}
		opt, v, glued := strings.Cut(l, "=")
		if !strings.HasPrefix(l, "-") {
			opt, glued = l, false
		}
		if !slices.Contains(codeOptionNames, opt) {
			continue
		}
		val := word{loose: v}
		if !glued {
			if i+1 >= len(ws) {
				return
			}
			val = ws[i+1]
		}
		if !val.known() || strings.ContainsAny(val.loose, " \t\n"+codePunctuation) {
			z.a.cannotRead(name + " " + opt + " may run code in a language the policy does not read")
			return
		}
	}
}

// codeMention is the first watched program (watchedProgram) a word holding
// code's punctuation names as a token of its own, or "".
func codeMention(l string) string {
	if !strings.ContainsAny(l, codePunctuation) {
		return ""
	}
	for _, tok := range strings.FieldsFunc(l, func(r rune) bool { return !programNameRune(r) }) {
		if n := path.Base(tok); watchedProgram(n) {
			return n
		}
	}
	return ""
}

// programNameRune: a rune a program's name or path may hold.
func programNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-/", r)
}
