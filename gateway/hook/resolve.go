package hook

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/askops/askops/internal/realpath"
)

// This file is what the front doors that run on the agent's own machine
// (bot hook, bot mcp) do before asking: resolve every path of the call
// where the files are, as askops' own agent confines its tools, so the
// policy judges src/glink/hooks/pre-commit as the .git/hooks/pre-commit
// it is, and envlink as the .env it points to.

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
	}
	return nil
}

// ResolvePaths returns c with its cwd and every path in its input
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
		if strings.ContainsRune(p, 0) {
			return c
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		real, err := realpath.Existing(filepath.Clean(abs))
		if err != nil {
			return c
		}
		b, _ := json.Marshal(real)
		in[k], changed = b, true
	}
	out := c
	out.Cwd, out.Resolved = cwd, true
	if changed {
		b, err := json.Marshal(in)
		if err != nil {
			return c
		}
		out.Input = b
	}
	return out
}
