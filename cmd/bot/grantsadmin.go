package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// The admin's side of standing grants (`bot grants`): the scope an admin
// describes in words, who the grant says made it, and a grant as one line
// of a listing. The grant store only keeps and matches grants.

// adminScope is an admin's description of a standing grant's scope: for
// bash exactly one of Command (this exact command line) or Prefix (every
// single simple command starting with these words), and Cwd; for a file
// tool exactly one of Path or Dir. Paths are relative to the workspace or
// absolute inside it. Which fields go with which tool is the caller's
// (flag) check; Scope judges the values.
type adminScope struct {
	Tool            string
	Command, Prefix string
	Cwd             string
	Path, Dir       string
}

// Check says what is missing or misplaced before any path is judged:
// given reports which of the named fields' flags were set on the command
// line, as "-name" (set, even to "", is not the same as left out).
func (a adminScope) Check(given func(names ...string) []string) error {
	switch {
	case a.Tool == "":
		return errors.New("-tool is required (bash, read_file, write_file, edit_file or list_files)")
	case a.Tool == "bash":
		if wrong := given("path", "dir"); len(wrong) > 0 {
			return fmt.Errorf("%s is for file tools; bash takes -command or -prefix, and -cwd", strings.Join(wrong, " and "))
		}
		if (a.Command == "") == (a.Prefix == "") {
			return errors.New("bash needs exactly one of -command (this exact command) or -prefix (commands starting with it)")
		}
		if a.Cwd == "" {
			return errors.New("bash needs -cwd: the directory inside agent.workspace the grant applies in (\".\" for the workspace)")
		}
	case policy.IsFileTool(a.Tool):
		if wrong := given("command", "prefix", "cwd"); len(wrong) > 0 {
			return fmt.Errorf("%s is for bash; %s takes -path or -dir", strings.Join(wrong, " and "), a.Tool)
		}
		if (a.Path == "") == (a.Dir == "") {
			return fmt.Errorf("%s needs exactly one of -path (one path) or -dir (a directory and everything under it)", a.Tool)
		}
	default:
		return fmt.Errorf("unknown tool %q (want bash, read_file, write_file, edit_file or list_files)", a.Tool)
	}
	return nil
}

// workspace is agent.workspace as written (made absolute) and as the agent
// sees it: with symlinks resolved, which is the form its calls carry and
// so the form a scope must name to ever match.
type workspace struct {
	abs, real string
}

// openWorkspace resolves dir, which must be an existing directory.
func openWorkspace(dir string) (workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return workspace{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return workspace{}, fmt.Errorf("%q: %w (a grant must name a directory the agent can run in)", dir, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return workspace{}, fmt.Errorf("%q is not a directory", dir)
	}
	return workspace{abs: abs, real: real}, nil
}

// Scope is the scope a describes, inside w; an error says why it is
// refused.
func (w workspace) Scope(a adminScope) (grants.Scope, error) {
	switch {
	case a.Tool == "bash":
		dir, err := w.bashCwd(a.Cwd)
		if err != nil {
			return grants.Scope{}, err
		}
		var s grants.Scope
		if a.Command != "" {
			s, err = grants.ScopeFor(policy.Call{Tool: "bash", Command: a.Command, Cwd: dir, Workspace: w.real})
		} else {
			s, err = grants.PrefixScope(a.Prefix, dir)
		}
		if err != nil {
			return grants.Scope{}, err
		}
		// Standing grants are matched against every session: the scope
		// names agent.workspace, so a session with a wider workspace
		// never has a prefix's files judged against that.
		s.Workspace = w.real
		return s, s.Validate()
	case a.Path != "":
		return grants.PathScope(a.Tool, w.rebase(a.Path), w.real)
	default:
		return grants.DirScope(a.Tool, w.rebase(a.Dir), w.real)
	}
}

// rebase turns an absolute path written under the workspace's configured
// spelling into the same path under its real one; anything else is left
// for the scope constructors to judge.
func (w workspace) rebase(p string) string {
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
func (w workspace) bashCwd(dir string) (string, error) {
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

// adminGrantor is who a standing grant says made it: always "admin:NAME"
// (by, else user), so a listing never passes an admin's grant off as a
// Slack user's click.
func adminGrantor(by, user string) (string, error) {
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

// grantsAdmin is what `bot grants` says for each verb: results on Out, notes
// (an empty listing) on Err. Store errors are returned for the caller to
// report.
type grantsAdmin struct {
	Store    grants.Store
	Out, Err io.Writer
}

// List writes session's grants (the standing ones for ""): a Line each,
// or with asJSON one array.
func (a grantsAdmin) List(ctx context.Context, session string, asJSON bool) error {
	list, err := a.Store.List(ctx, session)
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []grants.Grant{} // [] rather than null: nothing to list is still a list
		}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(a.Out, string(b))
		return nil
	}
	if len(list) == 0 {
		if session == "" {
			fmt.Fprintln(a.Err, "no standing grants")
		} else {
			fmt.Fprintf(a.Err, "no grants in session %q (none made, all revoked, or the session expired)\n", session)
		}
		return nil
	}
	for _, g := range list {
		fmt.Fprintln(a.Out, listingLine(g))
	}
	return nil
}

// Add records a standing grant of scope by grantor and writes its Line.
func (a grantsAdmin) Add(ctx context.Context, scope grants.Scope, grantor string) error {
	g, err := a.Store.RecordStanding(ctx, scope, grantor)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.Out, listingLine(g))
	return nil
}

// Revoke revokes grant id of session ("" for a standing grant) and says so.
func (a grantsAdmin) Revoke(ctx context.Context, session, id string) error {
	if err := a.Store.Revoke(ctx, session, id); err != nil {
		return err
	}
	if session == "" {
		fmt.Fprintf(a.Out, "revoked standing grant %s\n", id)
	} else {
		fmt.Fprintf(a.Out, "revoked grant %s in session %s\n", id, session)
	}
	return nil
}

// listingLine is g as one tab-separated line of a listing: id, scope, by,
// created, expires ("never" for a standing grant).
func listingLine(g grants.Grant) string {
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

// splitGrantIDs takes the grant ids out of revoke's arguments before the flags
// are parsed: grants made before ids became lowercase base32 are 22
// URL-safe base64 characters, and one in 64 of those begins with "-",
// which would otherwise be read as an unknown flag. isFlag names the
// command's flags; a flag's own value (-session ID) and everything after
// "--" stay where they are.
func splitGrantIDs(args []string, isFlag func(name string) bool) (flags, ids []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(flags, args[i:]...), ids
		}
		name, hasValue := strings.CutPrefix(a, "-")
		name = strings.TrimPrefix(name, "-")
		name, _, inline := strings.Cut(name, "=")
		if hasValue && isFlag(name) {
			flags = append(flags, a)
			if !inline && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		if grants.PlausibleID(a) {
			ids = append(ids, a)
			continue
		}
		flags = append(flags, a)
	}
	return flags, ids
}
