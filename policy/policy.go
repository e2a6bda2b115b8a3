// Package policy decides whether one tool call may run: allow, ask a human,
// or deny, with the reason and the rule that matched.
//
// Shell commands are parsed (mvdan.cc/sh), never matched as text. Deny rules
// match if any simple command anywhere in the command matches; allow rules and
// grants apply only when every simple command is covered and nothing hides
// code from the analysis (substitutions, eval/source, interpreter here-docs,
// redirections outside the workspace).
//
// Engine.Evaluate applies, in order: a deny rule matching any simple command
// (even one that could only match once the shell expands a word) denies; a
// built-in dangerous command (rm -rf /, mkfs, dd to a disk, curl | sh, fork
// bombs, force pushes to protected branches, …) asks; mode full allows; a
// session or standing grant allows; an ask rule asks; allow rules covering
// every simple command allow; otherwise the tool's safety class decides
// (read-only allows; bash, side effects and unknown tools ask). Mode never
// turns any resulting ask into a deny. A command that does not parse is
// never allowed.
//
// Every door (askops' own agent, the hooks, the Ask API, bot ask, AAP)
// asks Evaluate once per call and puts what it knows of where the call
// runs into the Call (Resolved, Exact, Search; filecall.go): the verdict
// is whole, and no caller edits it or compares its Reason text.
package policy

import "context"

// Decision is the policy's verdict on one call.
type Decision string

const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// ToolNetworkAccess is a network approval (Codex's NetworkAccess, or a
// shell call that says it needs the network): judged as network access
// and as its Command, the stricter verdict standing, so an agent's words
// can only make a call stricter.
const ToolNetworkAccess = "network_access"

// Mode is how a session treats asks.
type Mode string

const (
	ModeAsk   Mode = "ask"   // default: ask a human
	ModeNever Mode = "never" // unattended: every ask becomes a deny, before any channel is tried
	ModeFull  Mode = "full"  // no asks; deny rules and built-in dangers still apply
	// ModeScript is how a script's own question is judged (bot ask): it
	// asked because it wants a human, so only a grant or a deny rule
	// answers without one; what rules, the tool's class or mode full would
	// allow asks all the same. Set per call or per engine, never in a
	// session or the config (Valid is false).
	ModeScript Mode = "script"
)

// Safety is a tool's class. The zero value is Unknown, which asks.
type Safety int

const (
	Unknown    Safety = iota // not declared: treated like a side effect
	ReadOnly                 // reads only: allowed unless a rule says otherwise
	SideEffect               // changes something: asks unless a rule or grant allows
)

// Call is one tool call as the policy sees it, with what the door that
// took it knows of where it runs (see filecall.go). The zero value of
// each fact is the strictest reading.
type Call struct {
	Tool   string
	Safety Safety
	// Command is, for bash, the command line; for ToolNetworkAccess, the
	// command that asks for the network (judged as bash too, the stricter
	// verdict standing).
	Command   string
	Path      string // for file tools: the path as given (relative to Cwd/Workspace, or absolute)
	Cwd       string // absolute working directory (inside Workspace)
	Workspace string // absolute workspace root
	SessionID string
	Mode      Mode // the session's mode; empty means the engine's default

	// Resolved says Path and Cwd were resolved on this machine, where the
	// files are (links followed): a Search lists the directory, and a
	// write may be allowed by a rule or grant. A write whose path was not
	// resolved (an HTTP hook, an API call) is allowed by mode full only:
	// a link could lead anywhere.
	Resolved bool
	// Exact says the file system the call's paths name takes them as
	// written: case-sensitive, "/" its only separator (askops' own agent
	// on Linux). Otherwise every reading another file system may give a
	// path is judged too (backslashes as separators, protected names in
	// any case, the workspace-relative path lower-cased), the strictest
	// standing.
	Exact bool
	// Search says a read_file call reads every file under Path whose base
	// name Glob accepts (a Grep), not Path alone; Glob "" is every file.
	Search bool
	Glob   string
	// Unread, when set, says what else the call sets that changes what
	// runs and the door could not read into the call (a shell tool's
	// workdir elsewhere, env, stdin, a field it does not know): the call
	// is never allowed, by a rule, a grant or mode full; a person decides
	// (and in mode never it is denied).
	Unread string
}

// Rule is one configured rule. Command applies to bash (a command prefix,
// matched word by word); Path to file tools (a glob relative to the workspace).
type Rule struct {
	Tool     string   `yaml:"tool" json:"tool"`
	Command  string   `yaml:"command,omitempty" json:"command,omitempty"`
	Path     string   `yaml:"path,omitempty" json:"path,omitempty"`
	Decision Decision `yaml:"decision" json:"decision"`
	Reason   string   `yaml:"reason,omitempty" json:"reason,omitempty"`
	// Approvals (ask rules only) is how many distinct people must approve
	// a call the rule matches; 0 or 1 means one. See quorum.go.
	Approvals int `yaml:"approvals,omitempty" json:"approvals,omitempty"`
}

// Verdict is the policy's answer with why.
type Verdict struct {
	Decision  Decision
	Reason    string // human text: why this decision
	Rule      string // the matched rule(s), e.g. `rules[2] deny bash "rm"`; several allow rules are joined by "; "; empty if none
	Grant     string // the grant that allowed the call, if any
	Dangerous bool   // a built-in dangerous command was found, or code the policy cannot read
	// Unread lists what the command can run that the policy could not
	// read (a value bash evaluates at run time, a script from a
	// descriptor); such a command is never allowed. Empty for other tools.
	Unread    []string
	Approvals int // for ask: how many distinct people must approve (0 or 1: one)
	// ByMode says mode full allowed the call, not a rule or a grant.
	ByMode bool
	// Reading is what the policy read of the command it judged (bash,
	// a network approval's command) when it asks or denies: the programs
	// and effects the approver is shown. Nil for other calls and allows.
	Reading *Reading
}

// GrantChecker reports whether a session or standing grant covers a call.
// An empty sessionID asks about standing grants only. The grants package
// satisfies it.
type GrantChecker interface {
	GrantFor(ctx context.Context, sessionID string, c Call) (grant string, ok bool, err error)
}
