package grants

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/askops/askops/internal/realpath"
	"github.com/askops/askops/policy"
)

// toolBash is the tool whose calls carry a command line and a working directory.
const toolBash = "bash"

// fileToolNames lists the tools whose calls carry a workspace path. A path
// grant names one of them and covers only that tool: a read_file grant says
// nothing about writes, and a write_file grant does not cover edit_file (the
// approver saw one tool).
var fileToolNames = strings.Join(policy.FileTools(), ", ")

func isFileTool(tool string) bool { return policy.IsFileTool(tool) }

// ScopeFor returns the default "Approve for session" scope of c — what the
// confirm dialog states and what Record will store:
//   - bash: exactly this command (trimmed) in this working directory;
//   - file tools: this tool on this path, cleaned and made workspace-relative.
//
// Other tools have no session scope and get a CodeInvalid error, as does a
// call whose path leaves the workspace or contains a ".." element.
func ScopeFor(c policy.Call) (Scope, error) {
	const op = "scope"
	switch {
	case c.Tool == toolBash:
		cmd := trimCommand(c.Command)
		if cmd == "" {
			return Scope{}, invalid(op, "empty bash command")
		}
		cwd, err := callCwd(c)
		if err != nil {
			return Scope{}, invalid(op, "%v", err)
		}
		// The exact text the policy judges and bash runs (see
		// policy.Canonical), so the grant covers the same call next time.
		if canonical, err := policy.Canonical(cmd); err == nil {
			cmd = canonical
		}
		s := Scope{Tool: toolBash, Kind: KindExact, Command: cmd, Cwd: cwd}
		return s, s.Validate()
	case isFileTool(c.Tool):
		rel, err := callPath(c)
		if err != nil {
			return Scope{}, invalid(op, "%v", err)
		}
		s := Scope{Tool: c.Tool, Kind: KindPath, Path: rel}
		return s, s.Validate()
	default:
		return Scope{}, invalid(op, "tool %q has no session scope", c.Tool)
	}
}

// PrefixScope returns a bash scope covering single simple commands in cwd
// whose words start with prefix's words and stay inside the policy's model
// of the program (see Covers). prefix itself must be one simple command of
// literal words (no pipes, lists, redirections, substitutions or
// expansions), must not run arbitrary code (bash -c, sh, python -c, env,
// sudo, xargs, eval, ...) or code from the workspace, and must name a
// program the policy has a model of, with words inside that model
// (policy.PrefixGrantRefusal): anything else is refused as CodeInvalid.
func PrefixScope(prefix, cwd string) (Scope, error) {
	s := Scope{Tool: toolBash, Kind: KindPrefix, Command: trimCommand(prefix), Cwd: cleanAbs(cwd)}
	return s, s.Validate()
}

// PathScope returns a scope covering tool on one path inside the workspace.
// path is workspace-relative or absolute inside workspace.
func PathScope(tool, path, workspace string) (Scope, error) {
	return workspaceScope(tool, KindPath, path, workspace)
}

// DirScope returns a scope covering tool on dir and everything under it. dir
// is workspace-relative or absolute inside workspace; "." is the whole
// workspace.
func DirScope(tool, dir, workspace string) (Scope, error) {
	return workspaceScope(tool, KindDir, dir, workspace)
}

// workspaceScope is a scope of kind (KindPath or KindDir) covering tool on
// path, which is workspace-relative or absolute inside workspace; the scope
// keeps it workspace-relative.
func workspaceScope(tool string, kind Kind, path, workspace string) (Scope, error) {
	rel, err := workspaceRel(path, workspace, workspace)
	if err != nil {
		return Scope{}, invalid("scope", "%v", err)
	}
	// The scope names its workspace: the relative path means a file of
	// this workspace, not of every session's (a standing grant is
	// matched against calls from any session and workspace).
	s := Scope{Tool: tool, Kind: kind, Path: rel, Workspace: filepath.Clean(workspace)}
	return s, s.Validate()
}

// Validate reports whether s is a well-formed scope: a known kind for its
// tool, a prefix that is safe to grant, an absolute clean cwd for bash, and a
// clean workspace-relative path without ".." for file tools.
func (s Scope) Validate() error { return s.validate(true) }

// validate checks s; with checkWords false it skips parsing a prefix, for
// callers that parse and judge it themselves (Covers).
func (s Scope) validate(checkWords bool) error {
	const op = "validate"
	if s.Tool == "" {
		return invalid(op, "empty tool")
	}
	switch s.Kind {
	case KindExact, KindPrefix:
		if s.Tool != toolBash {
			return invalid(op, "a %s scope is for bash, not %q", s.Kind, s.Tool)
		}
		if s.Path != "" {
			return invalid(op, "a bash scope has no path")
		}
		if s.Command == "" || s.Command != trimCommand(s.Command) {
			return invalid(op, "the command must be non-empty and trimmed")
		}
		if err := checkCwd(s.Cwd); err != nil {
			return invalid(op, "%v", err)
		}
		if s.Workspace != "" {
			if err := checkCwd(s.Workspace); err != nil {
				return invalid(op, "workspace: %v", err)
			}
			if _, ok := policy.Within(filepath.ToSlash(s.Workspace), filepath.ToSlash(s.Cwd)); !ok {
				return invalid(op, "cwd %q is outside the workspace %q", s.Cwd, s.Workspace)
			}
		}
		if s.Kind == KindPrefix && checkWords {
			if err := checkPrefix(s.Command); err != nil {
				return invalid(op, "prefix %q: %v", s.Command, err)
			}
		}
		return nil
	case KindPath, KindDir:
		if !isFileTool(s.Tool) {
			return invalid(op, "a %s scope is for a file tool (%s), not %q", s.Kind, fileToolNames, s.Tool)
		}
		if s.Command != "" || s.Cwd != "" {
			return invalid(op, "a file scope has no command or cwd")
		}
		if err := checkRel(s.Path); err != nil {
			return invalid(op, "%v", err)
		}
		if s.Workspace != "" {
			if err := checkCwd(s.Workspace); err != nil {
				return invalid(op, "workspace: %v", err)
			}
		}
		if s.Kind == KindDir && (underGit(s.Path) || policy.MayBeGitPath(s.Path)) {
			return invalid(op, "a directory grant never covers .git (its hooks and config run code); grant the one file instead")
		}
		if s.Kind == KindPath && s.Path == "." && s.Tool != "list_files" {
			return invalid(op, "%s on the workspace root is not a file", s.Tool)
		}
		return nil
	default:
		return invalid(op, "unknown scope kind %q", s.Kind)
	}
}

// Covers reports whether s covers c. It never widens: any doubt (an invalid
// scope, a call it cannot resolve, a command that does not parse) is false.
//   - exact: bash, the same command (both trimmed), the same cwd, and no
//     program it runs by a bare name is a workspace file found through
//     PATH (policy.ExactGrantNotCovered);
//   - prefix: bash, the call is one simple command of literal words that does
//     not run arbitrary code, its words start with the prefix's words, the
//     same cwd (not a subdirectory), and every word is in the policy's model
//     of the program: known options only, files inside the workspace and
//     outside .git (through symlinks too), configured git remotes only;
//   - path: the same tool, the same cleaned workspace-relative path;
//   - dir: the same tool, a path equal to the directory or inside it.
//
// Paths are compared lexically; a call path with a ".." element is never
// covered. Symlinks are the tools' business: they refuse to follow one out
// of the workspace.
func (s Scope) Covers(c policy.Call) bool { return s.covers(&callView{Call: c}) }

// callView is a call whose command is parsed at most once, however many
// scopes are checked against it.
type callView struct {
	policy.Call
	prefixes *prefixCache // nil: parse each prefix
	sealer   *sealer      // nil: a sealed scope covers nothing
	parsed   bool
	words    []string // the literal words, nil unless one safe simple command

	cwdDone, pathDone bool
	cwd, path         string // "" when the call's cwd / path cannot be resolved
}

func (v *callView) resolvedCwd() string {
	if !v.cwdDone {
		v.cwdDone = true
		if cwd, err := callCwd(v.Call); err == nil {
			v.cwd = cwd
		}
	}
	return v.cwd
}

func (v *callView) resolvedPath() string {
	if !v.pathDone {
		v.pathDone = true
		if p, err := callPath(v.Call); err == nil {
			v.path = p
		}
	}
	return v.path
}

// simpleWords returns the call's words if its command is one simple command
// of literal words that does not run arbitrary code, else nil.
func (v *callView) simpleWords() []string {
	if !v.parsed {
		v.parsed = true
		cmd := trimCommand(v.Command)
		// A control character other than bash's tab and newline (a CR,
		// a form feed) is one the parser and bash may read apart.
		if strings.ContainsFunc(cmd, func(r rune) bool { return r != '\t' && r != '\n' && unicode.IsControl(r) }) {
			return nil
		}
		if w, err := policy.SimpleWords(cmd); err == nil && len(w) > 0 && !policy.RunsArbitraryCode(w) {
			v.words = w
		}
	}
	return v.words
}

func (s Scope) covers(v *callView) bool { return s.coversIn(v, "") }

// coversIn is covers with a prefix's files judged inside within (a
// directory inside the call's workspace) rather than the whole workspace,
// when within is not "".
func (s Scope) coversIn(v *callView, within string) bool {
	c := v.Call
	// The prefix itself is judged by prefixCovers, which parses it anyway.
	if s.validate(false) != nil || c.Tool != s.Tool {
		return false
	}
	switch s.Kind {
	case KindExact, KindPrefix:
		cwd := v.resolvedCwd()
		if cwd == "" || cwd != s.Cwd {
			return false
		}
		if s.Workspace != "" && !sameWorkspace(s.Workspace, c.Workspace) {
			// Made for another workspace: a prefix's files would be
			// judged against this wider one.
			return false
		}
		cmd := trimCommand(c.Command)
		if s.Kind == KindExact {
			same := cmd == s.Command
			if s.CommandMAC != "" {
				same = v.sealer != nil && v.sealer.matches(cmd, s.CommandMAC)
			}
			// The same text runs another program when a bare name
			// (ls) now finds a workspace file through PATH.
			return same && policy.ExactGrantNotCovered(cmd, cwd, c.Workspace) == ""
		}
		judgeIn := c.Workspace
		if within != "" {
			judgeIn = within
		}
		return prefixCovers(s.Command, v.simpleWords(), cwd, judgeIn, v.prefixes)
	case KindPath, KindDir:
		if s.Workspace != "" && !sameWorkspace(s.Workspace, c.Workspace) {
			return false
		}
		rel := v.resolvedPath()
		if rel == "" {
			return false
		}
		if !fileCovered(s, rel, c.Exact) {
			return false
		}
		return onThisMachine(s, rel, c)
	default:
		return false
	}
}

// sameWorkspace reports whether the call's workspace is the scope's: the
// same clean path, or the same directory once links are resolved (bot
// grants add names the resolved one; a gateway may send it as written).
func sameWorkspace(scope, call string) bool {
	if call == "" || !filepath.IsAbs(call) {
		return false
	}
	call = filepath.Clean(call)
	if call == scope {
		return true
	}
	a, errA := realpath.Existing(scope)
	b, errB := realpath.Existing(call)
	return errA == nil && errB == nil && a == b
}

// shellBlanks are the characters bash itself skips around a command:
// space, tab and newline. Other white space (U+00A0, U+2028, U+3000, …)
// is part of a word to bash, so a grant never trims it: "cat a.txt" and
// "cat a.txt\u00a0" read different files.
const shellBlanks = " \t\n"

// trimCommand is a command line without the blanks bash skips around it.
func trimCommand(s string) string { return strings.Trim(s, shellBlanks) }

// fileCovered reports whether the file scope s covers the workspace-
// relative path rel, by its words: the same path, or one under the
// directory and, unless exact (the call's file system takes names as
// written), under no name any file system may read as .git.
func fileCovered(s Scope, rel string, exact bool) bool {
	if s.Kind == KindPath {
		return rel == s.Path
	}
	if underGit(rel) || !exact && policy.MayBeGitPath(rel) {
		// .git holds hooks and config that run code: a directory
		// grant (even on the whole workspace) never reaches inside,
		// by any spelling (.git., .git::$INDEX_ALLOCATION, GIT~1).
		return false
	}
	return s.Path == "." || rel == s.Path || strings.HasPrefix(rel, s.Path+"/")
}

// onThisMachine reports whether a file call the scope covers by its path
// (rel) is covered by the file it names: when askops resolved the call
// here (Resolved), the file must be the one the path names, not another
// through a link, nor a file with other names (a hard link to
// .git/config); and a search (a read of every file under the path) must
// reach no .git, no hard-linked file, at any depth. A search askops could
// not look through here is not covered: what lies under it is unknown.
func onThisMachine(s Scope, rel string, c policy.Call) bool {
	if !c.Resolved {
		return !c.Search
	}
	ws := filepath.Clean(c.Workspace)
	abs := filepath.Join(ws, filepath.FromSlash(rel))
	if policy.GrantHardLinked(abs) {
		return false
	}
	// The path as the kernel resolves it (links followed as far as it
	// exists, the rest as written), against the workspace resolved alike.
	real, err := realpath.Existing(abs)
	if err != nil {
		return false
	}
	realWS, err := realpath.Existing(ws)
	if err != nil {
		return false
	}
	if realRel, ok := policy.Within(filepath.ToSlash(realWS), filepath.ToSlash(real)); !ok || realRel != rel {
		return false
	}
	if c.Search && policy.GrantTreeNotCovered(filepath.ToSlash(abs), filepath.ToSlash(ws)) != "" {
		return false
	}
	return true
}

// underGit reports whether a workspace-relative path has a .git element,
// in any case (.GIT is .git on a case-insensitive file system).
func underGit(rel string) bool {
	for _, e := range strings.Split(rel, "/") {
		if strings.EqualFold(e, ".git") {
			return true
		}
	}
	return false
}

// String is the scope as an approver reads it, e.g.
// `bash: exactly "npm test" in /ws/app`,
// `bash: commands starting with "ls" in /ws (only the options askops
// knows; files inside the workspace, outside .git)`,
// `write_file: src/main.go`, `read_file: anything under docs/`.
// Commands are quoted (Go syntax) so control characters and newlines show.
func (s Scope) String() string {
	switch s.Kind {
	case KindExact:
		return fmt.Sprintf("%s: exactly %s in %s", s.Tool, strconv.Quote(s.Command), showPath(s.Cwd))
	case KindPrefix:
		note := ""
		if words, err := policy.SimpleWords(s.Command); err == nil {
			note = " (" + policy.PrefixGrantNote(words) + ")"
		}
		return fmt.Sprintf("%s: commands starting with %s in %s%s", s.Tool, strconv.Quote(s.Command), showPath(s.Cwd), note)
	case KindPath:
		if s.Path == "." {
			return fmt.Sprintf("%s: the workspace root", s.Tool)
		}
		return fmt.Sprintf("%s: %s", s.Tool, showPath(s.Path))
	case KindDir:
		if s.Path == "." {
			return fmt.Sprintf("%s: anything in the workspace", s.Tool)
		}
		return fmt.Sprintf("%s: anything under %s", s.Tool, showPath(s.Path+"/"))
	default:
		return fmt.Sprintf("%s: unknown scope %q", s.Tool, s.Kind)
	}
}

// String describes g for lists and logs, e.g.
// `grant Xyz (bash: exactly "npm test" in /ws) by U123, for this session`.
func (g Grant) String() string {
	life := "for this session"
	if g.Standing() {
		life = "standing, until revoked"
	}
	return fmt.Sprintf("grant %s (%s) by %s, %s", g.ID, g.Scope, g.By, life)
}

// callCwd is the absolute, clean directory a bash call runs in: its Cwd, or
// the workspace when the call names none. It must lie inside the workspace
// when the call names one.
func callCwd(c policy.Call) (string, error) {
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Workspace
	}
	if err := checkAbs(cwd, "working directory"); err != nil {
		return "", err
	}
	cwd = filepath.Clean(cwd)
	if c.Workspace != "" {
		if _, err := workspaceRel(cwd, c.Workspace, c.Workspace); err != nil {
			return "", err
		}
	}
	return cwd, nil
}

// callPath is the clean, slash-separated, workspace-relative path of a file
// call. A relative path is resolved against the call's Cwd, or the workspace
// when Cwd is empty (list_files with no path lists that directory).
func callPath(c policy.Call) (string, error) {
	base := c.Cwd
	if base == "" {
		base = c.Workspace
	}
	p := c.Path
	if p == "" {
		if c.Tool != "list_files" {
			return "", fmt.Errorf("%s needs a path", c.Tool)
		}
		p = "."
	}
	return workspaceRel(p, base, c.Workspace)
}

// workspaceRel resolves p (absolute, or relative to base) and returns it
// relative to workspace, refusing ".." elements and anything outside.
func workspaceRel(p, base, workspace string) (string, error) {
	if err := checkAbs(workspace, "workspace"); err != nil {
		return "", err
	}
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if hasDotDot(p) {
		return "", fmt.Errorf("path %q contains \"..\"", p)
	}
	if hasDotDot(workspace) {
		return "", fmt.Errorf("workspace %q contains \"..\"", workspace)
	}
	if !filepath.IsAbs(p) {
		if err := checkAbs(base, "working directory"); err != nil {
			return "", err
		}
		// Lexical cleaning of "dir/.." is wrong when dir is a symlink.
		if hasDotDot(base) {
			return "", fmt.Errorf("working directory %q contains \"..\"", base)
		}
		p = filepath.Join(base, p)
	}
	ws := filepath.Clean(workspace)
	rel, ok := policy.Within(filepath.ToSlash(ws), filepath.ToSlash(p))
	if !ok {
		return "", fmt.Errorf("path %q is outside the workspace %q", p, ws)
	}
	return rel, nil
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

func checkAbs(p, what string) error {
	if p == "" {
		return fmt.Errorf("no %s", what)
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q is not absolute", what, p)
	}
	if hasControl(p) {
		return fmt.Errorf("%s %q contains control characters", what, p)
	}
	return nil
}

func checkCwd(cwd string) error {
	if err := checkAbs(cwd, "cwd"); err != nil {
		return err
	}
	if filepath.Clean(cwd) != cwd {
		return fmt.Errorf("cwd %q is not clean", cwd)
	}
	return nil
}

// checkRel accepts a clean, slash-separated, workspace-relative path.
func checkRel(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return fmt.Errorf("path %q must be workspace-relative", p)
	case hasDotDot(p):
		return fmt.Errorf("path %q contains \"..\"", p)
	case filepath.ToSlash(filepath.Clean(p)) != p:
		return fmt.Errorf("path %q is not clean", p)
	case hasControl(p):
		return fmt.Errorf("path %q contains control characters", p)
	}
	return nil
}

func cleanAbs(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// showPath prints a path bare when it is plain, quoted when it has spaces,
// quotes or anything unusual, so the approver cannot be misled.
func showPath(p string) string {
	plain := !strings.ContainsFunc(p, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/._-+@~,:=", r)))
	})
	if plain && p != "" {
		return p
	}
	return strconv.Quote(p)
}
