package policy

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// A call that reads every file under a directory (an agent's Grep: it
// opens each file it searches, and its matches are their lines) is a read
// of each of those files, so a deny rule on **/.env must stop it when
// the directory may hold a .env. Whoever cannot list the directory (the
// gateway judging a path on an agent's machine) asks rulesUnder, which
// says whether a rule could name some file under it; whoever can list it
// asks rulesOn about each file it finds.

// rulesUnder is the verdict of the deny and ask rules of c.Tool (a file
// tool) that could name a file strictly under the directory c.Path whose
// base name the glob c.Glob accepts ("" accepts every name; a glob
// askops does not read as one base-name pattern accepts every name too):
// deny when a deny rule could, else ask when an ask rule could and no
// grant covers c (a quorum rule asks whatever grant there is). ok is
// false when no such rule exists. Mode full skips ask rules; mode never
// turns the ask into a deny, as Evaluate does.
func (e *Engine) rulesUnder(ctx context.Context, c Call, mode Mode) (v Verdict, ok bool) {
	names := c.Glob
	dir, _, _ := resolveFile(c.Path, c.Cwd, c.Workspace)
	if dir == "" {
		dir = path.Clean(c.Path)
	}
	if !path.IsAbs(dir) {
		return Verdict{Decision: Ask, Reason: fmt.Sprintf("%s under %s: the directory is not an absolute path, so the rules on its files cannot be checked", c.Tool, shownPath(c.Path))}, true
	}
	under := func(r rule) bool { return r.Tool == c.Tool && r.glob != "" && r.mayNameUnder(dir, c.Workspace, names) }
	for _, r := range e.deny {
		if under(r) {
			return Verdict{Decision: Deny, Rule: r.name, Reason: r.why(fmt.Sprintf("denied by rule: %s of the files under %s, which may include what the rule names (exclude them, or name the files)", c.Tool, shownPath(c.Path)))}, true
		}
	}
	if mode == ModeFull {
		return Verdict{}, false
	}
	var quorum rule
	for _, r := range e.ask {
		if r.needsQuorum() && under(r) && r.Approvals > quorum.Approvals {
			quorum = r
		}
	}
	if quorum.Approvals == 0 {
		var grantErr error
		if _, granted := e.granted(ctx, c, &grantErr); granted {
			return Verdict{}, false
		}
	}
	for _, r := range e.ask {
		if under(r) {
			v = Verdict{Decision: Ask, Rule: r.name, Reason: r.why(fmt.Sprintf("the rules ask before %s of the files under %s, which may include what the rule names", c.Tool, shownPath(c.Path)))}
			v = withQuorum(v, quorum)
			if mode == ModeNever {
				v.Decision, v.Reason = Deny, "mode never: "+v.Reason+" — this would need a human; no one is asked in this session"
			}
			return v, true
		}
	}
	return Verdict{}, false
}

// rulesOn is the verdict of the deny and ask rules of c.Tool naming c.Path
// itself, without grants or the tool's class: what a file found under a
// directory (see rulesUnder) adds to the verdict on the directory. ok is
// false when no such rule names it. Modes act as in rulesUnder.
func (e *Engine) rulesOn(c Call, mode Mode) (v Verdict, ok bool) {
	abs, rel, inside := resolveFile(c.Path, c.Cwd, c.Workspace)
	if abs == "" && path.IsAbs(c.Path) {
		abs = path.Clean(c.Path)
	}
	for _, r := range e.deny {
		if r.Tool == c.Tool && r.glob != "" && r.matchesPath(abs, rel, inside) {
			return Verdict{Decision: Deny, Rule: r.name, Reason: r.why(fmt.Sprintf("denied by rule: %s of %s", c.Tool, shownPath(c.Path)))}, true
		}
	}
	if mode == ModeFull {
		return Verdict{}, false
	}
	if q, ok := e.fileQuorum(c, abs, rel, inside); ok {
		return quorumVerdict(q, fmt.Sprintf("the rules need %d approvals before %s of %s", q.Approvals, c.Tool, shownPath(c.Path))), true
	}
	for _, r := range e.ask {
		if r.Tool == c.Tool && r.glob != "" && r.matchesPath(abs, rel, inside) {
			v = Verdict{Decision: Ask, Rule: r.name, Reason: r.why(fmt.Sprintf("the rules ask before %s of %s", c.Tool, shownPath(c.Path)))}
			if mode == ModeNever {
				v.Decision, v.Reason = Deny, "mode never: "+v.Reason+" — this would need a human; no one is asked in this session"
			}
			return v, true
		}
	}
	return Verdict{}, false
}

// mayNameUnder reports whether r's glob could match some path strictly
// under dir whose base name the glob names accepts. A relative glob is
// matched as matchesPath does: under the workspace, and (for "**/…") under
// any directory at all.
func (r rule) mayNameUnder(dir, workspace, names string) bool {
	return r.mayName(dir, workspace, names, false)
}

// mayNameIn is mayNameUnder for the files directly in dir (split's
// pieces, npm pack's tarball): secrets/** names none of those in the
// workspace's top.
func (r rule) mayNameIn(dir, workspace, names string) bool {
	return r.mayName(dir, workspace, names, true)
}

func (r rule) mayName(dir, workspace, names string, direct bool) bool {
	ds := splitAbs(dir)
	last := func(seg string) bool { return nameMayMatch(seg, names) }
	if path.IsAbs(r.glob) {
		return mayExtend(splitAbs(r.glob), ds, last, direct)
	}
	if workspace != "" && path.IsAbs(workspace) {
		ws := splitAbs(path.Clean(workspace))
		for i, s := range ws {
			ws[i] = escapeGlob(s)
		}
		if mayExtend(append(ws, strings.Split(r.glob, "/")...), ds, last, direct) {
			return true
		}
	}
	return strings.HasPrefix(r.glob, "**/") && mayExtend(strings.Split(r.glob, "/"), ds, last, direct)
}

// splitAbs is an absolute clean path's segments ("/" has none).
func splitAbs(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// escapeGlob quotes s's pattern characters, so a workspace named
// "src[1]" is matched as the literal directory it is.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mayExtend reports whether the glob segments ps could match ds followed
// by at least one more segment (exactly one, if direct), the last
// accepted by last. Any segment pattern is taken to match some name (the
// valid ones do); only the last name is checked, against last.
func mayExtend(ps, ds []string, last func(string) bool, direct bool) bool {
	for {
		if len(ds) == 0 {
			if direct {
				// One name: what "**" may leave out, then one segment
				// (or a "**" taking it).
				stars := false
				for len(ps) > 0 && ps[0] == "**" {
					ps, stars = ps[1:], true
				}
				return len(ps) == 0 && stars || len(ps) == 1 && last(ps[0])
			}
			if len(ps) == 0 {
				return false // the directory itself, nothing under it
			}
			end := ps[len(ps)-1]
			return end == "**" || last(end)
		}
		if len(ps) == 0 {
			return false
		}
		if ps[0] == "**" {
			for i := 0; i <= len(ds); i++ {
				if mayExtend(ps[1:], ds[i:], last, direct) {
					return true
				}
			}
			// "**" last: it also takes ds and any tail.
			return len(ps) == 1
		}
		if ok, err := path.Match(ps[0], ds[0]); err != nil || !ok {
			return false
		}
		ps, ds = ps[1:], ds[1:]
	}
}

// nameMayMatch reports whether some base name could match both the
// rule's last segment seg and the call's file-name glob names. Only a
// plain pattern (no '/', '!', '{', ',', '[', '\' or space: ripgrep reads
// those as paths, negations, alternatives or lists) excludes anything;
// two wildcard patterns are taken to overlap unless both are "*" and a
// suffix, and neither suffix ends the other ("*.pem", "*.go").
func nameMayMatch(seg, names string) bool {
	if names == "" || strings.ContainsAny(names, "/!{},[]\\ \t\n") {
		return true
	}
	// Case is not told apart (globAccepts).
	seg, names = strings.ToLower(seg), strings.ToLower(names)
	literal := func(s string) bool { return !strings.ContainsAny(s, `*?[\`) }
	switch {
	case literal(seg):
		ok, err := path.Match(names, seg)
		return err != nil || ok
	case literal(names):
		ok, err := path.Match(seg, names)
		return err != nil || ok
	}
	// "*.pem" and "*.go": names ending in two different ways.
	a, okA := strings.CutPrefix(seg, "*")
	b, okB := strings.CutPrefix(names, "*")
	if okA && okB && literal(a) && literal(b) {
		return strings.HasSuffix(a, b) || strings.HasSuffix(b, a)
	}
	return true
}
