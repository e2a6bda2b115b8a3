package policy

import (
	"path"
	"strings"
)

// ExactGrantNotCovered says why an exact-command grant on command must not
// cover it in cwd inside workspace although its text is the text the
// approver saw: a program it runs by a bare name (ls, git, cat) is, found
// through $PATH as askops sees it, a file the workspace holds (bin/ls,
// node_modules/.bin/git). The approver read "ls" as the system's ls; the
// agent can write a workspace file on PATH after the grant (a write grant,
// a package install) and the same text then runs the agent's code. A
// program written as a path (./build.sh) is what the approver saw and is
// left to them. "" when every bare name is a builtin or a program of the
// system; also "" with no workspace to compare against. A command that
// does not parse is not covered.
func ExactGrantNotCovered(command, cwd, workspace string) string {
	if workspace == "" || !path.IsAbs(workspace) {
		return ""
	}
	if cwd == "" {
		cwd = workspace
	}
	an := analyzeCommand(command, cwd, workspace, nil)
	if an.parseErr != nil {
		return "the command does not parse"
	}
	if why := workspaceOnPath(an.cmds, cwd, workspace); why != "" {
		return why + ": the text the grant names runs the workspace's file"
	}
	return ""
}

// workspaceOnPath says which simple command of cmds runs, by a bare name,
// a file the workspace holds, found through $PATH as askops sees it (from
// cwd); "" when none does. A rule or a grant naming "ls" names the
// system's ls: the agent can put bin/ls on PATH (a write, a package
// install), and the same words then run its own code.
func workspaceOnPath(cmds []simple, cwd, workspace string) string {
	if cwd == "" {
		cwd = workspace
	}
	g := newGrantCheck(cwd, workspace)
	if g.ws == "" {
		return ""
	}
	for _, s := range cmds {
		if len(s.words) == 0 || !s.words[0].ok {
			continue // no name the policy knows: the reading asks for it
		}
		name := s.words[0].lit
		if name == "" || strings.Contains(name, "/") || runsWithoutPath(name) {
			continue
		}
		if why := g.program(name); why != "" {
			return why + ", found through PATH"
		}
	}
	return ""
}

// runsWithoutPath reports a name bash runs itself (a builtin or a keyword),
// never looking it up on PATH. Left out names cost an Ask, never an allow.
func runsWithoutPath(name string) bool {
	switch name {
	case ":", ".", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete",
		"compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export",
		"false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout",
		"mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift",
		"shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask",
		"unalias", "unset", "wait",
		"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done",
		"in", "function", "time", "{", "}", "!", "[[", "]]", "coproc":
		return true
	}
	return false
}
