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
	v := e.decideFile(ctx, c, mode, grantErr)
	if !c.Exact {
		v, c = e.readings(ctx, c, v, mode, grantErr)
	}
	if c.Search && c.Tool == ToolReadFile {
		v = e.search(ctx, c, v, mode)
	}
	if !isWrite(c.Tool) || v.Decision == Deny || v.ByMode || v.Decision == Ask && v.Rule != "" {
		return v
	}
	// The .git rule, whatever allowed the write (a rule, a grant) and
	// before the tool's class or an outside path is given as why: files
	// under .git (hooks, config) run code.
	abs, _, _ := resolveFile(c.Path, c.Cwd, c.Workspace)
	if gitPath(c.Path, !c.Exact) || gitPath(abs, !c.Exact) {
		return Verdict{Decision: Ask, Dangerous: v.Dangerous, Reason: fmt.Sprintf("%s of %s: files under .git (hooks, config) can run code", c.Tool, shownPath(c.Path))}
	}
	if v.Decision == Ask {
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
	// Inside the workspace, the whole relative path lower-cased too: a
	// deny or ask rule on secrets/** holds for SECRETS/key on a disk that
	// ignores case.
	if rel, ok := Within(c.Workspace, c.Path); ok && rel != strings.ToLower(rel) {
		alt := c
		alt.Path = path.Join(c.Workspace, strings.ToLower(rel))
		if av := e.decideFile(ctx, alt, mode, grantErr); counts(av, false) {
			v = strictest(v, av)
		}
	}
	return v, c
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
	if w, ok := e.rulesUnder(ctx, c, mode); ok {
		if !c.Resolved {
			w.Reason += " (askops cannot see this machine's files, so it cannot tell whether the directory holds one)"
		}
		return strictest(v, w)
	}
	return v
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
		if w, ok := e.rulesOn(f, mode); ok {
			v = strictest(v, w)
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
// class) is taken to accept every name.
func globAccepts(glob, name string) bool {
	if glob == "" || strings.ContainsAny(glob, "/!{},[]\\ \t\n") {
		return true
	}
	ok, err := path.Match(glob, name)
	return err != nil || ok
}
