// Package toolcall reads an agent's tool call — Claude Code's and Codex's
// tool names and inputs, MCP tools, anything unknown — as askops' own: the
// call the policy judges, what an approver is shown, the arguments as
// askops' tools take them, and the input a hook's allow hands back
// (JudgedInput). It is each door's translation, and judges nothing.
package toolcall

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/askops/askops/internal/globbase"
	"github.com/askops/askops/internal/shellquote"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
)

// Tool names askops gives the policy for agents' tools it has no
// askops equivalent for; nothing allows them but a rule or a grant.
const (
	toolWebFetch  = "web_fetch"
	toolWebSearch = "web_search"
)

// Mapped is an agent's tool call in askops' terms: what the policy judges,
// what an approver is shown (the described Call: a command, a file's new
// content, an edit's old and new text; for anything else, the arguments),
// the arguments as askops' own tools would take them, and a one-line
// summary.
type Mapped struct {
	Call    policy.Call
	Shown   pending.Call
	Args    string
	Summary string
	// agentSays is what the agent wrote about the call (a Bash
	// description, Codex's justification): shown to approvers labelled
	// as the agent's words, never read to choose a tool, rule or mode.
	AgentSays string
	// refuse, when set, is why the call is denied without asking the
	// policy: a shell call whose command cannot be read.
	Refuse string
	// Unjudged, when set, says what the call sets that changes what runs
	// and the policy does not judge (a shell call's workdir other than
	// its cwd, a shell of its own, an input field askops does not know):
	// the policy judges the call with it (policy.Call.Unread), so it is
	// never allowed, only asked about (or denied), and Args shows its
	// whole input.
	Unjudged string
}

// toolCall is one agent tool call as a mapper reads it: its name, its
// input (raw and decoded) and the working directory paths are made
// absolute against.
type toolCall struct {
	tool  string
	input json.RawMessage
	in    map[string]any
	cwd   string
}

// str is input field k when it is a string.
func (t toolCall) str(k string) (string, bool) {
	s, ok := t.in[k].(string)
	return s, ok
}

// abs is p made absolute against cwd ("" is cwd itself). Two spellings
// keep what only the agent's machine can settle, for the policy to judge
// (policy.Call.Exact false): a path the agent's tool may expand or root
// elsewhere (~, ~user, a drive letter) stays as given, not joined to cwd;
// and a ".." after a name (link/../x) is not cleaned away, since where it
// leads depends on whether the name is a link (bot hook resolves it
// first: hook.ResolvePaths).
func (t toolCall) abs(p string) string {
	if p == "" {
		return t.cwd
	}
	if policy.ForeignRoot(p) {
		return p
	}
	if policy.ClimbsAfterName(p) {
		if !path.IsAbs(p) && t.cwd != "" {
			return strings.TrimSuffix(t.cwd, "/") + "/" + p
		}
		return p
	}
	if !path.IsAbs(p) && t.cwd != "" {
		p = path.Join(t.cwd, p)
	}
	return path.Clean(p)
}

// raw is the input as given, for what askops shows as arguments.
func (t toolCall) raw() string { return string(objectOrEmpty(t.input)) }

func enc(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// toolMappers maps Claude Code's and Codex's tools onto askops' policy, one
// row per tool name: Bash and Codex's shell calls onto bash (parsed, as the
// agent's own shell would run it), Write onto write_file, Edit/MultiEdit/
// NotebookEdit onto edit_file (shown as a diff), Read and Grep (which
// reads every file it searches) onto read_file, Glob/LS (names only) onto
// list_files, web access onto tools of its own. A mapper that cannot read
// its input (ok false), and every tool without a row (MCP tools, tools
// askops does not know), become a tool of the agent's own name that asks,
// showing its input.
var toolMappers = map[string]func(toolCall) (Mapped, bool){
	"Bash": mapShell, "bash": mapShell, "shell": mapShell, "exec_command": mapShell, "NetworkAccess": mapShell,
	"Write": mapWrite,
	"Edit":  mapEdit, "MultiEdit": mapEdit, "NotebookEdit": mapEdit,
	"Read": mapRead, "NotebookRead": mapRead,
	"Grep": mapGrep,
	"Glob": mapList, "LS": mapList,
	"WebFetch":  mapWebFetch,
	"WebSearch": mapWebSearch,
	// askops' own file tools by name (an Ask API or AAP client naming
	// them): their path is "path", as askops' agent takes it.
	policy.ToolReadFile:  mapOwnFile,
	policy.ToolWriteFile: mapOwnFile,
	policy.ToolEditFile:  mapOwnFile,
	policy.ToolListFiles: mapOwnFile,
}

// Map maps one agent tool call (toolMappers). Paths are made absolute
// against cwd.
func Map(tool string, input json.RawMessage, cwd string) Mapped {
	t := toolCall{tool: tool, input: input, cwd: cwd}
	_ = json.Unmarshal(input, &t.in)
	if m, ok := toolMappers[tool]; ok {
		if mapped, ok := m(t); ok {
			return mapped
		}
	}
	// mcp__server__tool and anything unknown or unreadable: ask, showing
	// the input as given. Unknown safety asks unless a rule says otherwise.
	name := tool
	if name == "" {
		name = "unknown_tool"
	}
	m := Mapped{Call: policy.Call{Tool: name, Safety: policy.Unknown}, Args: t.raw(), Summary: name}
	if policy.IsFileTool(name) {
		// Judged as a file tool, it would be judged on no path (the
		// working directory) whatever file it names: refused instead.
		m.Refuse = "the " + name + " call names no path askops can read (want \"path\": a non-empty string)"
	}
	return m
}

// mapOwnFile maps a call of one of askops' own file tools by name: its
// "path" (a non-empty string; anything else is unreadable, and refused),
// and for write_file and edit_file what the approver is shown.
func mapOwnFile(t toolCall) (Mapped, bool) {
	p, ok := t.str("path")
	if !ok || p == "" {
		return Mapped{}, false
	}
	p = t.abs(p)
	m := Mapped{Args: t.raw(), Summary: t.tool + " " + p}
	switch t.tool {
	case policy.ToolReadFile:
		m.Call = policy.Call{Tool: policy.ToolReadFile, Safety: policy.ReadOnly, Path: p}
	case policy.ToolListFiles:
		m.Call = policy.Call{Tool: policy.ToolListFiles, Safety: policy.ReadOnly, Path: p}
	case policy.ToolWriteFile:
		content, _ := t.str("content")
		m.Call = policy.Call{Tool: policy.ToolWriteFile, Safety: policy.SideEffect, Path: p}
		m.Shown = pending.Call{Kind: pending.CallWrite, Path: p, Content: content}
	case policy.ToolEditFile:
		o, _ := t.str("old_string")
		n, _ := t.str("new_string")
		m.Call = policy.Call{Tool: policy.ToolEditFile, Safety: policy.SideEffect, Path: p}
		m.Shown = pending.Call{Kind: pending.CallEdit, Path: p, Old: o, New: n}
	default:
		return Mapped{}, false
	}
	return m, true
}

// mapShell maps a shell call. The command is what the call does; the
// description (Codex sends the model's own justification there) is only
// what the agent says about it. A description of "network-access …" is
// therefore shown, never trusted: the call is judged as network access
// AND as its command by the bash rules, the stricter verdict standing, so
// words can only make a call stricter, never looser.
func mapShell(t toolCall) (Mapped, bool) {
	desc, _ := t.str("description")
	if desc == "" {
		desc, _ = t.str("justification")
	}
	cmd, ok := shellCommand(t.in)
	if ok {
		cmd = judgedCommand(cmd)
	}
	unjudged := shellUnjudged(t)
	if t.tool == "NetworkAccess" || strings.HasPrefix(strings.TrimSpace(strings.ToLower(desc)), "network") {
		m := Mapped{
			Call:      policy.Call{Tool: policy.ToolNetworkAccess, Safety: policy.Unknown, Command: cmd},
			Args:      t.raw(),
			Summary:   "network access",
			AgentSays: desc,
			Unjudged:  unjudged,
		}
		if ok {
			m.Shown = pending.Call{Kind: pending.CallCommand, Command: cmd}
			m.Summary = "network access: " + cmd
		}
		return m, true
	}
	if !ok {
		return Mapped{
			Call:    policy.Call{Tool: policy.ToolBash, Safety: policy.SideEffect},
			Args:    t.raw(),
			Summary: t.tool + " (no readable command)",
			Refuse:  "the " + t.tool + " call carries no command askops can read (want command or cmd: a string or an array of strings)",
		}, true
	}
	args, cmd := shellArgs(cmd)
	if unjudged != "" {
		args = t.raw() // the approver sees what else the call sets
	}
	return Mapped{
		Call:      policy.Call{Tool: policy.ToolBash, Safety: policy.SideEffect, Command: cmd},
		Shown:     pending.Call{Kind: pending.CallCommand, Command: cmd},
		Args:      args,
		Summary:   cmd,
		AgentSays: desc,
		Unjudged:  unjudged,
	}, true
}

// shellInert are the shell tools' input fields that do not change what
// runs or where (Claude Code's Bash; Codex's shell, shell_command and
// exec_command): how long it may take, whether it runs in the background
// or on a terminal, how much output comes back, the agent's own words, and
// the agent's sandbox (askops judges every command as unconfined anyway).
// login is here because Codex's exec_command runs a login shell unless
// told not to: the profile it reads is the same whatever the call says.
var shellInert = map[string]bool{
	"command": true, "cmd": true, // the command itself (shellCommand)
	"description": true, "justification": true,
	"timeout": true, "timeout_ms": true, "yield_time_ms": true, "max_output_tokens": true,
	"run_in_background": true, "tty": true, "login": true,
	"dangerouslyDisableSandbox": true, "sandbox_permissions": true, "additional_permissions": true, "prefix_rule": true,
}

// shellUnjudged is what a shell call sets beyond its command that changes
// what runs, as the approver reads it ("" when nothing): a working
// directory (workdir, cwd) other than the call's cwd, which the command's
// paths would be judged against wrongly; and any field askops does not
// know (Codex's exec_command shell, which names the program that runs the
// command; env; stdin; anything an adapter's shell tool takes). Closed
// world: what a door cannot read is not allowed.
func shellUnjudged(t toolCall) string {
	var what []string
	for _, k := range slices.Sorted(maps.Keys(t.in)) {
		v := t.in[k]
		switch {
		case shellInert[k]:
			continue
		case k == "workdir" || k == "cwd":
			if d, ok := v.(string); ok && (d == "" || t.cwd != "" && t.abs(d) == path.Clean(t.cwd)) {
				continue // where the call is judged anyway
			}
		}
		what = append(what, k+"="+clip(enc(v)))
	}
	if len(what) == 0 {
		return ""
	}
	return "the call also sets " + strings.Join(what, ", ") + ", which askops does not judge (it can change what runs or where)"
}

// clip shortens s for a reason line.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func mapWrite(t toolCall) (Mapped, bool) {
	p, okP := t.str("file_path")
	content, okC := t.str("content")
	if !okP || !okC {
		return Mapped{}, false
	}
	p = t.abs(p)
	return Mapped{
		Call:    policy.Call{Tool: policy.ToolWriteFile, Safety: policy.SideEffect, Path: p},
		Shown:   pending.Call{Kind: pending.CallWrite, Path: p, Content: content},
		Args:    enc(map[string]string{"path": p, "content": content}),
		Summary: fmt.Sprintf("write_file %s (%d bytes)", p, len(content)),
	}, true
}

func mapEdit(t toolCall) (Mapped, bool) {
	p, oldS, newS, ok := editOf(t.tool, t.in)
	if !ok {
		return Mapped{}, false
	}
	p = t.abs(p)
	return Mapped{
		Call:    policy.Call{Tool: policy.ToolEditFile, Safety: policy.SideEffect, Path: p},
		Shown:   pending.Call{Kind: pending.CallEdit, Path: p, Old: oldS, New: newS},
		Args:    enc(map[string]string{"path": p, "old_string": oldS, "new_string": newS}),
		Summary: fmt.Sprintf("edit_file %s (%s)", p, t.tool),
	}, true
}

// mapRead: Read reads file_path, NotebookRead notebook_path. A call that
// names the other field too, with another file, is not read (which of the
// two the tool opens is the tool's business): it asks, shown whole.
func mapRead(t toolCall) (Mapped, bool) {
	field, other := "file_path", "notebook_path"
	if t.tool == "NotebookRead" {
		field, other = other, field
	}
	p, ok := t.str(field)
	if o, has := t.str(other); !ok || has && o != p {
		return Mapped{}, false
	}
	p = t.abs(p)
	return Mapped{
		Call:    policy.Call{Tool: policy.ToolReadFile, Safety: policy.ReadOnly, Path: p},
		Args:    enc(map[string]string{"path": p}),
		Summary: "read_file " + p,
	}, true
}

// mapGrep: Grep opens every file it searches, and its answer is their
// lines (output_mode content), or which of them hold a pattern the model
// chose, one question at a time: whatever it prints, it reads each file.
// So it is a read of its path and of the files under it, and meets
// read_file's rules (policy.Call.Search).
func mapGrep(t toolCall) (Mapped, bool) {
	p, _ := t.str("path")
	p = t.abs(p)
	names, _ := t.str("glob")
	return Mapped{
		Call:    policy.Call{Tool: policy.ToolReadFile, Safety: policy.ReadOnly, Path: p, Search: true, Glob: names},
		Args:    t.raw(),
		Summary: fmt.Sprintf("Grep in %s", p),
	}, true
}

// mapList: a glob's own directories (../../etc/*, /home/*/.ssh/*) are
// where it lists: the deepest fixed one is judged. A pattern whose
// wildcard part can climb or root itself anywhere (*/../.., {/etc,src},
// a backslash, ~) lists where askops cannot tell: judged as a listing of
// "/", which is outside every workspace.
func mapList(t toolCall) (Mapped, bool) {
	p, _ := t.str("path")
	p = t.abs(p)
	if pat, ok := t.str("pattern"); ok && t.tool == "Glob" {
		base, rest := globbase.Split(pat)
		switch {
		case !globbase.StaysUnder(rest) || policy.ForeignRoot(base):
			p = "/"
		case path.IsAbs(base):
			p = t.abs(base)
		case policy.ClimbsAfterName(base): // link/..: the policy's to judge
			p = t.abs(strings.TrimSuffix(p, "/") + "/" + base)
		default:
			p = t.abs(path.Join(p, base))
		}
	}
	return Mapped{
		Call:    policy.Call{Tool: policy.ToolListFiles, Safety: policy.ReadOnly, Path: p},
		Args:    t.raw(),
		Summary: fmt.Sprintf("%s in %s", t.tool, p),
	}, true
}

func mapWebFetch(t toolCall) (Mapped, bool) {
	u, ok := t.str("url")
	return Mapped{Call: policy.Call{Tool: toolWebFetch, Safety: policy.SideEffect}, Args: t.raw(), Summary: "WebFetch " + u}, ok
}

func mapWebSearch(t toolCall) (Mapped, bool) {
	q, ok := t.str("query")
	return Mapped{Call: policy.Call{Tool: toolWebSearch, Safety: policy.SideEffect}, Args: t.raw(), Summary: "WebSearch " + q}, ok
}

// judgedCommand is the text of command askops judges, shows and (through
// a hook's updatedInput) has the agent run: the command as the policy
// parses it, printed back, as askops' own agent runs it. A command that
// cannot be printed back stays raw; the policy never allows it.
func judgedCommand(command string) string {
	if c, err := policy.Canonical(command); err == nil {
		return c
	}
	return command
}

// shellArgs is a shell call's arguments as askops records them,
// {"command": cmd}, and cmd again: when cmd needs no escaping in JSON (most
// commands), the cmd returned is the piece of args that spells it, so a
// waiting Ask holds its command's bytes once rather than twice (the
// command is most of what a waiting Ask holds).
func shellArgs(cmd string) (args, command string) {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	args = string(b)
	const prefix, suffix = `{"command":"`, `"}`
	if len(args) == len(prefix)+len(cmd)+len(suffix) && args[len(prefix):len(args)-len(suffix)] == cmd {
		return args, args[len(prefix) : len(args)-len(suffix)]
	}
	return args, cmd
}

// JudgedInput is tool's input as askops judged it: for a shell tool, the
// command replaced by judgedCommand's text (every other field kept); any
// other input as it came. A hook's allow hands it back as updatedInput,
// so a difference between the parser and bash cannot change what runs.
func JudgedInput(tool string, input json.RawMessage) json.RawMessage {
	switch tool {
	case "Bash", "bash", "shell":
	default:
		return input
	}
	var in map[string]json.RawMessage
	var cmd string
	if json.Unmarshal(input, &in) != nil || in == nil || json.Unmarshal(in["command"], &cmd) != nil {
		return input
	}
	judged := judgedCommand(cmd)
	if judged == cmd {
		return input
	}
	in["command"], _ = json.Marshal(judged)
	out, err := json.Marshal(in)
	if err != nil {
		return input
	}
	return out
}

// shellCommand is the command a shell tool's input runs: Claude Code's
// command, Codex's cmd (exec_command), or an argv array (shell), quoted
// as the shell would read it back. An input with both command and cmd
// saying different things has no one command: which runs is the tool's
// choice (Claude Code's Bash runs command, Codex's exec_command cmd), so
// it is unreadable, not judged on either.
func shellCommand(in map[string]any) (string, bool) {
	var got []string
	for _, k := range []string{"command", "cmd"} {
		switch v := in[k].(type) {
		case string:
			got = append(got, v)
		case []any:
			argv := make([]string, len(v))
			for i, a := range v {
				s, ok := a.(string)
				if !ok {
					return "", false
				}
				argv[i] = s
			}
			if len(argv) == 0 {
				return "", false
			}
			got = append(got, argvCommand(argv))
		case nil:
			if _, there := in[k]; there {
				return "", false // null is no command
			}
		default:
			return "", false
		}
	}
	if len(got) == 0 || len(got) == 2 && got[0] != got[1] {
		return "", false
	}
	return got[0], true
}

// argvCommand is an argv array a tool executes as it is (no shell reads
// it) quoted as bash reads it back: its first word always names the
// program, so a first word bash would read otherwise is quoted too (FOO=x
// is an assignment to bash, a program named "FOO=x" to execvp; time, if,
// while … are bash's reserved words).
func argvCommand(argv []string) string {
	s := shellquote.Join(argv)
	first := argv[0]
	if strings.ContainsRune(first, '=') || bashReserved[first] {
		if q := shellquote.Word(first); q == first {
			s = "'" + first + "'" + s[len(first):]
		}
	}
	return s
}

// bashReserved are bash's reserved words that shellquote.Word leaves bare.
var bashReserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true,
	"in": true, "function": true, "time": true, "coproc": true,
}

// editOf reads an edit tool's input as one replacement, so the approver
// sees one diff: MultiEdit's edits are shown in order, separated by a
// marker line; NotebookEdit's new cell source replaces nothing shown.
func editOf(tool string, in map[string]any) (p, oldS, newS string, ok bool) {
	s := func(m map[string]any, k string) (string, bool) {
		v, ok := m[k].(string)
		return v, ok
	}
	switch tool {
	case "Edit":
		p, ok1 := s(in, "file_path")
		o, ok2 := s(in, "old_string")
		n, ok3 := s(in, "new_string")
		return p, o, n, ok1 && ok2 && ok3
	case "MultiEdit":
		p, ok1 := s(in, "file_path")
		edits, ok2 := in["edits"].([]any)
		if !ok1 || !ok2 || len(edits) == 0 {
			return "", "", "", false
		}
		var olds, news []string
		for i, e := range edits {
			m, _ := e.(map[string]any)
			o, ok1 := s(m, "old_string")
			n, ok2 := s(m, "new_string")
			if !ok1 || !ok2 {
				return "", "", "", false
			}
			marker := fmt.Sprintf("··· edit %d of %d ···", i+1, len(edits))
			olds = append(olds, marker, o)
			news = append(news, marker, n)
		}
		return p, strings.Join(olds, "\n"), strings.Join(news, "\n"), true
	case "NotebookEdit":
		p, ok1 := s(in, "notebook_path")
		n, ok2 := s(in, "new_source")
		mode, _ := s(in, "edit_mode")
		if mode == "delete" {
			n, ok2 = "", true
		}
		return p, "", n, ok1 && ok2
	}
	return "", "", "", false
}

// objectOrEmpty is input if it is a JSON object, else {}.
func objectOrEmpty(input json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil || m == nil {
		return json.RawMessage("{}")
	}
	return input
}

// AsItCame is what redaction hides in a shell call's command as the agent
// wrote it (nil for any other call, or when the command judged is that
// text): the command askops judges, records and shows is re-printed
// (judgedCommand), and the re-printing can lose what makes a word a
// secret (a manifest's indentation; Ruby's => read as a redirection), so
// what the agent's own text shows to be secret is hidden in it too
// (pending.Request.Hidden).
func AsItCame(input json.RawMessage, judged string) []string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	raw, ok := shellCommand(in)
	if !ok || raw == judged {
		return nil
	}
	return redact.Hidden(raw, redact.Secrets(raw))
}
