package policy

import (
	"path"
	"strings"
)

// Files that change how the agent is supervised, or run code with no call
// anyone judges. An agent's own settings hold its hooks (commands Claude
// Code, Codex, Cursor and Gemini CLI run on their own at every tool call,
// the status line's command, an API key helper), its permissions and its
// MCP servers (programs started for it); an editor's workspace settings
// hold tasks that run when a folder opens and an assistant's auto-approval;
// husky's directory holds the hooks git runs at the next commit. A write
// there by the agent acts outside askops: nothing the policy reads runs it,
// and the OS bound does not bound it (the agent or the editor runs it
// later, unbounded). So such a write asks in every mode, whatever allowed
// it (a rule, a grant, mode full), as a write under .git does; mode never
// denies it.

// settingsNames are the directories every file of which is such settings,
// and the files that are, wherever they lie, each with why.
var settingsNames = map[string]string{
	".claude":   "Claude Code's settings (its hooks, status line, permissions and MCP servers run or allow commands outside askops)",
	".codex":    "Codex's settings (its hooks, notify command and MCP servers run commands outside askops)",
	".cursor":   "Cursor's settings (its hooks and MCP servers run commands outside askops)",
	".gemini":   "Gemini CLI's settings (its hooks and MCP servers run commands outside askops)",
	".vscode":   "the editor's workspace settings (tasks that run when the folder opens, assistants' auto-approval)",
	".husky":    "husky's git hooks (git runs them at the next commit)",
	".mcp.json": "the MCP servers an agent starts",
}

// SettingsName reports whether a file or directory called name holds an
// agent's or an editor's settings (settingsNames); the OS bound keeps
// those at the workspace's top read-only.
func SettingsName(name string) bool {
	_, ok := settingsNames[name]
	return ok
}

// settingsPath says why a write of p changes an agent's or an editor's
// settings ("" if it does not). p is judged relative to the workspace when
// it lies inside (a workspace under ~/.vscode/… is not itself settings);
// with fold, names match in any case (a file system that folds case).
func settingsPath(p, workspace string, fold bool) string {
	if workspace != "" && within(p, workspace) {
		p = strings.TrimPrefix(strings.TrimPrefix(p, workspace), "/")
	}
	for _, c := range strings.Split(path.Clean(p), "/") {
		if fold {
			c = strings.ToLower(c)
		}
		if why, ok := settingsNames[c]; ok {
			return "a write in " + c + ": " + why
		}
	}
	return ""
}
