package grants

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/askops/askops/policy"
)

// This file is the admin's side of standing grants (`bot grants`): the
// scope an admin describes in words, who the grant says made it, and a
// grant as one line of a listing. The command line only parses flags.

// AdminScope is an admin's description of a standing grant's scope: for
// bash exactly one of Command (this exact command line) or Prefix (every
// single simple command starting with these words), and Cwd; for a file
// tool exactly one of Path or Dir. Paths are relative to the workspace or
// absolute inside it. Which fields go with which tool is the caller's
// (flag) check; Scope judges the values.
type AdminScope struct {
	Tool            string
	Command, Prefix string
	Cwd             string
	Path, Dir       string
}

// Workspace is agent.workspace as written (made absolute) and as the agent
// sees it: with symlinks resolved, which is the form its calls carry and
// so the form a scope must name to ever match.
type Workspace struct {
	abs, real string
}

// OpenWorkspace resolves dir, which must be an existing directory.
func OpenWorkspace(dir string) (Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Workspace{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Workspace{}, fmt.Errorf("%q: %w (a grant must name a directory the agent can run in)", dir, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return Workspace{}, fmt.Errorf("%q is not a directory", dir)
	}
	return Workspace{abs: abs, real: real}, nil
}

// Scope is the scope a describes, inside w; an error says why it is
// refused.
func (w Workspace) Scope(a AdminScope) (Scope, error) {
	switch {
	case a.Tool == toolBash:
		dir, err := w.bashCwd(a.Cwd)
		if err != nil {
			return Scope{}, err
		}
		if a.Command != "" {
			return ScopeFor(policy.Call{Tool: toolBash, Command: a.Command, Cwd: dir, Workspace: w.real})
		}
		return PrefixScope(a.Prefix, dir)
	case a.Path != "":
		return PathScope(a.Tool, w.rebase(a.Path), w.real)
	default:
		return DirScope(a.Tool, w.rebase(a.Dir), w.real)
	}
}

// rebase turns an absolute path written under the workspace's configured
// spelling into the same path under its real one; anything else is left
// for the scope constructors to judge.
func (w Workspace) rebase(p string) string {
	if !filepath.IsAbs(p) || w.abs == w.real {
		return p
	}
	if rel, ok := policy.Within(w.abs, filepath.Clean(p)); ok {
		return filepath.Join(w.real, rel)
	}
	return p
}

// bashCwd resolves a bash grant's directory: relative to the workspace or
// absolute inside it, existing, symlinks resolved (the agent's commands run
// in the real directory), and still inside the workspace after that.
func (w Workspace) bashCwd(dir string) (string, error) {
	if slices.Contains(strings.Split(filepath.ToSlash(dir), "/"), "..") {
		return "", fmt.Errorf("-cwd %q contains \"..\"", dir)
	}
	p := w.rebase(dir)
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.real, p)
	}
	p = filepath.Clean(p)
	if _, ok := policy.Within(w.real, p); !ok {
		return "", fmt.Errorf("-cwd %q is outside agent.workspace %s", dir, w.real)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("-cwd %q: %v", dir, err)
	}
	if _, ok := policy.Within(w.real, real); !ok {
		return "", fmt.Errorf("-cwd %q leads outside agent.workspace %s (to %s)", dir, w.real, real)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("-cwd %q is not a directory", dir)
	}
	return real, nil
}

// AdminGrantor is who a standing grant says made it: always "admin:NAME"
// (by, else user), so a listing never passes an admin's grant off as a
// Slack user's click.
func AdminGrantor(by, user string) (string, error) {
	name := strings.TrimSpace(by)
	if name == "" {
		name = strings.TrimSpace(user)
	}
	if name == "" {
		return "", errors.New("no -by given and $USER is empty: say who grants it with -by NAME")
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", fmt.Errorf("-by %q contains control characters", name)
	}
	if !strings.HasPrefix(name, "admin:") {
		name = "admin:" + name
	}
	return name, nil
}

// Line is g as one tab-separated line of a listing: id, scope, by,
// created, expires ("never" for a standing grant).
func (g Grant) Line() string {
	expires := "never"
	if !g.ExpiresAt.IsZero() {
		expires = g.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", plainField(g.ID), g.Scope, plainField(g.By), g.CreatedAt.UTC().Format(time.RFC3339), expires)
}

// plainField quotes a field that holds control characters, so a stored
// value cannot forge columns or lines.
func plainField(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}
