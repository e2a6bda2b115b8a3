package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/askops/askops/policy"
)

// This file judges an agent's Grep as what it is: a read of every file it
// searches. Its path is judged as a read_file (verdict); when the path is
// a directory, so is each file under it that the call's glob accepts:
// listed here when this serve sees the files (the local serve: Call.Resolved),
// else, not seeing them, by whether a read_file rule could name a file
// under it (policy.Engine.RulesUnder). A deny on **/.env therefore denies
// a Grep of .env, of a directory holding one (or, unseen, one that may)
// unless its glob leaves .env out, with glob ".env", and of a link to it.

// grepScope is what a Grep reads besides its path.
type grepScope struct {
	// names is the call's glob: the base names of the files it searches
	// under a directory ("" or a glob askops does not read as one base
	// name pattern: every file).
	names string
}

// fileRules is a Policy that can judge the files under a directory
// (*policy.Engine and ScriptPolicy are): RulesUnder without seeing them,
// RulesOn for each one listed.
type fileRules interface {
	RulesUnder(ctx context.Context, c policy.Call, names string) (policy.Verdict, bool)
	RulesOn(c policy.Call) (policy.Verdict, bool)
}

// maxGrepWalk bounds the entries listed under a Grep's directory; past it
// the directory is judged unseen (RulesUnder), which never allows more.
const maxGrepWalk = 50000

// errWalkBound ends a walk past maxGrepWalk.
var errWalkBound = errors.New("too many files to list")

// judgeGrep is v, the verdict on a Grep's path, made as strict as the
// rules on the files it reads under it. resolved: pc.Path was resolved on
// this machine, so the directory is listed.
func (s *Service) judgeGrep(ctx context.Context, g *grepScope, pc policy.Call, v policy.Verdict, resolved bool) policy.Verdict {
	if v.Decision == policy.Deny {
		return v
	}
	rules, ok := s.cfg.Policy.(fileRules)
	if !ok {
		return strictest(v, policy.Verdict{Decision: policy.Ask, Reason: fmt.Sprintf("Grep in %s reads the files under it, and this policy cannot judge them", quoteClip(pc.Path))})
	}
	if resolved {
		fi, err := os.Lstat(pc.Path)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// Not resolved after all: judged unseen, below.
		case err == nil && !fi.IsDir():
			return v // a file: its own verdict (its path is resolved: a link was followed)
		case err == nil:
			if w, ok := s.grepListed(ctx, rules, g, pc); ok {
				return strictest(v, w)
			}
		case errors.Is(err, fs.ErrNotExist):
			return v // nothing there to read
		}
	}
	if w, ok := rules.RulesUnder(ctx, pc, g.names); ok {
		if !resolved {
			w.Reason += " (askops cannot see this machine's files, so it cannot tell whether the directory holds one)"
		}
		return strictest(v, w)
	}
	return v
}

// grepListed lists the directory pc.Path and judges each file a Grep with
// g reads in it by the rules on it (RulesOn). Links found inside are not
// read: ripgrep, which Claude Code's Grep runs, follows a link it is
// given (the path, resolved before it gets here) but not the links it
// finds (no --follow; Claude Code offers none: anthropics/claude-code#25317).
// ok is false when the directory could not be listed in full.
func (s *Service) grepListed(ctx context.Context, rules fileRules, g *grepScope, pc policy.Call) (v policy.Verdict, ok bool) {
	v = policy.Verdict{Decision: policy.Allow}
	n := 0
	err := filepath.WalkDir(pc.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err // unreadable: not listed in full
		}
		if n++; n > maxGrepWalk {
			return errWalkBound
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == pc.Path || d.IsDir() || d.Type()&fs.ModeSymlink != 0 || !g.accepts(d.Name()) {
			return nil
		}
		f := pc
		f.Path = filepath.ToSlash(p)
		if w, ok := rules.RulesOn(f); ok {
			v = strictest(v, w)
		}
		if v.Decision == policy.Deny {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		s.log.Debug("grep: could not list the directory; judging it unseen", "path", pc.Path, "err", err)
		return policy.Verdict{}, false
	}
	return v, true
}

// accepts reports whether the Grep searches a file of this base name
// under its directory: its glob read as ripgrep's --glob of one base name
// pattern; any other glob (a path, a negation, a list, braces, a class)
// is taken to accept every name.
func (g *grepScope) accepts(name string) bool {
	if g.names == "" || strings.ContainsAny(g.names, "/!{},[]\\ \t\n") {
		return true
	}
	ok, err := path.Match(g.names, name)
	return err != nil || ok
}
