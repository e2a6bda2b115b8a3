package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Files a command may read, for read_file rules.
//
// A deny rule on read_file (`**/.env`) says the agent must not read the
// file; `cat .env`, `grep KEY .env`, `base64 < .env` and `dd if=.env` read
// it through bash. Which operands a program reads is the program's own
// business, so every literal operand that names a path counts as a read
// of it, and so does an input redirection: read_file deny rules deny the
// command and ask rules ask, as for a read_file call of that path (through
// links too). Allow rules need no read_file rule beside the bash rule:
// reading its operands is what the program the bash rule allows does.
//
// A file read without being named (`grep -r KEY .`, `cat *`, `rg KEY`) is
// unnamed.go's: globs, directory operands, implicit trees, and names read
// from input (`find . | xargs cat` asks). What neither can see: a file a
// script or program opens by a name it computes, a value bash expands at
// run time,
// and which files a commit's diff holds (`git log -p`, `git show HEAD`);
// the OS bound hides denied files from runs nobody looked at
// (docs/security.md). A file git prints from its objects by name
// (`git show HEAD:.env`) is a read of that name: gitObjectReads.

// readMention is an operand that may name a file the command reads.
type readMention struct {
	p string
	// cwd is where p is resolved; when "" (after cd) it is resolved in
	// the workspace and in each of cwds, the directories the command may
	// be in (nil when a cd could not be followed).
	cwd  string
	cwds []string
	// tree: the program reads every file under p when p is a directory
	// (it is not one of namesOnly's); see unnamed.go. certain: it is
	// known to (knownReader), so a denied file found there is denied.
	tree, certain bool
}

// maxMentions bounds the operands kept for the read_file rules; past it
// a command is not allowed when read rules exist (readVerdict).
const maxMentions = 4096

// mentionWords records the operands of a simple command that may name
// files it reads: literal words (options' values after `=`, as in
// --file=.env or if=.env, too), what follows a short option's letter
// (curl -T.env, -d@.env), the file after a KEY= in an option's value
// (--from-file=k=.env), and the file after a read sigil: @ or < (curl -d @.env,
// -F 'f=@.env;type=text/plain', -F 'f=<.env', --data-urlencode n@.env,
// httpie's field@.env), which the program opens and sends, and each value
// of a key=value list (docker build --secret id=k,src=.env).
func (z *analyzer) mentionWords(args []word) {
	for _, w := range args {
		p := w.lit
		if !w.ok && w.pat != "" && !hasWild(w.pat) && !strings.HasPrefix(w.pat, "~") {
			// $'.env', or one word of .{env,x}: a name all the same.
			p = unescapeGlob(w.pat)
		} else if !w.ok {
			continue
		}
		if p == "" {
			continue
		}
		if i := strings.IndexByte(p, '='); i >= 0 {
			p = p[i+1:]
			if j := strings.LastIndexByte(p, '='); j >= 0 {
				// KEY=FILE as an option's value: kubectl create secret
				// --from-file=k=.env uploads .env.
				z.mention(p[j+1:])
			}
		} else if strings.HasPrefix(p, "--") {
			continue
		} else if strings.HasPrefix(p, "-") {
			// Maybe a value glued to its option (-T.env, -d@.env), maybe
			// a cluster of flags (-la): both are judged as a file name.
			if p = p[min(2, len(p)):]; p == "" {
				continue
			}
		}
		z.mention(p)
		if strings.Contains(p, ",") {
			// A key=value list (docker build --secret id=k,src=.env,
			// --mount type=bind,source=…): each value may name a file.
			for _, kv := range strings.Split(p, ",") {
				if _, v, ok := strings.Cut(kv, "="); ok {
					z.mention(v)
				}
			}
		}
		if i := strings.LastIndexAny(p, "@<"); i >= 0 {
			f := p[i+1:]
			z.mention(f)
			if j := strings.IndexByte(f, ';'); j >= 0 {
				z.mention(f[:j]) // curl -F's ;type=… and ;filename=… follow the file
			}
		}
	}
}

// gitObjectReads records the files git prints from its objects by name:
// REV:PATH and :[STAGE:]PATH in git show, cat-file, diff, archive and grep
// (git show HEAD:.env printed the committed .env past a read_file deny
// rule on **/.env). PATH is the repository's (its top, taken as the
// workspace, and the command's directory, where the top may be), or the
// command's directory's with ./ and ../. git cat-file --batch takes the
// names from its input (--batch-check prints no content), which is judged
// as xargs cat is (unnamed.go).
func (z *analyzer) gitObjectReads(name string, args []word) {
	if name != "git" {
		return
	}
	sub, rest := gitSubcommand(args)
	switch sub {
	case "log", "whatchanged":
		z.gitLineRanges(rest)
		return
	case "show":
		z.gitLineRanges(rest)
	case "config":
		// git config --blob REV:PATH reads its configuration from a blob.
		for _, v := range longOptionValues(rest, "--blob", len("--blob")) {
			z.gitObjectRead(v)
		}
		return
	case "cat-file", "diff", "archive", "grep":
	default:
		return
	}
	for _, w := range rest {
		l := w.loose
		if sub == "cat-file" && (strings.HasPrefix(l, "--batch") && !strings.HasPrefix(l, "--batch-check") || l == "--stdin") {
			z.a.unjudgedRead("git cat-file " + clip(printable(l), 30) + " prints the objects named on its input")
		}
		if !strings.HasPrefix(l, "-") {
			z.gitObjectRead(w)
		}
	}
}

// gitObjectRead records the file REV:PATH or :[STAGE:]PATH names.
func (z *analyzer) gitObjectRead(w word) {
	if !w.ok || strings.Contains(w.lit, "://") {
		return
	}
	rev, p, ok := strings.Cut(w.lit, ":")
	if !ok || strings.HasPrefix(p, "/") && rev == "" {
		return // no object path, or :/TEXT (a commit found by its message)
	}
	if rev == "" && len(p) >= 2 && p[1] == ':' && p[0] >= '0' && p[0] <= '3' {
		p = p[2:] // :STAGE:PATH
	}
	if p == "" {
		return
	}
	z.mention(p)
	if !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") && z.cwd != "" && z.cwd != z.workspace {
		z.mentionIn(p, z.workspace)
	}
}

// gitLineRanges records the files git log's -L prints the history of
// (git log -L1,5:.env printed .env's lines past a read_file deny rule on
// **/.env): -L's value is START,END:FILE or :FUNCNAME:FILE, FILE in the
// command's directory. A range's regular expression may hold a colon, so
// whatever follows any colon is taken for FILE: the strictest reading.
func (z *analyzer) gitLineRanges(args []word) {
	for i, w := range args {
		if w.loose == "--" {
			return
		}
		var v word
		switch {
		case w.loose == "-L" && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(w.loose, "-L") && len(w.loose) > 2:
			v = word{loose: w.loose[2:], ok: w.ok}
			if w.ok {
				v.lit = w.lit[2:]
			}
		default:
			continue
		}
		if !v.ok {
			z.a.unjudgedRead("git log -L names the file it prints in a word the policy cannot read")
			continue
		}
		for p := v.lit; ; {
			_, after, ok := strings.Cut(p, ":")
			if !ok {
				break
			}
			z.mention(after)
			p = after
		}
	}
}

// environmentFiles records the files an exported value may name: a
// program the command runs takes it from its environment, and many read
// the file such a variable names (GIT_CONFIG_GLOBAL=.env git config
// --global -l, KUBECONFIG=.env kubectl config view --raw, NETRC=.env curl
// -n, BASH_ENV=.env bash -c …), or write it (GIT_TRACE=/abs/.git/hooks/x
// git status appends its trace there, SSLKEYLOGFILE, HISTFILE). The
// value, and each part of a :-list, is judged as a read of that name and
// as a file a program may write (possibleWrite). A value bash expands
// whose written tail names a file that changes what later commands run
// ("$PWD/.git/hooks/pre-commit") is judged where the command is.
func (z *analyzer) environmentFiles(v word) {
	const why = " (a program may write the file its environment names)"
	if !v.ok {
		if i := strings.LastIndex(v.loose, anyText); i >= 0 && strings.HasPrefix(v.loose[i+len(anyText):], "/") {
			if tail := strings.TrimLeft(v.loose[i+len(anyText):], "/"); !z.isDir(tail) {
				z.possibleWrite(tail, "an exported value", why)
			}
		}
		return
	}
	if v.lit == "" || strings.Contains(v.lit, "://") {
		return
	}
	parts := []string{v.lit}
	if strings.Contains(v.lit, ":") {
		parts = append(parts, strings.Split(v.lit, ":")...)
	}
	for _, p := range parts {
		z.mention(p)
		if !z.isDir(p) { // GIT_DIR=.git, PATH=bin: a place, not a file written
			z.possibleWrite(p, "an exported value", why)
		}
	}
}

// readAfterLinks: a read after a command that may have made links from
// data (linksMade) may follow one: tar -xf a.tar; cat out/l read .env
// through a link in the archive, which no name in the command shows.
func (z *analyzer) readAfterLinks() {
	if z.linksMade != "" && !z.opensNone {
		z.a.unjudgedRead(z.linksMade + " may have made a link that a later read in the command follows")
	}
}

// mention records p as a path the command may read.
func (z *analyzer) mention(p string) {
	z.addRead(readMention{p: p, cwd: z.cwd, cwds: z.cwds})
}

// mentionIn records p, relative to dir, as a path the command may read.
func (z *analyzer) mentionIn(p, dir string) {
	z.addRead(readMention{p: p, cwd: dir})
}

func (z *analyzer) addRead(m readMention) {
	if m.p == "" || noFile(m.p) {
		return
	}
	if path.IsAbs(m.p) && processView(kernelClean(m.p, m.cwd)) {
		// /proc/1/cwd/.env: another process's directory, or this
		// one's where the policy lost track of it.
		z.a.unjudgedRead(printable(m.p) + " reaches files through a process's entry in /proc, which the policy cannot place")
	}
	z.readAfterLinks()
	if len(z.linkedPaths) > 0 && !z.opensNone {
		dir := m.cwd
		if dir == "" {
			dir = z.workspace
		}
		if abs, _ := resolveIn(m.p, dir, z.workspace); abs != "" && slices.ContainsFunc(z.linkedPaths, func(made string) bool { return within(abs, made) }) {
			// mv src/link out/l; cat out/l
			z.a.unjudgedRead(printable(m.p) + " is where an earlier command in the line put what may be a link")
		}
	}
	if len(z.a.reads) >= maxMentions {
		z.a.readsCut = true
		return
	}
	z.a.reads = append(z.a.reads, m)
}

// targets are the places m may name: one per directory the command may be
// in, each with where its links lead.
func (m readMention) targets(workspace string) []writeTarget {
	dirs := []string{m.cwd}
	if m.cwd == "" {
		// After a cd: judged in every directory the command may be in,
		// and in the workspace, so a rule on a name is not dodged by a cd
		// the policy cannot follow.
		dirs = append([]string{workspace}, m.cwds...)
	}
	var out []writeTarget
	for _, d := range dirs {
		abs, _ := resolveIn(m.p, d, workspace)
		if abs == "" {
			continue
		}
		t := writeTarget{shown: m.p, abs: abs}
		if real, ok := landing(abs); ok {
			t.real = real
		}
		out = append(out, t)
	}
	return out
}

// readVerdict is the verdict of the read_file rules among rules (e.deny
// or e.ask) on the files the command may read, if one applies.
func (e *Engine) readVerdict(rules []rule, ws string, an *analysis, d Decision) (Verdict, bool) {
	var read []rule
	for _, r := range rules {
		if r.Tool == ToolReadFile {
			read = append(read, r)
		}
	}
	if len(read) == 0 {
		return Verdict{}, false
	}
	if an.readsCut {
		return Verdict{Decision: Ask, Reason: fmt.Sprintf("the command names more than %d paths, past what the policy checks against the read_file rules", maxMentions)}, true
	}
	for _, m := range an.reads {
		for _, t := range m.targets(ws) {
			for _, r := range read {
				if !writeMatches(r, ws, t.abs) && !writeMatches(r, ws, t.real) {
					continue
				}
				if d == Deny {
					return Verdict{Decision: Deny, Rule: r.name, Reason: r.why(fmt.Sprintf("denied by rule: the command may read %s (read_file)", shownPath(t.shown)))}, true
				}
				return Verdict{Decision: Ask, Rule: r.name, Reason: r.why(fmt.Sprintf("the rules ask before read_file of %s (the command may read it)", shownPath(t.shown)))}, true
			}
		}
	}
	return Verdict{}, false
}

// hasReadRules reports whether any deny or ask rule names read_file: only
// then can another name of a file matter to a read.
func (e *Engine) hasReadRules() bool {
	return hasReadRule(e.deny) || hasReadRule(e.ask)
}

// linkedRead is an ask when a file the command may read has more than one
// name (a hard link) and read_file rules exist: the rules were checked
// against the name the command gives, and the same file may stand under
// another (notes.txt as a second name of .env, which a tarball's hard-link
// entry or an earlier script can make), which no rule can be checked
// against from here. Asked whatever the mode, as a deny rule would be.
func (e *Engine) linkedRead(ws string, an *analysis) (Verdict, bool) {
	if !e.hasReadRules() {
		return Verdict{}, false
	}
	for _, m := range an.reads {
		for _, t := range m.targets(ws) {
			if t.real != "" && hardLinked(t.real) {
				return Verdict{Decision: Ask, Reason: linkedReadWhy("the command may read " + shownPath(t.shown))}, true
			}
		}
	}
	return Verdict{}, false
}

// linkedReadWhy is why a read of a hard-linked file asks; what names the read.
func linkedReadWhy(what string) string {
	return what + ", a file with more than one name (a hard link): a read_file rule may protect another of its names"
}
