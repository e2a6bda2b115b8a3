package hook

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/askops/askops/internal/globbase"
	"github.com/askops/askops/internal/realpath"
)

// This file is what the front doors that run on the agent's own machine
// (bot hook, bot mcp) do before asking: resolve every path of the call
// where the files are, as askops' own agent confines its tools, so the
// policy judges src/glink/hooks/pre-commit as the .git/hooks/pre-commit
// it is, and envlink as the .env it points to.

// resolvePath is p (absolute, or relative to cwd) resolved on this
// machine, ok false when it cannot be settled to one file: a NUL; a "~"
// the agent's tool expands to a home directory other than this user's
// (~user); or a ".." after a link (link/../x), which the kernel takes
// from where the link leads and a tool that cleans the path first (as
// Node's path.resolve does) from the link's own directory.
func resolvePath(cwd, p string) (string, bool) {
	if strings.ContainsRune(p, 0) {
		return "", false
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", false
		}
		p = home + p[1:]
	} else if strings.HasPrefix(p, "~") {
		return "", false
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = cwd + string(filepath.Separator) + abs
	}
	lexical, err := realpath.Existing(filepath.Clean(abs))
	if err != nil {
		return "", false
	}
	kernel, err := realpath.Existing(abs)
	if err != nil || kernel != lexical {
		return "", false
	}
	return lexical, true
}

// stringField is input field k when it is a JSON string.
func stringField(in map[string]json.RawMessage, k string) (string, bool) {
	var s string
	raw, ok := in[k]
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// pathFields are the inputs of each agent tool that name a file or
// directory (the gateway's mapTool reads them).
func pathFields(tool string) []string {
	switch tool {
	case "Write", "Edit", "MultiEdit":
		return []string{"file_path"}
	case "Read", "NotebookRead":
		return []string{"file_path", "notebook_path"}
	case "NotebookEdit":
		return []string{"notebook_path"}
	case "Glob", "Grep", "LS":
		return []string{"path"}
	case "read_file", "write_file", "edit_file", "list_files": // askops' own, by name
		return []string{"path"}
	}
	return nil
}

// ResolvePaths returns c with its cwd, its workspace and every path in its input
// resolved on this machine (made absolute against the cwd, cleaned,
// symlinks followed on the part that exists: realpath.Existing) and
// Resolved set. Anything it cannot resolve — a relative cwd, a NUL, a
// dangling link or a loop — leaves c as it was, unresolved: its paths are
// then judged as text, and no rule or grant allows a write.
func ResolvePaths(c Call) Call {
	if c.Cwd == "" || !filepath.IsAbs(c.Cwd) || strings.ContainsRune(c.Cwd, 0) {
		return c
	}
	cwd, err := realpath.Existing(filepath.Clean(c.Cwd))
	if err != nil {
		return c
	}
	workspace := c.Workspace
	if workspace != "" {
		// The root is compared with the resolved paths, so it is resolved
		// as they are; one that cannot be leaves the call as text.
		if !filepath.IsAbs(workspace) || strings.ContainsRune(workspace, 0) {
			return c
		}
		if workspace, err = realpath.Existing(filepath.Clean(workspace)); err != nil {
			return c
		}
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(c.Input, &in) != nil || in == nil {
		return c
	}
	changed := false
	for _, k := range pathFields(c.Tool) {
		raw, ok := in[k]
		if !ok {
			continue
		}
		var p string
		if json.Unmarshal(raw, &p) != nil || p == "" {
			continue // not a path mapTool reads
		}
		real, ok := resolvePath(cwd, p)
		if !ok {
			return c
		}
		b, _ := json.Marshal(real)
		in[k], changed = b, true
	}
	// A Glob lists under its pattern's fixed directories too (outlink/*):
	// they are resolved with its path, and what is left of the pattern
	// starts at the directory they lead to.
	if pat, ok := stringField(in, "pattern"); ok && c.Tool == "Glob" {
		base, rest := globbase.Split(pat)
		if strings.HasPrefix(base, "~") {
			return c // the agent's tool may expand it: judged unresolved (toolcall: outside)
		}
		if base != "." {
			dir, _ := stringField(in, "path")
			dir = strings.TrimSuffix(cmp.Or(dir, cwd), "/") + "/" + base
			if filepath.IsAbs(base) {
				dir = base
			}
			real, ok := resolvePath(cwd, dir)
			if !ok {
				return c
			}
			in["path"], _ = json.Marshal(real)
			in["pattern"], _ = json.Marshal(rest)
			changed = true
		}
	}
	out := c
	out.Cwd, out.Workspace, out.Resolved = cwd, workspace, true
	if changed {
		b, err := json.Marshal(in)
		if err != nil {
			return c
		}
		out.Input = b
	}
	return out
}
