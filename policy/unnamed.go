package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/askops/askops/internal/globbase"
)

// Files a command reads without naming them, for read_file rules.
//
// The reading is closed-world: what it cannot read in full is never an
// allow, and a read_file deny rule holds for bash in every mode. reads.go
// checks the paths a command names; this file checks the files it reads
// without naming each:
//
//   - a glob (cat .e*, cat .[e]nv, cat */.env, cat < .e?v) reads every
//     file it may match. bash's * and ? skip a leading dot unless dotglob
//     is set, and the policy cannot know whether it is (BASHOPTS in the
//     environment: env BASHOPTS=dotglob bash -c 'echo ./*' lists .env; a
//     shell snapshot; GLOBIGNORE; zsh's GLOB_DOTS): it takes it as set. What keeps ordinary globs allowed is the name
//     filter, the glob's last segment: *.go cannot match .env, * can;
//   - a directory operand of a program that reads what a directory holds
//     (grep -r KEY ., tar cf - ., zip -r, cp -r, cat ., unknown programs)
//     reads every file under it; namesOnly lists the programs that read
//     names only;
//   - a program that reads a tree with no path operand (grep -r KEY,
//     rg KEY, ag, ack, git grep, git add -A, npm pack, vercel) reads ".";
//   - a program run on file names read from input (find . | xargs cat)
//     reads files the policy cannot name: asked, in every mode.
//
// Each is judged as a Grep of its directory is (under.go, filecall.go):
// listed when the call was resolved on this machine (every file found,
// through links, meets the rules as a read of it), else by whether a rule
// could name a file there (mayNameUnder). A deny rule denies only what is
// certain: the file found there, read by a program known to read what it
// is given (knownReader); anything less asks, in every mode, so no command
// that may never open the file is denied and none that may is allowed.
// Only when read_file deny or ask rules exist does anything here run;
// without them nothing changes.

// treeRead is a read of files the command does not name: those a glob may
// match under its fixed directory, or every file under a directory.
type treeRead struct {
	shown string   // the word as written, or the directory ("."), for the reason
	base  string   // the directory: as written (resolved like an operand) or absolute
	rest  []string // the glob's segments after base; nil: every file under base
	glob  bool     // from a glob (the reason says so)
	// descend: a directory among the matches is read whole (the program
	// reads what a directory it is given holds).
	descend bool
	// flat: the program never reads what a directory holds (cat, wc,
	// grep without -r): unseen, a match is judged by its name alone.
	flat bool
	// unseen: base is not known to be where the files are (a ~ the policy
	// cannot place, a glob that climbs with ".."): judged by the rules alone.
	unseen bool
	// certain: the program is known to read what it is given
	// (knownReader): a file a deny rule names, found there, is denied.
	// Otherwise (an unknown program: go build ., eslint .; a loop's body;
	// a tree the policy could not list) the command asks, in every mode:
	// it may read the file, and the policy cannot tell.
	certain bool
	cwd     string
	cwds    []string
	how     string // for a tree written (writeTreeVerdict): what writes it
	// mapped: the files listed are judged only at the path given (a
	// copy's new name), not where they were listed (its source).
	mapped bool
	// lexical: a link found is itself what is written, not followed (a
	// tree written: rm -r deletes the link, chmod -R passes it by, cp -r
	// copies it as a link).
	lexical bool
}

// addTree records t, bounded as reads are (maxMentions).
func (z *analyzer) addTree(t treeRead) {
	z.readAfterLinks()
	if len(z.a.trees) >= maxMentions {
		z.a.readsCut = true
		return
	}
	t.cwd, t.cwds = z.cwd, z.cwds
	z.a.trees = append(z.a.trees, t)
}

// treeOperands records what the command named name with words ws reads
// without naming it: its glob operands, its directory operands (the
// reads mentionWords recorded from reads[first:], marked tree), and the
// tree it searches with no path operand.
func (z *analyzer) treeOperands(name string, ws []word, first int) {
	descend, flat, certain := !namesOnly(name, ws), flatReader(name, ws), knownReader(name, ws)
	if descend {
		where := gitPlaces(name, ws)
		for i := first; i < len(z.a.reads); i++ {
			if !where[z.a.reads[i].p] {
				z.a.reads[i].tree, z.a.reads[i].certain = true, certain
			}
		}
	}
	firstTree := len(z.a.trees)
	defer func() {
		for i := firstTree; i < len(z.a.trees); i++ {
			z.a.trees[i].certain = certain
		}
	}()
	for _, w := range ws[1:] {
		// A program that reads names only (ls *, echo *) opens none of
		// what its glob matches.
		// One that starts with "-" matches only names the program reads
		// as options (globOptions: never allowed).
		if descend && !w.ok && w.pat != "" && !strings.HasPrefix(w.pat, "-") && (hasWild(w.pat) || strings.HasPrefix(w.pat, "~")) {
			z.patternRead(w.pat, descend, flat)
		}
	}
	for _, w := range ws[1:] {
		// An operand bash expands at run time whose last name is written
		// out ($HOME/.env, "$PWD/.env", $d/.env): a file of that name in
		// a directory the policy cannot place.
		if !descend || w.ok || w.pat != "" || strings.HasPrefix(w.loose, "-") {
			continue
		}
		i := strings.LastIndexByte(w.loose, '/')
		if i < 0 || i == len(w.loose)-1 || strings.Contains(w.loose[i+1:], anyText) {
			continue
		}
		z.addTree(treeRead{shown: strings.ReplaceAll(w.loose, anyText, "…"), base: "/", rest: []string{escapeGlob(w.loose[i+1:])},
			glob: true, descend: true, flat: true, unseen: true})
	}
	if implicitTree(name, ws) {
		z.addTree(treeRead{shown: ".", base: ".", descend: true})
	}
}

// notReadDests clears the tree mark of the command's operands from
// reads[firstRead:] that are where it writes rather than what it reads:
// a write target it recorded from writes[firstWrite:] (tar -C out x,
// unzip -d out, wget -P dir), and the destination of cp, mv, rsync, scp,
// install and ln (the last operand, or -t's). Only the files written
// there are judged (as write_file).
func (z *analyzer) notReadDests(name string, ws []word, firstRead, firstWrite int) {
	dest := ""
	switch name {
	case "go":
		// go test -run . / -bench .: a regular expression, not a directory.
		for i := 1; i+1 < len(ws); i++ {
			switch strings.TrimPrefix(ws[i].loose, "-") {
			case "-run", "run", "-bench", "bench", "-skip", "skip", "-list", "list", "-fuzz", "fuzz":
				v := ws[i+1].loose
				z.clearTree(firstRead, func(p string) bool { return p == v })
			}
		}
	case "cp", "mv", "rsync", "scp", "install", "ln":
		for i := 1; i < len(ws); i++ {
			l := ws[i].loose
			switch {
			case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.Contains(l, "t") && l[len(l)-1] != 't':
				v := l[strings.IndexByte(l, 't')+1:] // -tDIR
				z.clearTree(firstRead, func(p string) bool { return p == v })
				return
			case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && l[len(l)-1] == 't':
				if i+1 < len(ws) {
					z.clearTree(firstRead, func(p string) bool { return p == ws[i+1].loose })
					return
				}
			case strings.HasPrefix(l, "--"):
				// --target-directory, or an abbreviation (--target=.)
				v, has, ok := longOption(l, "--target-directory", 3)
				if !ok {
					continue
				}
				if !has && i+1 < len(ws) {
					v = ws[i+1].loose
				}
				z.clearTree(firstRead, func(p string) bool { return p == v })
				return
			case !strings.HasPrefix(l, "-"):
				dest = l
			}
		}
	}
	z.clearTree(firstRead, func(p string) bool {
		if p == dest {
			return true
		}
		abs, _ := resolveIn(p, z.cwd, z.workspace)
		for _, w := range z.a.writes[firstWrite:] {
			if abs != "" && w.abs == abs {
				return true
			}
		}
		return false
	})
}

// clearTree clears the tree mark of the reads from first on whose path
// dest accepts.
func (z *analyzer) clearTree(first int, dest func(string) bool) {
	for i := first; i < len(z.a.reads); i++ {
		if z.a.reads[i].tree && dest(z.a.reads[i].p) {
			z.a.reads[i].tree = false
		}
	}
}

// loopReads records what a for/select loop's words name as files its
// body may read: for f in .e*; do cat "$f"; done reads what the glob
// matches, though cat's operand is a variable. The body's program is not
// known here: a match is judged by its name where unseen (flat), and a
// directory matched is read whole where listed.
func (z *analyzer) loopReads(n *syntax.ForClause) {
	it, ok := n.Loop.(*syntax.WordIter)
	if !ok {
		return
	}
	for _, item := range it.Items {
		for _, w := range expandedWords(item) {
			switch {
			case w.ok:
				z.mention(w.lit)
			case w.pat != "" && !strings.HasPrefix(w.pat, "-") && (hasWild(w.pat) || strings.HasPrefix(w.pat, "~")):
				z.patternRead(w.pat, true, true)
			case w.pat != "":
				z.mention(unescapeGlob(w.pat))
			}
		}
	}
}

// wrapperOperands undoes treeOperands' directory reads for a wrapper
// (timeout, sudo, nice …): its operands are the command it runs, whose
// own reads are recorded when that command is analysed.
func (z *analyzer) wrapperOperands(firstRead, firstTree int) {
	for i := firstRead; i < len(z.a.reads); i++ {
		z.a.reads[i].tree = false
	}
	kept := z.a.trees[:firstTree]
	for _, t := range z.a.trees[firstTree:] {
		if t.rest != nil {
			t.descend = false
			kept = append(kept, t)
		}
	}
	z.a.trees = kept
}

// patternRead records the files the pattern pat (word.pat) may match;
// descend says a directory matched is read whole.
func (z *analyzer) patternRead(pat string, descend, flat bool) {
	if strings.HasPrefix(pat, "~") {
		// A home directory (~, ~user) the policy cannot place: judged by
		// the rules on any directory.
		_, rest, _ := strings.Cut(pat, "/")
		t := treeRead{shown: pat, base: "/", rest: segments(rest), glob: true, descend: descend, flat: flat, unseen: true}
		if t.rest != nil || descend {
			z.addTree(t)
		}
		return
	}
	if !hasWild(pat) {
		z.mention(unescapeGlob(pat))
		return
	}
	base, rest := globbase.Split(pat)
	if !globbase.StaysUnder(rest) {
		// */../.env: what it matches is not under base.
		z.addTree(treeRead{shown: pat, base: "/", glob: true, descend: true, unseen: true})
		return
	}
	segs := segments(rest)
	z.addTree(treeRead{shown: pat, base: unescapeGlob(base), rest: segs, glob: true, descend: descend, flat: flat})
	if descend && !flat && len(segs) == 1 && globAccepts(segs[0], "..") {
		// .* matches .. in bash before 5.2 (globskipdots): the parent,
		// read whole by a program that reads directories.
		z.addTree(treeRead{shown: pat, base: path.Join(unescapeGlob(base), ".."), glob: true, descend: true})
	}
}

// segments are rest's non-empty "/"-separated parts; nil when none.
func segments(rest string) []string {
	var out []string
	for _, s := range strings.Split(rest, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// namesOnly reports whether the program named name, with words ws, reads
// only the names under a directory operand, never what its files hold: a
// closed list, each with why. Any other program (cat, grep, tar, zip, cp,
// rsync, diff, git, sha256sum, mv, an unknown one) is taken to read every
// file under a directory it is given.
func namesOnly(name string, ws []word) bool {
	switch name {
	case "ls", "dir", "vdir", "tree", "exa", "eza", "lsd":
		return true // list names and metadata (ls -R too)
	case "cd", "pushd", "popd", "chdir":
		return true // change the directory
	case "mkdir", "rmdir", "touch", "ln":
		return true // make or remove names, set times; a link made is followed by later reads' checks
	case "rm":
		return true // rm -r unlinks what it lists, it opens no file to read
	case "stat", "du", "df", "test", "[", "file":
		return true // metadata; file says "directory" of a directory
	case "realpath", "readlink", "dirname", "basename":
		return true // names
	case "chmod", "chown", "chgrp":
		return true // metadata, -R too
	case "echo", "printf", "pwd", "true", "false", ":":
		return true // never open their operands
	case "find":
		// Names, unless it runs commands on what it finds: the {} they
		// get names files under its start points the policy cannot see.
		for _, w := range ws[1:] {
			switch w.loose {
			case "-exec", "-execdir", "-ok", "-okdir":
				return false
			}
		}
		return true
	}
	// Not mv: a directory renamed (or copied across file systems) takes
	// its files out from under the rules that name them.
	return false
}

// flatReader reports whether the program named name, with words ws,
// reads the files it is given and never what a directory holds (cat on a
// directory fails with EISDIR): where the policy cannot list what a glob
// matches, the glob's name filter alone says what it reads. grep is one
// unless recursive.
func flatReader(name string, ws []word) bool {
	switch name {
	case "cat", "head", "tail", "wc", "sort", "uniq", "less", "more", "base64", "base32", "xxd", "od",
		"hexdump", "strings", "nl", "tac", "cut", "paste", "md5sum", "sha1sum", "sha224sum", "sha256sum",
		"sha384sum", "sha512sum", "b2sum", "cksum", "sum", "fold", "fmt", "rev", "cmp", "jq":
		return true
	case "grep", "egrep", "fgrep":
		recursive, _ := grepArgs(ws)
		return !recursive
	case "cp", "scp":
		// Without -r (-R, -a) a directory operand is skipped ("omitting
		// directory"), never read; the files it names, and those its
		// globs match, are (cp "$PWD/.env" out/s copied .env).
		for _, w := range ws[1:] {
			l := w.loose
			if l == "--recursive" || l == "--archive" || strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.ContainsAny(l, "rRa") {
				return false
			}
		}
		return true
	}
	return namesOnly(name, ws)
}

// gitPlaces are the directories git's global options say it works in
// (-C DIR, --git-dir=DIR, --work-tree=DIR): where it runs, not trees it
// reads (gitrepo.go judges those places). nil for any other program.
func gitPlaces(name string, ws []word) map[string]bool {
	if name != "git" {
		return nil
	}
	out := map[string]bool{}
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		switch {
		case l == "-C" || l == "--git-dir" || l == "--work-tree":
			if i+1 < len(ws) {
				out[ws[i+1].loose] = true
				i++
			}
		case strings.HasPrefix(l, "--git-dir=") || strings.HasPrefix(l, "--work-tree="):
			_, v, _ := strings.Cut(l, "=")
			out[v] = true
		case !strings.HasPrefix(l, "-"):
			return out // the subcommand: its own operands are its reads
		}
	}
	return out
}

// knownReader reports whether the program named name, with words ws, is
// known to read the contents of the files it is given, and of the files
// under a directory it is given where it reads directories: a file a
// deny rule names among them is read for sure. A program not known so
// (go build ., eslint ., docker build ., git add ., rg, which skips
// hidden files) may or may not read it: asked, not denied.
func knownReader(name string, ws []word) bool {
	switch name {
	case "tar", "bsdtar", "zip", "cp", "scp", "rsync", "diff":
		return true
	case "grep", "egrep", "fgrep":
		return true
	}
	return flatReader(name, ws) && !namesOnly(name, ws)
}

// implicitTree reports whether the command reads the tree under its
// working directory without a path operand saying so.
func implicitTree(name string, ws []word) bool {
	switch name {
	case "grep", "egrep", "fgrep":
		recursive, noOperand := grepArgs(ws)
		return recursive && noOperand
	case "rg", "ag", "ack", "ack-grep":
		return searchTree(name, ws)
	case "git":
		sub, args := gitSubcommand(ws[1:])
		switch sub {
		case "grep":
			// The repository's files from the working directory down (at a
			// revision, all of it); path operands only narrow it.
			return true
		case "add":
			// git add -A (--all): every file, untracked ones too, into the
			// index, where git diff --cached and git show :f print them.
			for _, a := range args {
				if a.loose == "-A" || a.loose == "--all" || a.loose == "--no-ignore-removal" ||
					strings.HasPrefix(a.loose, "-") && !strings.HasPrefix(a.loose, "--") && strings.Contains(a.loose, "A") {
					return true
				}
			}
		case "stash":
			// git stash -u (-a): untracked files into the stash, which
			// git stash show -p prints.
			for _, a := range args {
				switch a.loose {
				case "-u", "--include-untracked", "-a", "--all":
					return true
				}
			}
		}
	case "npm", "pnpm", "yarn", "cargo":
		// pack and publish read the package's tree (and publish sends it):
		// what lands in it is the ignore files' business, which the policy
		// does not read.
		switch firstOperand(ws) {
		case "pack", "publish", "package":
			return true
		}
	case "vercel", "netlify", "semgrep", "gitleaks":
		// Deploy the working directory (vercel, netlify deploy) or scan it
		// and print what they find (semgrep, gitleaks detect).
		switch firstOperand(ws) {
		case "", "deploy", "scan", "ci", "detect", "dir", "protect":
			return true
		}
	case "python", "python3":
		// python -m http.server serves the working directory: curl
		// localhost:8000/.env then reads what no operand named.
		for i, w := range ws[1:] {
			if w.loose == "-m" && i+2 < len(ws) && ws[i+2].loose == "http.server" {
				return true
			}
		}
	case "php":
		for _, w := range ws[1:] {
			if w.loose == "-S" {
				return true // php -S serves the working directory (or -t's)
			}
		}
	case "ctags", "etags", "uctags":
		for _, w := range ws[1:] {
			if w.loose == "-R" || strings.HasPrefix(w.loose, "--recurse") {
				return true // ctags -R reads "." with no operand; its tags hold lines of each file
			}
		}
	}
	return false
}

// firstOperand is the first word after the command that is not an
// option: a subcommand.
func firstOperand(ws []word) string {
	for _, w := range ws[1:] {
		if !strings.HasPrefix(w.loose, "-") {
			return w.loose
		}
	}
	return ""
}

// inputNames records that the command named name runs in (xargs cat,
// parallel grep K) on file names it reads from its input, which the
// policy cannot check against the read_file rules; a program that reads
// names only there (xargs rm, xargs ls) reads none of those files.
func (z *analyzer) inputNames(name string, in inner) {
	if len(in.words) == 0 {
		return
	}
	switch name {
	case "xargs", "parallel", "entr":
		if n := cmdName(in.words[0]); !namesOnly(n, in.words) {
			z.a.unjudgedRead(clip(printable(name+" "+orUnknown(n)), 60) + " reads the files named on its input")
		}
	}
}

// listedNames records a program that reads the files a list names (a
// file, or its input), which the policy cannot check against the
// read_file rules: zip -@, cpio -o, wc and sort --files0-from, a
// checksum's -c, git's --pathspec-from-file and hash-object --stdin-paths
// (tar -T is tarWrites'). Each
// read .env from a list holding ".env" past a deny rule on **/.env.
func (z *analyzer) listedNames(name string, ws []word) {
	long := func(l, o string) bool {
		n, _, _ := strings.Cut(l, "=")
		return len(n) > 3 && strings.HasPrefix(o, n)
	}
	for _, w := range ws[1:] {
		l := w.loose
		if l == "--" {
			return
		}
		short := len(l) > 1 && l[0] == '-' && l[1] != '-'
		why := ""
		switch name {
		case "zip":
			if l == "-@" || long(l, "--names-stdin") {
				why = "zip -@ archives the files its input names"
			}
		case "cpio":
			if short && strings.ContainsRune(l, 'o') || long(l, "--create") {
				why = "cpio -o archives the files its input names"
			}
		case "wc", "sort":
			if long(l, "--files0-from") {
				why = name + " --files0-from reads the files a list names"
			}
		case "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "shasum":
			if short && strings.ContainsRune(l, 'c') || long(l, "--check") {
				why = name + " -c reads the files a list names"
			}
		case "git":
			if long(l, "--pathspec-from-file") {
				why = "git --pathspec-from-file takes the files a list names"
			} else if l == "--stdin-paths" {
				why = "git hash-object --stdin-paths stores the files its input names"
			}
		}
		if why != "" {
			z.a.unjudgedRead(why)
			return
		}
	}
}

// unjudgedVerdict asks, in every mode, when read_file rules exist and the
// command reads files it cannot check against them (analysis.unjudged: a
// program run on names from its input, an operand set to a value the
// policy cannot see): what it reads cannot be judged, so it is never an
// allow.
func (e *Engine) unjudgedVerdict(an *analysis) (Verdict, bool) {
	if an.unjudged == "" || !e.hasReadRules() {
		return Verdict{}, false
	}
	return Verdict{Decision: Ask, Reason: an.unjudged + ", which the policy cannot check against the read_file rules"}, true
}

// grepArgs reads GNU grep's words ws: whether it is recursive (-r, -R,
// --recursive, -d recurse, --directories=recurse), and whether no file
// operand is left after the pattern, which is the first operand unless
// -e, -f, --regexp or --file gave it (grep -r then searches "."). A word
// the policy cannot read counts as unsure: no operand.
func grepArgs(ws []word) (recursive, noOperand bool) {
	patternGiven, unsure := false, false
	operands := 0
	value := func(i *int, glued string) string {
		if glued != "" {
			return glued
		}
		*i++
		if *i < len(ws) {
			return ws[*i].loose
		}
		return ""
	}
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		l := w.loose
		if isOperand, unread := searcherOperand(w); isOperand {
			operands++
			unsure = unsure || unread
			continue
		}
		switch {
		case l == "--":
			operands += len(ws) - i - 1
			i = len(ws)
		case strings.HasPrefix(l, "--"):
			name, val, hasVal := strings.Cut(l[2:], "=")
			if !hasVal {
				val = ""
			}
			switch name {
			case "recursive", "dereference-recursive":
				recursive = true
			case "regexp", "file":
				patternGiven = true
				if !hasVal {
					value(&i, "")
				}
			case "directories":
				if value(&i, val) == "recurse" {
					recursive = true
				}
			case "max-count", "after-context", "before-context", "context", "devices", "binary-files",
				"label", "include", "exclude", "exclude-from", "exclude-dir", "group-separator":
				if !hasVal {
					value(&i, "")
				}
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for j := 1; j < len(l); j++ {
				c := l[j]
				if c == 'r' || c == 'R' {
					recursive = true
				}
				if strings.IndexByte("efmABCdD", c) >= 0 {
					v := value(&i, l[j+1:])
					patternGiven = patternGiven || c == 'e' || c == 'f'
					recursive = recursive || c == 'd' && v == "recurse"
					break
				}
			}
		default:
			operands++
		}
	}
	if !patternGiven {
		operands--
	}
	return recursive, operands <= 0 || unsure
}

// searcherOperand reads a word of grep's, rg's, ag's or ack's line that
// is an operand whatever the options around it say: a glob (its files) or
// a word the policy cannot read (unread: it may be anything).
func searcherOperand(w word) (isOperand, unread bool) {
	switch {
	case !w.ok && w.pat != "" && !strings.HasPrefix(w.pat, "-"):
		return true, false
	case w.splat || !w.known():
		return true, true
	}
	return false, false
}

// searchTree reports whether a recursive searcher (rg, ag, ack), which
// reads "." when given no path, is given none. Its options that take a
// value are listed; a long option not listed, or a word the policy cannot
// read, is unsure: ".".
func searchTree(name string, ws []word) bool {
	short, long := "efgjmAMBCtTdrE", []string{
		"regexp", "file", "glob", "iglob", "threads", "max-count", "after-context", "before-context", "context",
		"encoding", "max-columns", "type", "type-not", "type-add", "type-clear", "max-depth", "replace", "colors",
		"color", "context-separator", "field-context-separator", "field-match-separator", "path-separator",
		"engine", "max-filesize", "dfa-size-limit", "regex-size-limit", "ignore-file", "pre", "pre-glob", "sort",
		"sortr", "hostname-bin", "hyperlink-format", "generate",
	}
	flags := []string{
		"files", "hidden", "no-ignore", "no-ignore-vcs", "no-ignore-dot", "no-ignore-parent", "no-ignore-global",
		"follow", "count", "files-with-matches", "files-without-match", "ignore-case", "smart-case", "case-sensitive",
		"line-number", "no-line-number", "word-regexp", "line-regexp", "fixed-strings", "invert-match", "json",
		"no-heading", "heading", "with-filename", "no-filename", "only-matching", "pcre2", "multiline",
		"multiline-dotall", "text", "binary", "search-zip", "no-messages", "vimgrep", "stats", "unrestricted",
		"null", "null-data", "trim", "column", "byte-offset", "passthru", "debug", "literal", "recurse",
	}
	if name != "rg" {
		short, long = "ABCGgmp", []string{"after", "before", "context", "file-search-regex", "max-count",
			"depth", "ignore", "ignore-dir", "ignore-file", "pager", "path-to-ignore", "workers", "type-set",
			"type-add", "type-del", "output", "match", "color-filename", "color-match", "color-lineno", "group", "files-from"}
		flags = append(flags, "all-types", "all-text", "skip-vcs-ignores", "search-binary", "nocolor", "color", "noheading", "nogroup")
	}
	patternGiven, unsure := false, false
	operands := 0
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		l := w.loose
		if isOperand, unread := searcherOperand(w); isOperand {
			operands++
			unsure = unsure || unread
			continue
		}
		switch {
		case l == "--":
			operands += len(ws) - i - 1
			i = len(ws)
		case strings.HasPrefix(l, "--"):
			n, _, hasVal := strings.Cut(l[2:], "=")
			switch {
			case n == "regexp" || n == "file" || n == "files" || n == "files-from" || n == "type-list":
				patternGiven = true // no pattern operand: every operand is a path
				if !hasVal && n != "files" && n != "type-list" {
					i++
				}
			case hasVal:
			case contains(long, n):
				i++
			case !contains(flags, n) && !strings.HasPrefix(n, "no-"):
				unsure = true
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for j := 1; j < len(l); j++ {
				if strings.IndexByte(short, l[j]) >= 0 {
					if l[j] == 'e' || l[j] == 'f' {
						patternGiven = true
					}
					if j == len(l)-1 {
						i++
					}
					break
				}
			}
		default:
			operands++
		}
	}
	if !patternGiven {
		operands--
	}
	return operands <= 0 || unsure
}

// globPattern is w as a pathname pattern: unquoted text as bash matches
// it (its backslashes escape), quoted text escaped, a leading ~ kept. ""
// when w has a part whose value the policy cannot know (an expansion,
// $"…", a brace expansion: expandedWords gives each word it makes).
func globPattern(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if braceLike(p.Value) {
				return ""
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				s, ok := decodeANSIC(v)
				if !ok {
					return ""
				}
				v = s
			}
			b.WriteString(escapeGlob(v))
		case *syntax.DblQuoted:
			if p.Dollar {
				return ""
			}
			var q strings.Builder
			for _, x := range p.Parts {
				l, ok := x.(*syntax.Lit)
				if !ok {
					return ""
				}
				dquotedLit(&q, l.Value)
			}
			b.WriteString(escapeGlob(q.String()))
		case *syntax.ExtGlob:
			// @(env), !(x), +(…): under extglob (shopt -s extglob on an
			// earlier line, bash -O extglob) a pattern within one name;
			// taken as * there, which matches whatever it may.
			b.WriteString("*")
		default:
			return ""
		}
	}
	return b.String()
}

// hasWild reports an unescaped *, ? or [ with a ] after it (a lone [ is
// itself) in the pattern p.
func hasWild(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.Contains(p[i+1:], "]") {
				return true
			}
		}
	}
	return false
}

// unescapeGlob is the pattern p without its escaping backslashes: the
// name it matches when it has no wildcard.
func unescapeGlob(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// nameFilter is a glob's last segment as a base-name filter for
// globAccepts and nameMayMatch: "" (every name) when it has what path.Match
// does not read as bash might (extglob's @(…), zsh's qualifiers *(D) and
// ^x, **).
func nameFilter(seg string) string {
	if seg == "**" || strings.ContainsAny(seg, "()|^#~<>") {
		return ""
	}
	return seg
}

// treeHit is the first rule a tree read meets.
type treeHit struct {
	r     rule
	tree  treeRead
	found string // the file found that the rule names, when listed
}

// treeHits are the deny and ask rules the command's tree reads meet; nil
// when none. linked is the first file listed that has more than one name
// (a hard link), as linkedRead asks about a named one.
type treeHits struct {
	deny, ask *treeHit
	linked    string
}

// of is the first rule of decision d (Deny or Ask) the trees met; nil
// when none.
func (h *treeHits) of(d Decision) *treeHit {
	if d == Ask {
		return h.ask
	}
	return h.deny
}

// treeJudge judges the tree reads of one command against the read_file
// rules.
type treeJudge struct {
	ws        string
	resolved  bool
	deny, ask []rule
	hits      treeHits
	budget    int // entries still to list (maxSearchWalk for the command)
}

// treeVerdict is the verdict of the read_file rules among rules (e.deny or
// e.ask) on the files the command reads without naming them, if one applies.
func (e *Engine) treeVerdict(rules []rule, ws string, an *analysis, d Decision, resolved bool) (Verdict, bool) {
	if !hasReadRule(rules) {
		return Verdict{}, false
	}
	if an.treeHits == nil {
		an.treeHits = e.judgeTrees(ws, an, resolved)
	}
	h := an.treeHits.of(d)
	if h == nil {
		return Verdict{}, false
	}
	what := "the files under " + shownPath(h.tree.shown)
	if h.tree.glob {
		what = "the files the glob " + shownPath(h.tree.shown) + " may match"
	}
	found := ""
	if h.found != "" {
		found = fmt.Sprintf(" (%s is there)", shownPath(relTo(h.found, ws)))
	}
	if d == Deny && (h.found == "" || !h.tree.certain) {
		// The rule may name a file the command reads, or the program may
		// not read it: never an allow, and not a certain denial either.
		return Verdict{Decision: Ask, Reason: h.r.why(fmt.Sprintf("the command may read %s, which may include what a read_file deny rule names%s: the policy cannot tell whether it reads it", what, found))}, true
	}
	if d == Deny {
		return Verdict{Decision: Deny, Rule: h.r.name, Reason: h.r.why(fmt.Sprintf("denied by rule: the command reads %s, which include what the rule names%s (read_file)", what, found))}, true
	}
	return Verdict{Decision: Ask, Rule: h.r.name, Reason: h.r.why(fmt.Sprintf("the rules ask before read_file of %s, which may include what the rule names%s (the command may read them)", what, found))}, true
}

// treeLinked asks, in every mode, when read_file rules exist and a file
// the command reads without naming it has more than one name: a rule may
// protect another of them (linkedRead, for a file it names).
func (e *Engine) treeLinked(ws string, an *analysis, resolved bool) (Verdict, bool) {
	if !e.hasReadRules() {
		return Verdict{}, false
	}
	if an.treeHits == nil {
		an.treeHits = e.judgeTrees(ws, an, resolved)
	}
	if an.treeHits.linked == "" {
		return Verdict{}, false
	}
	return Verdict{Decision: Ask, Reason: linkedReadWhy("the command may read " + shownPath(relTo(an.treeHits.linked, ws)))}, true
}

// hasReadRule reports a read_file rule among rules.
func hasReadRule(rules []rule) bool {
	for _, r := range rules {
		if r.Tool == ToolReadFile {
			return true
		}
	}
	return false
}

// relTo is p relative to the workspace when inside it.
func relTo(p, ws string) string {
	if _, rel, inside := resolveFile(p, "", ws); inside {
		return rel
	}
	return p
}

// judgeTrees finds the first deny and ask rule the command's tree reads
// meet: its directory operands (reads marked tree that name a directory)
// and its globs and implicit trees.
func (e *Engine) judgeTrees(ws string, an *analysis, resolved bool) *treeHits {
	j := &treeJudge{ws: ws, resolved: resolved, budget: maxSearchWalk}
	for _, rs := range []*[]rule{&j.deny, &j.ask} {
		src := e.deny
		if rs == &j.ask {
			src = e.ask
		}
		for _, r := range src {
			if r.Tool == ToolReadFile {
				*rs = append(*rs, r)
			}
		}
	}
	for _, m := range an.reads {
		if !m.tree {
			continue
		}
		for _, t := range m.targets(ws) {
			if dirOperand(m.p, t.abs) {
				j.tree(treeRead{shown: m.p, descend: true, certain: m.certain}, t.abs)
				if j.hits.deny != nil {
					return &j.hits
				}
			}
		}
	}
	for _, t := range an.trees {
		for _, dir := range t.bases(ws) {
			j.tree(t, dir)
			if j.hits.deny != nil {
				return &j.hits
			}
		}
	}
	return &j.hits
}

// dirOperand reports whether the operand p, at abs, names a directory: it
// is one on this machine (through links), or its spelling says so (".",
// "..", a trailing "/").
func dirOperand(p, abs string) bool {
	if dotsOnly(p) {
		return true
	}
	fi, err := os.Stat(abs)
	return err == nil && fi.IsDir()
}

// dotsOnly reports a path of nothing but "." and ".." (., .., ./, ../..):
// a directory wherever the command runs, seen or not. Other spellings
// ("s/a/b/", a URL) are not taken as directories unless one is there.
func dotsOnly(p string) bool {
	for _, s := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		if s != "." && s != ".." {
			return false
		}
	}
	return true
}

// bases are the absolute directories t's base may be: as an operand's
// targets are, one per directory the command may be in.
func (t treeRead) bases(ws string) []string {
	if path.IsAbs(t.base) {
		return []string{path.Clean(t.base)}
	}
	dirs := []string{t.cwd}
	if t.cwd == "" {
		dirs = append([]string{ws}, t.cwds...)
	}
	var out []string
	for _, d := range dirs {
		if abs, _ := resolveIn(t.base, d, ws); abs != "" {
			out = append(out, abs)
		}
	}
	if len(out) == 0 {
		// Not placeable (no working directory): any directory.
		out = append(out, "/")
	}
	return out
}

// tree judges the tree read t with its base at dir: listed when the call
// was resolved here and dir can be listed in full, else unseen.
func (j *treeJudge) tree(t treeRead, dir string) {
	if t.rest == nil && !t.descend {
		return
	}
	if j.resolved && !t.unseen {
		real, ok := landing(dir)
		if !ok {
			return // nothing there to read
		}
		fi, err := os.Stat(real)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return
		case err == nil && !fi.IsDir():
			return // a file: judged as named (reads.go); nothing under it
		case err == nil && j.walk(t, dir, real):
			return
		}
	}
	j.unseen(t, dir)
}

// unseen judges t at dir by whether a rule could name a file there: a
// match of the glob's last segment, or (when a match may be a directory
// read whole, or t is a directory read whole) any file under dir.
func (j *treeJudge) unseen(t treeRead, dir string) {
	var names []string
	if t.rest != nil {
		names = append(names, nameFilter(t.rest[len(t.rest)-1]))
	}
	if t.descend && (!t.flat || t.rest == nil) {
		names = append(names, "")
	}
	dirs := []string{dir}
	if real, ok := landing(dir); ok && real != dir {
		dirs = append(dirs, real)
	}
	for _, rs := range []struct {
		rules []rule
		hit   **treeHit
	}{{j.deny, &j.hits.deny}, {j.ask, &j.hits.ask}} {
		if *rs.hit != nil {
			continue
		}
	rules:
		for _, r := range rs.rules {
			for _, d := range dirs {
				for _, n := range names {
					if r.glob == "" || r.mayNameUnder(d, j.ws, n) {
						*rs.hit = &treeHit{r: r, tree: t}
						break rules
					}
				}
			}
		}
	}
}

// file judges a file found under a tree read, at given (under the path
// as the command gives it) and real (as listed), by the rules on it.
func (j *treeJudge) file(t treeRead, given, real string) {
	if j.hits.linked == "" && hardLinked(real) {
		j.hits.linked = given
	}
	for _, rs := range []struct {
		rules []rule
		hit   **treeHit
	}{{j.deny, &j.hits.deny}, {j.ask, &j.hits.ask}} {
		if *rs.hit != nil {
			continue
		}
		for _, r := range rs.rules {
			if writeMatches(r, j.ws, given) || !t.mapped && writeMatches(r, j.ws, real) {
				*rs.hit = &treeHit{r: r, tree: t, found: given}
				break
			}
		}
	}
}

// walk lists real (dir, as given, resolved) and judges each file t may
// read there; false when it could not be listed in full (unreadable, or
// past the command's share of maxSearchWalk). A glob's matches are the
// entries at its depth (any depth under **) whose name its last segment
// accepts; a directory matched is read whole when t.descend. A link found
// is judged where it leads too (cat *, grep -R and zip -r follow it); a
// link to a directory elsewhere is judged unseen.
func (j *treeJudge) walk(t treeRead, given, real string) bool {
	limit, last := -1, ""
	if t.rest != nil {
		last = nameFilter(t.rest[len(t.rest)-1])
		limit = len(t.rest)
		for _, s := range t.rest {
			if strings.Contains(s, "**") {
				limit = -1
			}
		}
	}
	var visit func(dir, shown string, depth int, whole bool) bool
	visit = func(dir, shown string, depth int, whole bool) bool {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false
		}
		for _, d := range entries {
			if j.budget--; j.budget < 0 {
				return false
			}
			p, g, k := dir+"/"+d.Name(), shown+"/"+d.Name(), depth+1
			match := whole || t.rest == nil || (limit < 0 || k == limit) && globAccepts(last, d.Name())
			t := t
			if !whole && t.rest != nil && (strings.HasPrefix(d.Name(), ".") && !strings.HasPrefix(last, ".") || caseOnly(last, d.Name())) {
				// Matched only if dotglob (or nocaseglob) is set, which the
				// policy takes as possible, not as known: what it finds so
				// asks.
				t.certain = false
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				if !match {
					continue
				}
				j.file(t, g, p)
				if to, ok := landing(p); ok && !t.lexical {
					j.file(t, g, to)
					if fi, err := os.Stat(to); err == nil && fi.IsDir() && t.descend && !within(to, real) {
						j.unseen(treeRead{shown: t.shown, glob: t.glob, descend: true}, to)
					}
				}
			case d.IsDir():
				switch {
				case match && t.descend:
					if !visit(p, g, k, true) {
						return false
					}
				case limit < 0 || k < limit:
					if !visit(p, g, k, false) {
						return false
					}
				}
			default:
				if match {
					j.file(t, g, p)
				}
			}
			if j.hits.deny != nil {
				return true
			}
		}
		return true
	}
	return visit(real, given, 0, false)
}
