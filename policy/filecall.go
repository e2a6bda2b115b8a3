package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// This file judges a file call by what the door that took it knows of the
// agent's file system (Call.Exact, Call.Resolved, Call.Search): every
// reading that file system may give the path, the strictest standing; the
// files a search reads under its directory; and no rule or grant allowing a
// write whose path nobody resolved. Every door asks Evaluate once per call:
// what the door knows travels in the Call, never as a second evaluation.

// decideFileCall is decideFile made as strict as the call's readings,
// search and resolution require.
func (e *Engine) decideFileCall(ctx context.Context, c Call, mode Mode, grantErr *error) Verdict {
	if strings.ContainsRune(c.Path, 0) || strings.ContainsRune(c.Cwd, 0) {
		return Verdict{Decision: Deny, Reason: "the path contains a NUL byte; no file system takes it, so askops refuses it"}
	}
	given := c.Path
	v := e.decideFile(ctx, c, mode, grantErr)
	if !c.Exact {
		v, c = e.readings(ctx, c, v, mode, grantErr)
	}
	if c.Search && c.Tool == ToolReadFile {
		v = e.search(ctx, c, v, mode)
	}
	if !c.Resolved && v.Decision == Allow && ClimbsAfterName(given) {
		// Whatever allowed it, mode full too: the file the ".." names
		// depends on whether the name before it is a link, and a deny rule
		// may name where that leads.
		v = Verdict{Decision: Ask, Reason: fmt.Sprintf("%s of %s: the path climbs out of a name with \"..\", and askops has not resolved it on the machine the files are on (a link there leads elsewhere); give the path without \"..\"", c.Tool, shownPath(given))}
	}
	if abs, _, _ := resolveFile(given, c.Cwd, c.Workspace); v.Decision == Allow && processView(abs) {
		// Whatever allowed it: /proc/1/cwd/.env is another process's
		// directory, which no rule names.
		v = Verdict{Decision: Ask, Reason: fmt.Sprintf("%s of %s: the path reaches files through a process's entry in /proc, which askops cannot place", c.Tool, shownPath(given))}
	}
	if c.Tool == ToolReadFile && v.Decision == Allow && e.hasReadRules() {
		// A file with another name: the read_file rules were checked
		// against this one only (linkedRead).
		if real, ok := landing(absPath(c)); ok && hardLinked(real) {
			return Verdict{Decision: Ask, Reason: linkedReadWhy(c.Tool + " of " + shownPath(c.Path))}
		}
	}
	if !isWrite(c.Tool) || v.Decision == Deny || v.Decision == Ask && v.Rule != "" {
		return v
	}
	// The .git rule, whatever allowed the write (a rule, a grant, mode
	// full: a built-in danger, as bash's write there is) and before the
	// tool's class or an outside path is given as why: files under .git
	// (hooks, config) run code.
	abs, _, _ := resolveFile(c.Path, c.Cwd, c.Workspace)
	if gitPath(c.Path, !c.Exact) || gitPath(abs, !c.Exact) || !c.Exact && (mayBeGit(c.Path) || mayBeGit(abs)) {
		return Verdict{Decision: Ask, Dangerous: v.Dangerous || v.ByMode, Reason: fmt.Sprintf("%s of %s: files under .git (hooks, config) can run code", c.Tool, shownPath(c.Path))}
	}
	settings := abs
	if settings == "" {
		settings = c.Path
	}
	if why := settingsPath(settings, c.Workspace, !c.Exact); why != "" {
		// The agent's own settings, the same way (settings.go).
		return Verdict{Decision: Ask, Dangerous: v.Dangerous || v.ByMode, Reason: fmt.Sprintf("%s of %s: %s", c.Tool, shownPath(c.Path), why)}
	}
	if v.ByMode || v.Decision == Ask {
		return v
	}
	if !c.Resolved {
		return Verdict{Decision: Ask, Rule: v.Rule, Reason: fmt.Sprintf(
			"%s of %s: askops cannot see this machine's files (a link could lead anywhere), so no rule or grant allows a write sent from here; use the command hook (bot hook) to have paths resolved", c.Tool, shownPath(c.Path))}
	}
	return v
}

func isWrite(tool string) bool { return tool == ToolWriteFile || tool == ToolEditFile }

// readings is v, the verdict on c's path as given, made as strict as the
// other readings a file system askops does not know may give it: with
// backslashes as separators (Windows); with protected names case-folded,
// and inside the workspace lower-cased (macOS, Windows). A folded
// reading's "no allow rule matched" never overrides the given reading's
// allow (an allow rule for Makefile is not lost to "makefile"); its deny
// and its rule's ask do. It returns the call as later checks read it
// (backslashes as separators).
func (e *Engine) readings(ctx context.Context, c Call, v Verdict, mode Mode, grantErr *error) (Verdict, Call) {
	if strings.Contains(c.Path, `\`) {
		alt := c
		alt.Path = path.Clean(strings.ReplaceAll(c.Path, `\`, "/"))
		v = strictest(v, e.decideFile(ctx, alt, mode, grantErr))
		if v.Decision == Allow && !v.ByMode {
			v = strictest(v, Verdict{Decision: Ask, Reason: fmt.Sprintf("%s of %s: the path has a backslash, a separator on Windows, so no rule or grant allows it", c.Tool, shownPath(c.Path))})
		}
		c = alt
	}
	counts := func(av Verdict, folded bool) bool {
		return av.Decision == Deny || av.Decision == Ask && (av.Rule != "" || folded)
	}
	if folded, ok := foldProtected(c.Path); ok {
		alt := c
		alt.Path = folded
		if av := e.decideFile(ctx, alt, mode, grantErr); counts(av, v.Decision != Allow || gitPath(folded, false)) {
			v = strictest(v, av)
		}
	}
	// The names another file system reads the same (spellings: Windows'
	// trailing dots and streams, HFS+'s ignored code points, case, Unicode
	// normalization), each judged by its deny and ask rules.
	for _, r := range e.spellings(c) {
		if av := r.e.decideFile(ctx, r.c, mode, grantErr); counts(av, false) {
			v = strictest(v, av)
		}
	}
	// An 8.3 short name (SECRET~1, GIT~1) may be any name in its
	// directory: the rules that could name a file under it stand.
	abs := absPath(c)
	for _, dir := range shortNameDirs(abs) {
		d := c
		d.Path, d.Search, d.Glob = dir, true, ""
		if last := path.Base(abs); !shortName(last) {
			d.Glob = last // the file's own name is known
		}
		for _, r := range append([]spelling{{e, d}}, e.spellings(d)...) {
			if av, ok := r.e.rulesUnder(ctx, r.c, mode); ok {
				v = strictest(v, av)
			}
		}
	}
	// A path the agent's tool roots elsewhere (~: a home directory; C:: a
	// drive) is outside the workspace, whatever the join with cwd says;
	// its rules are judged on the rest of it.
	if ForeignRoot(c.Path) {
		_, rest, _ := strings.Cut(strings.TrimLeft(c.Path, "/"), "/")
		alt := c
		alt.Path = "/" + rest
		for _, r := range append([]spelling{{e, alt}}, e.spellings(alt)...) {
			if av := r.e.decideFile(ctx, r.c, mode, grantErr); counts(av, false) {
				v = strictest(v, av)
			}
		}
		if v.Decision == Allow && !v.ByMode {
			v = Verdict{Decision: Ask, Reason: fmt.Sprintf("%s of %s: the agent's tool reads the path from a home directory or a drive, outside the workspace", c.Tool, shownPath(c.Path))}
		}
	}
	return v, c
}

// spelling is one reading of a call and the engine that judges it (the
// case-folded engine for a folded spelling).
type spelling struct {
	e *Engine
	c Call
}

// spellings are the other readings of c's path that name the same file on
// a file system askops does not know: each name with what Windows drops
// (trailing dots and spaces, an alternate data stream ":s") and what HFS+
// ignores (zero-width and direction code points) removed; and that path,
// workspace and working directory case-folded and NFC-normalized, judged
// by the engine whose rules are folded alike (e.folded): SECRETS/key
// meets secrets/**, PRIVATE/x meets Private/**, an NFD name its NFC rule.
func (e *Engine) spellings(c Call) []spelling {
	if e.folded == nil {
		return nil
	}
	var out []spelling
	p := absPath(c)
	if n := windowsNames(p); n != p {
		alt := c
		alt.Path = n
		out = append(out, spelling{e, alt})
		p = n
	}
	alt := c
	alt.Path, alt.Workspace, alt.Cwd = foldName(p), foldName(c.Workspace), foldName(c.Cwd)
	alt.Glob = foldName(c.Glob)
	return append(out, spelling{e.folded, alt})
}

// absPath is c's path made absolute as decideFile reads it (cleaned),
// or as given when it cannot be.
func absPath(c Call) string {
	if abs, _, _ := resolveFile(c.Path, c.Cwd, c.Workspace); abs != "" {
		return abs
	}
	return c.Path
}

// foldName is s as a case-insensitive file system compares it: upper-
// then lower-cased (so ı, ſ and K fold as NTFS and APFS fold them) and
// NFC-normalized (APFS and HFS+ take NFD and NFC names as one).
func foldName(s string) string {
	return norm.NFC.String(strings.ToLower(strings.ToUpper(norm.NFC.String(s))))
}

// windowsNames is p with each name as Windows or HFS+ may open it: the
// code points HFS+ ignores removed, an alternate data stream (":s",
// "::$DATA") cut off, trailing dots and spaces dropped. "." and ".."
// stay, and so does a name that would become empty.
func windowsNames(p string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if c == "." || c == ".." {
			continue
		}
		n := strings.Map(func(r rune) rune {
			if ignorable(r) {
				return -1
			}
			return r
		}, c)
		if j := strings.IndexByte(n, ':'); j > 0 && !(i == 0 && j == 1) {
			n = n[:j]
		}
		if t := strings.TrimRight(n, ". "); t != "" && n != "." && n != ".." {
			n = t
		}
		if n != "" {
			parts[i] = n
		}
	}
	return strings.Join(parts, "/")
}

// ignorable reports the code points HFS+ ignores in names (git's list,
// with the other zero-width ones): ".g\u200cit" is ".git" there.
func ignorable(r rune) bool {
	return r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2060 && r <= 0x206f || r == 0xfeff
}

// shortName reports whether a name may be a Windows 8.3 short name
// (GIT~1, SECRET~1.TXT), which stands for a longer name askops cannot see.
func shortName(c string) bool {
	i := strings.IndexByte(c, '~')
	return i >= 1 && i+1 < len(c) && c[i+1] >= '0' && c[i+1] <= '9' && len(c) <= 12
}

// shortNameDirs are the directories of p holding a name that may be a
// short name.
func shortNameDirs(p string) []string {
	if !path.IsAbs(p) {
		return nil
	}
	var dirs []string
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if i > 0 && shortName(c) {
			dirs = append(dirs, path.Clean("/"+strings.Join(parts[:i], "/")))
		}
	}
	return dirs
}

// mayBeGit reports whether some file system may read a name of p as .git:
// in any case, with Windows' trailing dots, spaces or stream, HFS+'s
// ignored code points, or as an 8.3 short name (GIT~1).
func mayBeGit(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			continue
		}
		if shortName(c) || foldName(windowsNames(c)) == ".git" {
			return true
		}
	}
	return false
}

// ForeignRoot reports whether p, as an agent's tool reads it, starts
// where askops cannot place it: at a home directory the tool expands
// (~, ~user) or at a drive (C:, C:x), absolute on Windows.
func ForeignRoot(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	first, _, _ = strings.Cut(first, `\`)
	if strings.HasPrefix(first, "~") {
		return true
	}
	return len(first) >= 2 && first[1] == ':' && first[0] < 0x80 && unicode.IsLetter(rune(first[0]))
}

// ClimbsAfterName reports whether p has a ".." after a name (a/../b,
// /ws/link/../x): where it leads depends on whether the name is a link,
// which the text cannot say. A leading ".." (../x) climbs from the
// working directory, as resolved as the call says it is.
func ClimbsAfterName(p string) bool {
	named := false
	for _, c := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch c {
		case ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// strictest is the stricter of two verdicts: deny over ask over allow; of
// two asks, the larger quorum, both reasons kept.
func strictest(a, b Verdict) Verdict {
	rank := func(d Decision) int {
		switch d {
		case Allow:
			return 0
		case Deny:
			return 2
		}
		return 1
	}
	if rank(b.Decision) > rank(a.Decision) {
		a, b = b, a
	}
	if rank(a.Decision) == rank(b.Decision) && a.Decision == Ask {
		a.Approvals = max(a.Approvals, b.Approvals)
		if b.Reason != "" && b.Reason != a.Reason {
			a.Reason += "; " + b.Reason
		}
		if a.Rule == "" {
			a.Rule = b.Rule
		}
	}
	a.Dangerous = a.Dangerous || b.Dangerous
	if a.Reading == nil {
		a.Reading = b.Reading
	}
	return a
}

// protectedNames are the names a path is judged by whatever their case:
// on a case-insensitive file system (macOS, Windows) .GIT is .git.
var protectedNames = []string{".git", ".env"}

// foldProtected rewrites every component of p that case-folds to a
// protected name into that name; ok reports whether it changed anything.
func foldProtected(p string) (string, bool) {
	parts := strings.Split(p, "/")
	changed := false
	for i, c := range parts {
		for _, n := range protectedNames {
			if c != n && (strings.EqualFold(c, n) || strings.HasPrefix(strings.ToLower(c), n+".") && !strings.HasPrefix(c, n+".")) {
				parts[i] = n + c[len(n):]
				changed = true
			}
		}
	}
	return strings.Join(parts, "/"), changed
}

// gitPath reports whether p has a component that is .git (in any case
// when fold).
func gitPath(p string, fold bool) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".git" || fold && strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// maxSearchWalk bounds the entries listed under a search's directory;
// past it the directory is judged unseen (rulesUnder), which never allows
// more.
const maxSearchWalk = 50000

// errWalkBound ends a walk past maxSearchWalk.
var errWalkBound = errors.New("too many files to list")

// search is v, the verdict on a search's path, made as strict as the rules
// on the files it reads under it: listed when the path was resolved here
// (rulesOn for each), else judged unseen by whether a read_file rule could
// name a file under it (rulesUnder). A deny on **/.env therefore denies a
// Grep of .env, of a directory holding one (or, unseen, one that may)
// unless its glob leaves .env out, with glob ".env", and of a link to it.
func (e *Engine) search(ctx context.Context, c Call, v Verdict, mode Mode) Verdict {
	if v.Decision == Deny {
		return v
	}
	if c.Resolved {
		// The directory itself, not one the process's own working
		// directory would give a relative path.
		c.Path = absPath(c)
		fi, err := os.Lstat(c.Path)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// Not resolved after all: judged unseen, below.
		case err == nil && !fi.IsDir():
			return v // a file: its own verdict (its path is resolved: a link was followed)
		case err == nil:
			if w, ok := e.listed(ctx, c, mode); ok {
				return strictest(v, w)
			}
		case errors.Is(err, fs.ErrNotExist):
			return v // nothing there to read
		}
	}
	for _, r := range e.judgedAs(c) {
		if w, ok := r.e.rulesUnder(ctx, r.c, mode); ok {
			if !c.Resolved {
				w.Reason += " (askops cannot see this machine's files, so it cannot tell whether the directory holds one)"
			}
			v = strictest(v, w)
		}
	}
	return v
}

// judgedAs is c and, unless its file system takes paths as written, its
// other spellings: what a file found or named is judged as.
func (e *Engine) judgedAs(c Call) []spelling {
	out := []spelling{{e, c}}
	if !c.Exact {
		out = append(out, e.spellings(c)...)
	}
	return out
}

// listed lists the directory c.Path and judges each file the search reads
// in it by the rules on it (rulesOn). Links found inside are not read:
// ripgrep, which Claude Code's Grep runs, follows a link it is given (the
// path, resolved before it gets here) but not the links it finds (no
// --follow; Claude Code offers none: anthropics/claude-code#25317). ok is
// false when the directory could not be listed in full.
func (e *Engine) listed(ctx context.Context, c Call, mode Mode) (v Verdict, ok bool) {
	v = Verdict{Decision: Allow}
	n := 0
	linked := e.hasReadRules() // a hard-linked file found asks (linkedRead)
	err := filepath.WalkDir(c.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err // unreadable: not listed in full
		}
		if n++; n > maxSearchWalk {
			return errWalkBound
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == c.Path || d.IsDir() || d.Type()&fs.ModeSymlink != 0 || !globAccepts(c.Glob, d.Name()) {
			return nil
		}
		f := c
		f.Path = filepath.ToSlash(p)
		for _, r := range e.judgedAs(f) {
			if w, ok := r.e.rulesOn(r.c, mode); ok {
				v = strictest(v, w)
			}
		}
		if linked && d.Type().IsRegular() && hardLinked(p) {
			v = strictest(v, Verdict{Decision: Ask, Reason: linkedReadWhy(c.Tool + " of " + shownPath(f.Path))})
		}
		if v.Decision == Deny {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		e.log.Debug("search: could not list the directory; judging it unseen", "path", c.Path, "err", err)
		return Verdict{}, false
	}
	return v, true
}

// globAccepts reports whether a search with this glob reads a file of this
// base name under its directory: the glob read as ripgrep's --glob of one
// base name pattern; any other glob (a path, a negation, a list, braces, a
// class) is taken to accept every name. Case is not told apart: bash's
// nocaseglob (which BASHOPTS in the environment may set) and ripgrep's
// --iglob match .ENV* to .env.
func globAccepts(glob, name string) bool {
	if glob == "" || strings.ContainsAny(glob, "/!{},[]\\ \t\n") {
		return true
	}
	ok, err := path.Match(strings.ToLower(glob), strings.ToLower(name))
	return err != nil || ok
}

// caseOnly reports whether glob matches name only when case is not told
// apart: a match that needs nocaseglob, which the policy takes as
// possible, not as known.
func caseOnly(glob, name string) bool {
	ok, err := path.Match(glob, name)
	return err == nil && !ok && globAccepts(glob, name)
}
