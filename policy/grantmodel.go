package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A prefix grant's model of a program is closed-world: the grant covers a
// call only when every option is one the model lists and every operand and
// option value is of the kind the model expects (a file inside the
// workspace and outside .git, a configured git remote, a key id, a count).
// An option the model does not list, an abbreviation of one it lists, a
// value of another shape: not covered, the call asks. A wrong guess costs
// an Ask, never a silent run.
//
// The same model judges a prefix when it is granted (the words themselves,
// with no file system: a prefix already outside the model is refused) and
// a call when it comes (every word, against the workspace and the
// repository as they are then). Programs without a model are not
// grantable by prefix.

// optStyle is how a program reads its options.
type grantStyle uint8

const (
	// getoptStyle: -abc is -a -b -c; a short option taking a value takes
	// the rest of its word or the next word; --name=VALUE or --name VALUE;
	// "--" ends the options; options may follow operands.
	gsGetopt grantStyle = iota
	// dashStyle (openssl): -name and -name VALUE; no clusters, no "--".
	gsDash
	// goStyle (Go's flag package): -name or --name, -name=VALUE or
	// -name VALUE; no clusters.
	gsGo
)

// valueKind is what an option takes, or what an operand must be.
type grantValue uint8

const (
	gvFlag       grantValue = iota // takes no value
	gvOptWord                      // a long option whose value, if any, is written --name=VALUE: a plain word
	gvText                         // text with no file or program meaning: a format, a pattern, a subject
	gvWord                         // one plain word: a key id, a name, a selector
	gvCount                        // digits
	gvPathIn                       // a file it reads
	gvPathOut                      // a file it writes
	gvFD                           // a descriptor it writes to: 1 or 2
	gvCertForm                     // openssl -inform/-outform: PEM or DER
	gvPass                         // openssl -pass: pass:…, env:…, file:PATH, stdin
	gvKubeOutput                   // kubectl -o: a format, never one read from a file
	gvKeySpec                      // openssl -newkey: rsa:BITS or an algorithm's name, never ALG:FILE
)

// grantModel is what askops knows of one program (or subcommand) for
// prefix grants.
type grantModel struct {
	words []string // the words naming it: gpg; git push; openssl x509
	style grantStyle
	// opt looks an option up as written (with its dashes, without =VALUE).
	opt func(name string) (grantValue, bool)
	// counts: -NUM is a count (head -20, git log -5).
	counts bool
	// boolEq: a flag may be written --name=true or --name=false (pflag).
	boolEq bool
	// noDashDash: "--" is not an end of options the program knows.
	noDashDash bool
	// operands judges the operands and the options' meaning together;
	// nil means the program takes none.
	operands func(g *grantCheck, a *grantArgs) string
	// note is what the approver is told the grant covers beyond the words.
	note string
}

func (m *grantModel) name() string { return strings.Join(m.words, " ") }

// grantArg is one option as the model read it.
type grantArg struct {
	name, value string
	has         bool
}

// grantArgs is a call's words after the model's own, read.
type grantArgs struct {
	opts     []grantArg
	operands []string
	split    int // how many operands came before "--"; -1 without one
}

// has reports whether any of names was given.
func (a *grantArgs) has(names ...string) bool {
	for _, o := range a.opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

// value reports whether one of names was given with the value v.
func (a *grantArgs) value(v string, names ...string) bool {
	for _, o := range a.opts {
		if o.has && o.value == v {
			for _, n := range names {
				if o.name == n {
					return true
				}
			}
		}
	}
	return false
}

// grantCheck is one judgement: of a prefix at grant time, or of a call.
type grantCheck struct {
	// prefix: the words are a prefix being granted: they may stop
	// anywhere (an option's value or an operand to come), and nothing is
	// looked up on the file system, which is judged when a call comes.
	prefix bool
	cwd    string // absolute, clean
	ws     string // the workspace, absolute, clean
	realWS string // ws with symlinks resolved

	repoDone bool
	repo     *grantRepo
	repoWhy  string

	pathDone  bool
	pathDirs  []os.FileInfo // the directories of $PATH that exist, read once
	pathLater []string      // those that do not, absolute and clean

	treeMax int // the entries tree looks through; 0 is maxGrantTree
}

// read reads args (the words after the model's) as m's program does and
// judges every option value; the operands are judged by the caller.
func (m *grantModel) read(g *grantCheck, args []string) (grantArgs, string) {
	a := grantArgs{split: -1}
	unknown := func(w string) (grantArgs, string) {
		return a, clip(w, 60) + " is not an option askops knows for " + m.name()
	}
	ended := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if ended || w == "-" || !strings.HasPrefix(w, "-") {
			a.operands = append(a.operands, w)
			continue
		}
		if w == "--" {
			if m.noDashDash || m.style == gsDash {
				return unknown(w)
			}
			ended, a.split = true, len(a.operands)
			continue
		}
		if m.counts && isDigits(w[1:]) {
			a.opts = append(a.opts, grantArg{name: "-NUM", value: w[1:], has: true})
			continue
		}
		var name, val string
		var has bool
		switch {
		case m.style == gsDash:
			name = w
		case m.style == gsGo:
			name, val, has = strings.Cut("-"+strings.TrimPrefix(w[1:], "-"), "=")
		case strings.HasPrefix(w, "--"):
			name, val, has = strings.Cut(w, "=")
		default:
			// A cluster of short options: flags, and at most one option
			// taking a value, which takes the rest of the word or the
			// next word.
			for k := 1; k < len(w); k++ {
				n := "-" + w[k:k+1]
				kind, ok := m.opt(n)
				if !ok || kind == gvOptWord {
					return unknown(n)
				}
				if kind == gvFlag {
					a.opts = append(a.opts, grantArg{name: n})
					continue
				}
				arg := grantArg{name: n, has: true}
				switch {
				case k+1 < len(w):
					arg.value = w[k+1:]
				case i+1 < len(args):
					i++
					arg.value = args[i]
				case g.prefix:
					arg.has = false // its value comes with the call
				default:
					return a, n + " needs a value"
				}
				if why := m.optionValue(g, kind, arg); why != "" {
					return a, why
				}
				a.opts = append(a.opts, arg)
				break
			}
			continue
		}
		kind, ok := m.opt(name)
		if !ok {
			return unknown(name)
		}
		arg := grantArg{name: name, value: val, has: has}
		switch {
		case kind == gvFlag:
			if has && !(m.boolEq || m.style == gsGo) || has && val != "true" && val != "false" {
				return a, name + " takes no value"
			}
		case kind == gvOptWord:
			if why := m.optionValue(g, gvWord, arg); why != "" {
				return a, why
			}
		default:
			if !has {
				switch {
				case i+1 < len(args):
					i++
					arg.value, arg.has = args[i], true
				case g.prefix:
				default:
					return a, name + " needs a value"
				}
			}
			if why := m.optionValue(g, kind, arg); why != "" {
				return a, why
			}
		}
		a.opts = append(a.opts, arg)
	}
	return a, ""
}

// optionValue judges arg's value, read as kind: "" when it has none (a
// prefix that stops before it) or the value is fine, else why not, naming
// the program and the option.
func (m *grantModel) optionValue(g *grantCheck, kind grantValue, arg grantArg) string {
	if !arg.has {
		return ""
	}
	if why := g.value(kind, arg.value); why != "" {
		return m.name() + " " + arg.name + ": " + why
	}
	return ""
}

// value judges one option value or operand of kind k; "" when it is one.
func (g *grantCheck) value(k grantValue, v string) string {
	switch k {
	case gvText:
		if strings.ContainsFunc(v, grantIsControl) {
			return "a value with control characters"
		}
		return ""
	case gvWord, gvOptWord:
		return grantWordShape(v)
	case gvCount:
		if !isDigits(v) {
			return clip(v, 40) + " is not a count"
		}
		return ""
	case gvPathIn:
		return g.path(v, false)
	case gvPathOut:
		return g.path(v, true)
	case gvFD:
		if v != "1" && v != "2" {
			return "a descriptor other than 1 or 2 (" + clip(v, 20) + ")"
		}
		return ""
	case gvCertForm:
		switch strings.ToUpper(v) {
		case "PEM", "DER":
			return ""
		}
		return "a form other than PEM or DER (" + clip(v, 20) + ")"
	case gvPass:
		kind, rest, _ := strings.Cut(v, ":")
		switch {
		case v == "stdin", kind == "pass" || kind == "env":
			return ""
		case kind == "file":
			return g.path(rest, false)
		}
		return "a passphrase source askops does not know (" + clip(v, 20) + ")"
	case gvKubeOutput:
		switch v {
		case "json", "yaml", "wide", "name":
			return ""
		}
		for _, p := range []string{"jsonpath=", "custom-columns=", "go-template=", "template="} {
			if rest, ok := strings.CutPrefix(v, p); ok {
				return g.value(gvText, rest)
			}
		}
		return "an output format askops does not know (" + clip(v, 40) + ")"
	case gvKeySpec:
		alg, bits, has := strings.Cut(v, ":")
		if alg == "" || !grantIsAlnum(alg) || has && (alg != "rsa" || !isDigits(bits)) {
			return "a key kind askops does not know (" + clip(v, 40) + "; ALG:FILE reads a file)"
		}
		return ""
	}
	return "a value askops cannot judge"
}

func grantIsAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func grantIsControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }

// wordShape accepts one plain word: printable ASCII with no space,
// quote, backslash or shell character, not starting with a dash (which
// the program might read as an option).
func grantWordShape(v string) string {
	if v == "" {
		return "an empty value"
	}
	if v[0] == '-' {
		return clip(v, 40) + " looks like an option"
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"'`\\$;&|<>()", c) >= 0 {
			return clip(v, 40) + " is not a plain word"
		}
	}
	return ""
}

// pathShape accepts a path written plainly: printable ASCII letters,
// digits, spaces and . _ - + , @ % = and /, no ".." element, not
// starting with a dash or ~, no glob or pathspec magic (* ? [ :).
func grantPathShape(p string) string {
	if p == "" {
		return "an empty path"
	}
	if p[0] == '-' || p[0] == '~' {
		return clip(p, 60) + " is not a plain path"
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" ._-+,@%=/", c) >= 0
		if !ok {
			return clip(p, 60) + " is not a plain path (it has " + fmt.Sprintf("%q", string(c)) + ")"
		}
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return clip(p, 60) + " has a \"..\" element"
		}
		if grantIsGitName(e) {
			return clip(p, 60) + " is in .git (its hooks and config run code)"
		}
	}
	return ""
}

// isGitName: a path element git reads as .git, in any case, and with the
// trailing dots and spaces some file systems drop.
func grantIsGitName(e string) bool {
	return strings.EqualFold(strings.TrimRight(e, ". "), ".git")
}

// hasGitElement reports a slash-separated path with a .git element.
func grantHasGitElement(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if grantIsGitName(e) {
			return true
		}
	}
	return false
}

// path judges a file the program reads or writes: written plainly, inside
// the workspace and outside .git as written and where its symlinks lead,
// and (written) not a file with another name nor one in a directory on
// PATH. "-" is standard input or output.
func (g *grantCheck) path(p string, write bool) string {
	if p == "-" {
		return ""
	}
	if why := grantPathShape(p); why != "" {
		return why
	}
	if g.prefix {
		return ""
	}
	abs := p
	if !path.IsAbs(abs) {
		abs = path.Join(g.cwd, abs)
	}
	abs = path.Clean(abs)
	rel, ok := Within(g.ws, abs)
	if !ok {
		return clip(p, 60) + " is outside the workspace"
	}
	if grantHasGitElement(rel) {
		return clip(p, 60) + " is in .git (its hooks and config run code)"
	}
	real, ok := realPath(abs)
	if !ok {
		return clip(p, 60) + " is a link that cannot be followed"
	}
	realRel, ok := Within(g.realWS, real)
	if !ok {
		return clip(p, 60) + " leads outside the workspace through a symlink"
	}
	if grantHasGitElement(realRel) {
		return clip(p, 60) + " leads into .git through a symlink"
	}
	if hardLinked(real) {
		// The same file under another name, perhaps .git/config or a
		// file outside the workspace: which file it is cannot be told.
		return clip(p, 60) + " has more than one name (a hard link): which file it is cannot be told"
	}
	if write && g.onPath(real) {
		return clip(p, 60) + " is in a directory on PATH: writing it changes what later commands run"
	}
	if write && (strings.HasSuffix(p, "/") || grantIsDir(real)) && g.onPath(path.Join(real, "x")) {
		// An output that is a directory (go build -o bin) gets files
		// whose names the input chooses: bin/ls, found before the
		// system's ls by every later command.
		return clip(p, 60) + " is a directory on PATH: files written in it change what later commands run"
	}
	return ""
}

// maxGrantTree bounds the entries of a tree a recursive read is checked
// through; a larger tree is not covered.
const maxGrantTree = 2000

// tree says why a recursive read of p (grep -r, ls -R), itself judged by
// path, reaches what a grant never covers: an entry git reads as .git at
// any depth (unless skipGit and it is a directory named exactly .git,
// which the call excludes), or, when the read is of contents, a file with
// another name (a hard link). Neither program follows a link inside the
// tree, so neither does the walk. "" when p is not a directory.
func (g *grantCheck) tree(p string, skipGit, contents bool) string {
	if g.prefix || p == "-" {
		return ""
	}
	abs := p
	if !path.IsAbs(abs) {
		abs = path.Join(g.cwd, abs)
	}
	root, ok := realPath(path.Clean(abs))
	if !ok {
		return clip(p, 60) + " is a link that cannot be followed"
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return ""
	}
	limit := g.treeMax
	if limit == 0 {
		limit = maxGrantTree
	}
	seen := 0
	dirs := []string{root}
	for len(dirs) > 0 {
		d := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		entries, err := os.ReadDir(d)
		if err != nil {
			continue // the program cannot read it either
		}
		for _, e := range entries {
			if seen++; seen > limit {
				return fmt.Sprintf("%s holds more than %d entries: askops does not look through it for .git", clip(p, 60), limit)
			}
			name := e.Name()
			full := path.Join(d, name)
			if grantIsGitName(name) || mayBeGit(name) {
				if skipGit && name == ".git" && e.IsDir() {
					continue
				}
				rel, _ := Within(root, full)
				return clip(p, 60) + " holds " + clip(path.Join(p, rel), 60) + ": a recursive read reaches into .git (its config may hold credentials)"
			}
			switch {
			case e.IsDir():
				dirs = append(dirs, full)
			case contents && e.Type().IsRegular() && hardLinked(full):
				rel, _ := Within(root, full)
				return clip(path.Join(p, rel), 60) + " has more than one name (a hard link): which file it is cannot be told"
			}
		}
	}
	return ""
}

// onPath reports whether the file real (absolute, links resolved) lies
// directly in a directory of $PATH (compared by identity, so a PATH entry
// that is a link counts) (as askops, whose environment the
// agent's commands inherit, sees it): a file written there, or whose mode
// or owner changes, changes what a later command runs.
func (g *grantCheck) onPath(real string) bool {
	if !g.pathDone {
		g.pathDone = true
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if !filepath.IsAbs(d) {
				d = filepath.Join(g.cwd, d) // "" and "." are the working directory
			}
			if fi, err := os.Stat(d); err == nil {
				g.pathDirs = append(g.pathDirs, fi)
			} else {
				// Not there yet (node_modules/.bin before an install):
				// compared as written.
				g.pathLater = append(g.pathLater, filepath.ToSlash(filepath.Clean(d)))
			}
		}
	}
	parent := path.Dir(real)
	for _, d := range g.pathLater {
		if parent == d {
			return true
		}
	}
	dir, err := os.Stat(parent)
	if err != nil {
		return false
	}
	for _, fi := range g.pathDirs {
		if os.SameFile(fi, dir) {
			return true
		}
	}
	return false
}

// operandsAre judges every operand as kind k.
func grantOperandsAre(k grantValue) func(*grantCheck, *grantArgs) string {
	return func(g *grantCheck, a *grantArgs) string {
		for _, o := range a.operands {
			if why := g.value(k, o); why != "" {
				return why
			}
		}
		return ""
	}
}

// judgeGrant reads words with the model for them: why a prefix (g.prefix)
// or a call falls outside it, or "" when it is inside. A prefix shorter
// than every model's words (openssl, gh pr) is inside when a model starts
// with it.
func judgeGrant(g *grantCheck, words []string) string {
	if len(words) == 0 {
		return "no command"
	}
	m, why := grantModelFor(words)
	if m == nil {
		if g.prefix && grantModelsUnder(words) {
			return ""
		}
		if why == "" {
			why = "askops has no model of " + clip(strings.Join(words[:min(len(words), 2)], " "), 60) +
				"'s options, so a prefix grant could not tell a call that only does what was granted from one that runs a program or writes anywhere"
		}
		return why
	}
	if !g.prefix && g.ws == "" {
		return "the call names no workspace to judge its files against"
	}
	if !g.prefix {
		if rel, ok := Within(g.ws, g.cwd); !ok || grantHasGitElement(rel) {
			return "the working directory is outside the workspace or in .git"
		}
		if why := g.program(words[0]); why != "" {
			return why
		}
		if why := g.subprograms(words); why != "" {
			return why
		}
	}
	a, why := m.read(g, words[len(m.words):])
	if why != "" {
		return why
	}
	if m.operands == nil {
		if len(a.operands) > 0 {
			return m.name() + " takes no operand here (" + clip(a.operands[0], 40) + ")"
		}
		return ""
	}
	return m.operands(g, &a)
}

// program says why the program word runs a file the workspace holds (the
// agent can rewrite it): written as a path into the workspace, or found
// there through $PATH. "" when it is a program of the system.
func (g *grantCheck) program(w string) string {
	var found string
	if strings.Contains(w, "/") {
		if !path.IsAbs(w) {
			return w + " is a program in the workspace"
		}
		found = path.Clean(w)
	} else if found = grantLookPath(w, g.cwd); found == "" {
		return "" // no such program: nothing runs
	}
	if within(found, g.ws) {
		return clip(w, 60) + " is a program the workspace holds"
	}
	if real, ok := realPath(found); !ok || within(real, g.realWS) {
		return clip(w, 60) + " is a program the workspace holds (through a link)"
	}
	return ""
}

// grantLookPath is the file a name without a slash runs as, found through
// $PATH as askops sees it (relative entries from cwd), or "" when none.
func grantLookPath(name, cwd string) string {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		p := filepath.ToSlash(filepath.Join(d, name))
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// grantRunsWorkspaceProgram says why the name a program runs by (a
// program its config or defaults name, looked up through $PATH) is a file
// the workspace holds, or is a path into it; "" when it is not.
func grantRunsWorkspaceProgram(name, cwd, ws, realWS string) string {
	g := &grantCheck{cwd: cwd, ws: ws, realWS: realWS}
	return g.program(name)
}

// subprograms says why a program the modelled one starts by name, through
// $PATH (git's ssh, gpg and pager; the go command's C compiler and version
// control tools; docker's ssh; gh's git; kubectl's credential plugins), is
// a file the workspace holds: the grant's model covers the program, not
// code the agent can put on PATH for it to run. "" when none is.
func (g *grantCheck) subprograms(words []string) string {
	var names []string
	switch path.Base(words[0]) {
	case "git":
		names = []string{"ssh", "gpg", "gpgsm", "ssh-keygen", "less"}
	case "go":
		names = []string{"gcc", "cc", "clang", "g++", "c++", "clang++", "gfortran", "pkg-config", "swig",
			"git", "hg", "svn", "bzr", "fossil"}
	case "docker", "podman", "nerdctl":
		names = []string{"ssh"}
	case "gh":
		names = []string{"git", "less"}
	case "kubectl", "oc":
		cmds, why := grantKubeExecCommands()
		if why != "" {
			return why
		}
		names = cmds
	}
	for _, n := range names {
		if why := g.program(n); why != "" {
			return path.Base(words[0]) + " runs " + clip(n, 60) + " by name, and " + why
		}
	}
	return ""
}

// newGrantCheck makes the check of a call in cwd inside workspace.
func newGrantCheck(cwd, workspace string) *grantCheck {
	g := &grantCheck{}
	if cwd != "" && path.IsAbs(cwd) {
		g.cwd = path.Clean(cwd)
	}
	if workspace != "" && path.IsAbs(workspace) && g.cwd != "" {
		g.ws = path.Clean(workspace)
		g.realWS = g.ws
		if r, err := filepath.EvalSymlinks(g.ws); err == nil {
			g.realWS = filepath.ToSlash(r)
		}
	}
	return g
}

// MayBeGitPath reports whether a slash-separated path has an element a
// file system askops may not know reads as .git: in any case, with
// Windows' trailing dots, spaces and streams or HFS+'s ignored code points,
// or an 8.3 short name (which may be any name in its directory). A file
// grant keeps out of every such path.
func MayBeGitPath(p string) bool { return gitPath(p, true) || grantHasGitElement(p) || mayBeGit(p) }

// GrantHardLinked reports whether p is an existing file with more than one
// name: a file grant on one name says nothing of the file under its others
// (.git/config, say).
func GrantHardLinked(p string) bool { return hardLinked(p) }

// GrantTreeNotCovered says why a recursive read of dir (a search under a
// file grant), on this machine, reaches what no grant covers: an entry any
// file system may read as .git at any depth, a file with other names (a
// hard link), more entries than askops looks through, a directory that
// cannot be resolved. "" when none.
func GrantTreeNotCovered(dir, workspace string) string {
	g := newGrantCheck(dir, workspace)
	if g.ws == "" {
		return "no workspace to judge the search against"
	}
	g.treeMax = maxSearchWalk
	if why := g.tree(dir, false, true); why != "" {
		return why
	}
	return ""
}
