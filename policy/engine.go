package policy

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"runtime/debug"
	"strings"
)

// Tool names the policy knows the arguments of.
const (
	ToolBash      = "bash"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolListFiles = "list_files"
)

// FileTools lists the tools whose calls carry a workspace path, in a
// stable order. It is the one list: grants, the CLI and the agent ask here.
func FileTools() []string {
	return []string{ToolReadFile, ToolWriteFile, ToolEditFile, ToolListFiles}
}

// IsFileTool reports whether tool is one of FileTools.
func IsFileTool(tool string) bool {
	switch tool {
	case ToolReadFile, ToolWriteFile, ToolEditFile, ToolListFiles:
		return true
	}
	return false
}

func isFileTool(tool string) bool { return IsFileTool(tool) }

// DefaultProtectedBranches are the branches a force push to always asks
// about when Config.ProtectedBranches is empty.
func DefaultProtectedBranches() []string {
	return []string{"main", "master", "production", "release"}
}

// Config is what New needs.
type Config struct {
	Rules             []Rule
	Mode              Mode     // the default mode of sessions that do not set one; empty means ModeAsk
	ProtectedBranches []string // empty means DefaultProtectedBranches
	Grants            GrantChecker
	Logger            *slog.Logger // nil discards
}

// RuleError is a configuration error, naming the rule's index and field so
// config loading can point at the YAML key. Index is -1 for errors that
// are not about one rule (Field "mode").
type RuleError struct {
	Index int
	Field string
	Msg   string
}

func (e *RuleError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("policy: %s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("policy: rules[%d].%s: %s", e.Index, e.Field, e.Msg)
}

// Engine evaluates calls against validated rules. It is safe for
// concurrent use; it holds no mutable state.
type Engine struct {
	deny, ask, allow []rule
	mode             Mode
	protected        []string
	grants           GrantChecker
	log              *slog.Logger
	// folded is this engine with every path rule's glob case-folded and
	// NFC-normalized (foldName), judging the folded spellings of a path a
	// file system askops does not know may read (filecall.go); nil in the
	// folded engine itself.
	folded *Engine
}

type rule struct {
	Rule
	index  int
	prefix []string // bash
	glob   string   // file tools, cleaned
	name   string   // for Verdict.Rule
}

// New validates cfg and returns an Engine. Every rule is checked; the first
// problem is returned as a *RuleError.
func New(cfg Config) (*Engine, error) {
	e := &Engine{mode: cfg.Mode, protected: cfg.ProtectedBranches, grants: cfg.Grants, log: cfg.Logger}
	if e.mode == "" {
		e.mode = ModeAsk
	}
	if !validMode(e.mode) && e.mode != ModeScript {
		return nil, &RuleError{Index: -1, Field: "mode", Msg: fmt.Sprintf("unknown mode %q (want ask, never or full)", cfg.Mode)}
	}
	if len(e.protected) == 0 {
		e.protected = DefaultProtectedBranches()
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	for i, r := range cfg.Rules {
		cr, err := compileRule(i, r)
		if err != nil {
			return nil, err
		}
		switch r.Decision {
		case Deny:
			e.deny = append(e.deny, cr)
		case Ask:
			e.ask = append(e.ask, cr)
		case Allow:
			e.allow = append(e.allow, cr)
		}
	}
	f := *e
	fold := func(rs []rule) []rule {
		out := make([]rule, len(rs))
		for i, r := range rs {
			if r.glob != "" {
				r.glob = foldName(r.glob)
			}
			out[i] = r
		}
		return out
	}
	f.deny, f.ask, f.allow = fold(e.deny), fold(e.ask), fold(e.allow)
	e.folded = &f
	return e, nil
}

func validMode(m Mode) bool {
	return m == ModeAsk || m == ModeNever || m == ModeFull
}

// Valid reports whether m is one of ask, never, full (empty is not: the
// caller decides what empty defaults to).
func (m Mode) Valid() bool { return validMode(m) }

// SessionSettable reports whether m may be set for sessions while runs
// go (chat-ops, a session's mode): ask or never. Mode full is set in the
// config only, so nobody in chat can switch supervision off.
func (m Mode) SessionSettable() bool { return m == ModeAsk || m == ModeNever }

// Valid reports whether d is allow, ask or deny.
func (d Decision) Valid() bool { return d == Allow || d == Ask || d == Deny }

func compileRule(i int, r Rule) (rule, error) {
	bad := func(field, format string, args ...any) (rule, error) {
		return rule{}, &RuleError{Index: i, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	cr := rule{Rule: r, index: i}
	switch r.Decision {
	case Allow, Ask, Deny:
	default:
		return bad("decision", "unknown decision %q (want allow, ask or deny)", string(r.Decision))
	}
	if msg, ok := checkApprovals(r); !ok {
		return bad("approvals", "%s", msg)
	}
	tool := strings.TrimSpace(r.Tool)
	if tool == "" {
		return bad("tool", "empty tool name")
	}
	if tool != r.Tool {
		return bad("tool", "tool name %q has surrounding spaces", r.Tool)
	}
	if r.Command != "" && r.Path != "" {
		return bad("path", "a rule has a command or a path, not both")
	}
	switch {
	case tool == ToolBash:
		if r.Path != "" {
			return bad("path", "bash rules match a command prefix, not a path")
		}
		if strings.TrimSpace(r.Command) == "" {
			return bad("command", "a bash rule needs a command prefix")
		}
		words, err := SimpleWords(r.Command)
		if err != nil {
			return bad("command", "prefix %q must be one simple command of literal words: %v", r.Command, err)
		}
		cr.prefix = words
		cr.name = fmt.Sprintf("rules[%d] %s bash %q", i, r.Decision, r.Command)
	case isFileTool(tool):
		if r.Command != "" {
			return bad("command", "%s rules match a path glob, not a command", tool)
		}
		if r.Path != "" {
			g, err := compileGlob(r.Path)
			if err != nil {
				return bad("path", "%v", err)
			}
			cr.glob = g
			cr.name = fmt.Sprintf("rules[%d] %s %s %q", i, r.Decision, tool, r.Path)
		} else {
			cr.name = fmt.Sprintf("rules[%d] %s %s", i, r.Decision, tool)
		}
	default:
		if r.Command != "" {
			return bad("command", "only bash rules have a command (tool %q)", tool)
		}
		if r.Path != "" {
			return bad("path", "only file tool rules (%s, %s, %s, %s) have a path (tool %q)",
				ToolReadFile, ToolWriteFile, ToolEditFile, ToolListFiles, tool)
		}
		cr.name = fmt.Sprintf("rules[%d] %s %s", i, r.Decision, tool)
	}
	return cr, nil
}

// failedReading is why a call whose reading failed asks.
const failedReading = "askops failed reading this call (an internal error)"

// decideSafely is decide, with a reading that fails (a bug: a panic on a
// command nobody foresaw) ending in ask: the command is never allowed, a
// person sees why, and the process that asked (a hook, a serve, a run)
// goes on. FuzzDifferential found such a panic once (git checkout alone).
func (e *Engine) decideSafely(ctx context.Context, c Call, mode Mode, grantErr *error) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("the policy failed reading a call; asking", "tool", c.Tool, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			v = Verdict{Decision: Ask, Dangerous: true, Unread: []string{failedReading},
				Reason: failedReading + ", so a person must decide"}
		}
	}()
	return e.decide(ctx, c, mode, grantErr)
}

// Evaluate decides one call. It never fails: any doubt is ask (or deny).
func (e *Engine) Evaluate(ctx context.Context, c Call) Verdict {
	mode := c.Mode
	if mode == "" {
		mode = e.mode
	}
	script := mode == ModeScript
	if script {
		mode = ModeAsk
	}
	if !validMode(mode) {
		return Verdict{Decision: Deny, Reason: fmt.Sprintf("unknown session mode %q: refusing every call until it is fixed", mode)}
	}
	var grantErr error
	v := e.decideSafely(ctx, c, mode, &grantErr)
	if script && v.Decision == Allow && v.Grant == "" {
		v = Verdict{Decision: Ask, Reason: "a script asked for a human (bot ask)"}
	}
	if c.Unread != "" && v.Decision == Allow {
		v = Verdict{Decision: Ask, Reason: c.Unread + "; the command alone: " + v.Reason}
	}
	if grantErr != nil && v.Decision != Allow {
		v.Reason += " (grants could not be checked, so none was used: " + clip(grantErr.Error(), 200) + ")"
	}
	if v.Decision == Ask && mode == ModeNever {
		v.Decision = Deny
		v.Reason = "mode never: " + v.Reason + " — this would need a human; no one is asked in this session"
	}
	return v
}

func (e *Engine) decide(ctx context.Context, c Call, mode Mode, grantErr *error) Verdict {
	switch {
	case c.Tool == ToolBash:
		return e.decideBash(ctx, c, mode, grantErr)
	case isFileTool(c.Tool):
		return e.decideFileCall(ctx, c, mode, grantErr)
	case c.Tool == "":
		return Verdict{Decision: Ask, Reason: "the call names no tool"}
	case c.Tool == ToolNetworkAccess:
		bash := c
		bash.Tool, bash.Safety = ToolBash, SideEffect
		return strictest(e.decideTool(ctx, c, mode, grantErr), e.decideBash(ctx, bash, mode, grantErr))
	}
	return e.decideTool(ctx, c, mode, grantErr)
}

// decideTool decides a call of a tool that is neither bash nor a file
// tool (an MCP tool, network access) by its rules, grants and class.
func (e *Engine) decideTool(ctx context.Context, c Call, mode Mode, grantErr *error) Verdict {
	for _, r := range e.deny {
		if r.Tool == c.Tool {
			return Verdict{Decision: Deny, Rule: r.name, Reason: r.why("the rules deny " + c.Tool)}
		}
	}
	if mode == ModeFull {
		return Verdict{Decision: Allow, Reason: "mode full", ByMode: true}
	}
	if q, ok := e.toolQuorum(c.Tool); ok { // before grants: see quorum.go
		return quorumVerdict(q, fmt.Sprintf("the rules need %d approvals before %s", q.Approvals, c.Tool))
	}
	if v, ok := e.granted(ctx, c, grantErr); ok {
		return v
	}
	for _, r := range e.ask {
		if r.Tool == c.Tool {
			return Verdict{Decision: Ask, Rule: r.name, Reason: r.why("the rules ask before " + c.Tool)}
		}
	}
	for _, r := range e.allow {
		if r.Tool == c.Tool {
			return Verdict{Decision: Allow, Rule: r.name, Reason: r.why("the rules allow " + c.Tool)}
		}
	}
	return e.bySafety(c, "")
}

// why is the rule's own reason, with what it matched when that helps an
// approver; the generated text when the rule has none.
func (r rule) why(generated string) string {
	if r.Reason == "" {
		return generated
	}
	return r.Reason + " (" + generated + ")"
}

// granted asks the grant checker. A call without a session is still
// checked: standing grants cover every call, and the checker answers an
// empty session id with standing grants only. An error is logged, kept for
// the reason, and means no grant: a broken store never allows anything.
func (e *Engine) granted(ctx context.Context, c Call, grantErr *error) (Verdict, bool) {
	if e.grants == nil {
		return Verdict{}, false
	}
	g, ok, err := e.grants.GrantFor(ctx, c.SessionID, c)
	if err != nil {
		e.log.WarnContext(ctx, "policy: grant check failed; treating as no grant", "session", c.SessionID, "tool", c.Tool, "err", err)
		*grantErr = err
		return Verdict{}, false
	}
	if !ok {
		return Verdict{}, false
	}
	return Verdict{Decision: Allow, Grant: g, Reason: "a grant covers this call (" + g + ")"}, true
}

func (e *Engine) bySafety(c Call, extra string) Verdict {
	switch c.Safety {
	case ReadOnly:
		return Verdict{Decision: Allow, Reason: c.Tool + " only reads"}
	case SideEffect:
		return Verdict{Decision: Ask, Reason: joinWhy("no rule allows this "+c.Tool+" call and it has side effects", extra)}
	default:
		return Verdict{Decision: Ask, Reason: joinWhy("no rule allows this "+c.Tool+" call and its effects are not declared", extra)}
	}
}

func joinWhy(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// MaxCommandBytes is the longest bash command the policy checks; a longer
// one is denied.
const MaxCommandBytes = 64 << 10

func (e *Engine) decideBash(ctx context.Context, c Call, mode Mode, grantErr *error) (v Verdict) {
	ws := c.Workspace
	if ws != "" {
		ws = path.Clean(ws)
	}
	cwd := c.Cwd
	if cwd != "" {
		cwd = path.Clean(cwd)
	}
	if len(c.Command) > MaxCommandBytes {
		// Parsing cost grows with nesting (80 KB of "(" takes over a
		// second), and no rule could be checked in a bounded time: fail
		// closed, whatever the mode.
		return Verdict{Decision: Deny, Reason: fmt.Sprintf("the command is %d bytes, over the %d the policy checks; write long content with write_file instead", len(c.Command), MaxCommandBytes)}
	}
	an := analyzeCommand(c.Command, cwd, ws, e.protected)
	unsafe := unsafeCommand(c.Command, an, cwd, ws, e.protected)
	defer func() {
		if v.Decision != Allow { // read for whoever is shown the call: an allow shows none
			v.Reading = readingOf(an, ws)
		}
	}()
	quorum, quorumWhy, hasQuorum := e.bashQuorum(an, ws)
	if hasQuorum { // every ask below carries it: see quorum.go
		defer func() { v = withQuorum(v, quorum) }()
	}

	// 1. A deny rule matching any simple command anywhere.
	for _, r := range e.deny {
		if r.Tool != ToolBash {
			continue
		}
		for _, s := range an.cmds {
			if couldMatch(r.prefix, s.words, true) {
				return Verdict{Decision: Deny, Rule: r.name, Dangerous: len(an.dangers) > 0,
					Reason: r.why(fmt.Sprintf("denied by rule: %q matches %q", r.Command, s.String()))}
			}
		}
	}
	// A file the command writes is a write_file call on it.
	for _, t := range an.writes {
		if r, ok := e.writeRule(e.deny, ws, t); ok {
			return Verdict{Decision: Deny, Rule: r.name, Dangerous: len(an.dangers) > 0,
				Reason: r.why(fmt.Sprintf("denied by rule: the command writes %s", shownPath(t.shown)))}
		}
	}
	// And so is every file it writes under a tree (writeTreeVerdict).
	if v, ok := e.writeTreeVerdict(ws, an, Deny, c.Resolved); ok {
		v.Dangerous = len(an.dangers) > 0
		return v
	}
	// A file the command may read is a read_file call on it.
	if v, ok := e.readVerdict(e.deny, ws, an, Deny); ok {
		v.Dangerous = len(an.dangers) > 0
		return v
	}
	// And so is every file it may read without naming it (unnamed.go).
	if v, ok := e.treeVerdict(e.deny, ws, an, Deny, c.Resolved); ok {
		v.Dangerous = len(an.dangers) > 0
		return v
	}
	if v, ok := e.linkedRead(ws, an); ok {
		v.Dangerous = len(an.dangers) > 0
		return v
	}
	if v, ok := e.treeLinked(ws, an, c.Resolved); ok {
		v.Dangerous = len(an.dangers) > 0
		return v
	}
	// A file named by a program that may write it: asked, not denied
	// (every deny above stands first).
	for _, t := range an.maybeWrites {
		if r, ok := e.writeRule(e.deny, ws, t); ok {
			return Verdict{Decision: Ask, Rule: r.name, Dangerous: len(an.dangers) > 0,
				Reason: r.why(fmt.Sprintf("%s may write %s, which a rule denies (askops does not know which of its options write a file)", t.how, shownPath(t.shown)))}
		}
	}
	if v, ok := e.unjudgedVerdict(an); ok {
		v.Dangerous = len(an.dangers) > 0
		return v
	}
	if unsafe != "" {
		return Verdict{Decision: Ask, Dangerous: len(an.dangers) > 0, Reason: unsafe}
	}
	if an.parseErr != nil {
		return Verdict{Decision: Ask, Reason: "the command does not parse as shell (" + an.parseErr.Error() + "), so it cannot be checked"}
	}
	// 2. Built-in dangers ask whatever rules, grants or mode say, and so
	// does a reading that is not complete: what the policy cannot read is
	// never an allow.
	if len(an.dangers) > 0 || len(an.unread) > 0 {
		return Verdict{Decision: Ask, Dangerous: true, Unread: an.unread, Reason: dangerReason(an)}
	}
	// 3. Mode full.
	if mode == ModeFull {
		return Verdict{Decision: Allow, Reason: "mode full", ByMode: true}
	}
	// 4. A grant, unless the command runs code no grant's approver saw
	// (a prefix grant on git push does not cover git push out/r), or a
	// rule needs several approvers (no one person's grant covers it).
	if hasQuorum {
		return quorumVerdict(quorum, quorumWhy)
	}
	if an.ungrantable == "" {
		if v, ok := e.granted(ctx, c, grantErr); ok {
			return v
		}
	}
	// 5. An ask rule matching any simple command.
	for _, r := range e.ask {
		if r.Tool != ToolBash {
			continue
		}
		for _, s := range an.cmds {
			if couldMatch(r.prefix, s.words, true) {
				return Verdict{Decision: Ask, Rule: r.name,
					Reason: r.why(fmt.Sprintf("the rules ask before %q (matches %q)", r.Command, s.String()))}
			}
		}
	}
	for _, t := range an.writes {
		if r, ok := e.writeRule(e.ask, ws, t); ok {
			return Verdict{Decision: Ask, Rule: r.name,
				Reason: r.why(fmt.Sprintf("the rules ask before write_file of %s (the command writes it)", shownPath(t.shown)))}
		}
	}
	if v, ok := e.writeTreeVerdict(ws, an, Ask, c.Resolved); ok {
		return v
	}
	for _, t := range an.maybeWrites {
		if r, ok := e.writeRule(e.ask, ws, t); ok {
			return Verdict{Decision: Ask, Rule: r.name,
				Reason: r.why(fmt.Sprintf("the rules ask before write_file of %s (%s may write it)", shownPath(t.shown), t.how))}
		}
	}
	if v, ok := e.readVerdict(e.ask, ws, an, Ask); ok {
		return v
	}
	if v, ok := e.treeVerdict(e.ask, ws, an, Ask, c.Resolved); ok {
		return v
	}
	// 6. Allow rules covering every simple command: those written in the
	// command and those it runs (find -exec, env, xargs, bash -c, …), which
	// an allow rule for the outer program does not cover.
	uncovered := an.uncoverable
	var used []string
	if uncovered == "" {
		for _, s := range an.cmds {
			if s.guess || s.transport {
				continue // a transport is its carrier's (simple.transport)
			}
			r, ok := e.allowFor(s.words)
			if !ok {
				uncovered = fmt.Sprintf("no allow rule covers %q", s.String())
				break
			}
			if !contains(used, r.name) {
				used = append(used, r.name)
			}
		}
		if uncovered == "" && len(used) > 0 {
			uncovered = e.writesNotAllowed(ws, an)
		}
		if uncovered == "" && len(used) > 0 {
			if why := workspaceOnPath(an.cmds, c.Cwd, ws); why != "" {
				uncovered = why + ", so the rule naming it does not cover the workspace's program"
			}
		}
		if uncovered == "" && len(used) > 0 {
			return Verdict{Decision: Allow, Rule: strings.Join(used, "; "), Reason: "allowed by rules: every command is covered"}
		}
		if uncovered == "" {
			uncovered = "no command found"
		}
	} else {
		uncovered = "allow rules cannot apply: the command has " + uncovered
	}
	// 7. Safety: a shell command is never "read-only" by declaration; only
	// rules decide that.
	return Verdict{Decision: Ask, Reason: uncovered}
}

// dangerReason says what made a command a danger: the built-in dangers,
// then what the reading could not see.
func dangerReason(an *analysis) string {
	var parts []string
	if len(an.dangers) > 0 {
		parts = append(parts, "dangerous: "+strings.Join(an.dangers, "; "))
	}
	if len(an.unread) > 0 {
		parts = append(parts, "runs code the policy cannot read: "+strings.Join(an.unread, "; "))
	}
	return strings.Join(parts, "; ")
}

// allowFor finds an allow rule whose prefix covers the literal words.
func (e *Engine) allowFor(ws []word) (rule, bool) {
	for _, w := range ws {
		if !w.ok {
			return rule{}, false
		}
	}
	for _, r := range e.allow {
		if r.Tool != ToolBash || len(r.prefix) > len(ws) {
			continue
		}
		match := true
		for i, p := range r.prefix {
			if ws[i].lit != p {
				match = false
				break
			}
		}
		if match {
			return r, true
		}
	}
	return rule{}, false
}

// couldMatch reports whether the command words could, once the shell
// expands them, start with the rule's prefix. The command name is also
// compared by base name (/bin/rm is rm).
func couldMatch(prefix []string, ws []word, first bool) bool {
	if len(prefix) == 0 {
		return true
	}
	if len(ws) == 0 {
		return false
	}
	w := ws[0]
	l := w.loose
	p := prefix[0]
	if first && !strings.Contains(p, "/") {
		if i := strings.LastIndexByte(l, '/'); i >= 0 && i < len(l)-1 {
			l = l[i+1:]
		}
	}
	if w.splat {
		// May become several words, or none.
		head := l
		if i := strings.Index(head, anyText); i >= 0 {
			head = head[:i] + anyText
		}
		if globMatchText(head, p) {
			return true
		}
		if strings.ReplaceAll(l, anyText, "") == "" && couldMatch(prefix, ws[1:], first) {
			return true
		}
		return false
	}
	if !globMatchText(l, p) {
		return false
	}
	return couldMatch(prefix[1:], ws[1:], false)
}

func (e *Engine) decideFile(ctx context.Context, c Call, mode Mode, grantErr *error) Verdict {
	ws := c.Workspace
	abs, rel, inside := resolveFile(c.Path, c.Cwd, ws)
	for _, r := range e.deny {
		if r.Tool == c.Tool && r.matchesPath(abs, rel, inside) {
			return Verdict{Decision: Deny, Rule: r.name, Reason: r.why(fmt.Sprintf("denied by rule: %s of %s", c.Tool, shownPath(c.Path)))}
		}
	}
	if mode == ModeFull {
		return Verdict{Decision: Allow, Reason: "mode full", ByMode: true}
	}
	if q, ok := e.fileQuorum(c, abs, rel, inside); ok { // before grants: see quorum.go
		return quorumVerdict(q, fmt.Sprintf("the rules need %d approvals before %s of %s", q.Approvals, c.Tool, shownPath(c.Path)))
	}
	if v, ok := e.granted(ctx, c, grantErr); ok {
		return v
	}
	for _, r := range e.ask {
		if r.Tool == c.Tool && r.matchesPath(abs, rel, inside) {
			return Verdict{Decision: Ask, Rule: r.name, Reason: r.why(fmt.Sprintf("the rules ask before %s of %s", c.Tool, shownPath(c.Path)))}
		}
	}
	if !inside {
		return Verdict{Decision: Ask, Reason: fmt.Sprintf("%s of %s: the path is outside the workspace", c.Tool, shownPath(c.Path))}
	}
	for _, r := range e.allow {
		if r.Tool == c.Tool && r.matchesPath(abs, rel, inside) {
			return Verdict{Decision: Allow, Rule: r.name, Reason: r.why(fmt.Sprintf("allowed by rule: %s of %s", c.Tool, shownPath(c.Path)))}
		}
	}
	return e.bySafety(c, "")
}

func shownPath(p string) string {
	if p == "" {
		return "the working directory"
	}
	return fmt.Sprintf("%q", clip(p, 200))
}

// resolveFile returns the absolute path, its workspace-relative form and
// whether it lies inside the workspace. Relative paths resolve against cwd,
// else the workspace.
func resolveFile(p, cwd, workspace string) (abs, rel string, inside bool) {
	if workspace == "" || !path.IsAbs(workspace) {
		return "", "", false
	}
	workspace = path.Clean(workspace)
	base := workspace
	if cwd != "" {
		if !path.IsAbs(cwd) {
			return "", "", false
		}
		base = path.Clean(cwd)
	}
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return "", "", false
	}
	abs = p
	if !path.IsAbs(abs) {
		abs = base + "/" + abs // not path.Join: it would clean "link/.." as text
	}
	abs = kernelCleanIn(abs, base, workspace)
	if !within(abs, workspace) {
		return abs, "", false
	}
	rel = strings.TrimPrefix(strings.TrimPrefix(abs, workspace), "/")
	if rel == "" {
		rel = "."
	}
	return abs, rel, true
}

// matchesPath: a rule without a path matches every call of its tool;
// relative globs match workspace-relative paths (inside only); absolute
// globs match absolute paths.
func (r rule) matchesPath(abs, rel string, inside bool) bool {
	if r.glob == "" {
		return true
	}
	if path.IsAbs(r.glob) {
		return abs != "" && globMatch(r.glob, abs)
	}
	if !inside {
		// "**/.env" still means any .env, wherever it is.
		return abs != "" && strings.HasPrefix(r.glob, "**/") && globMatch(r.glob, strings.TrimPrefix(abs, "/"))
	}
	return globMatch(r.glob, rel)
}
