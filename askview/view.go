package askview

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
)

// Kind is how a call is shown.
type Kind string

const (
	Command Kind = "command" // a shell command, as code, with the programs it runs
	Write   Kind = "write"   // a file write: the path and the new content
	Edit    Kind = "edit"    // a file edit: the path and a -/+ diff
	Other   Kind = "other"   // anything else: the arguments as JSON
)

// View is everything a person is shown of an Ask before deciding. Every
// string has been through redact; none is escaped or cut for a medium
// yet: each surface words and formats it (Slack's Block Kit within its
// limits, the console's HTML).
type View struct {
	Kind Kind
	Tool string

	Command string // Command: the command
	// Programs (Command) is every program the command runs, from the
	// policy's own parse of the whole command, worked out when the Ask was
	// made (pending.Shown); MorePrograms counts those left out of it.
	Programs     []string
	MorePrograms int
	Cwd          string // Command: the cwd argument, when it differs from the Ask's

	Path    string // Write, Edit
	Content string // Write: the new content
	// ContentLines is how many lines Content has (a last line without a
	// newline counts).
	ContentLines int
	// Diff (Edit) is how the old text becomes the new (LineDiff);
	// Removed and Added are its "- " and "+ " lines apart, each ending in
	// a newline, so a surface that cannot show the whole diff can preview
	// both sides.
	Diff, Removed, Added string

	Arguments string // Other: the arguments as indented JSON, or as given

	// Lines is how many lines the whole shown text (Text) has, before any
	// cut; Cut how many runes of it were left out before redaction (Of's
	// limit).
	Lines, Cut int

	// LookAlikes are the characters of the whole call that may not be
	// what they look like.
	LookAlikes []LookAlike

	// Session is the session as a person knows it ("this Claude Code
	// session in ~/src/api"); "" when the Ask does not say. SessionStarted
	// is when askops first saw it, zero when the Ask does not say (see
	// SessionText for its words).
	Session        string
	SessionStarted time.Time

	// Needed is how many distinct people must approve; Counted how many
	// approvals count so far; Tally the count in words ("1 of 2
	// approvals: U_ANA"), "" for an Ask one approval decides.
	Needed, Counted int
	Tally           string

	// Followups are the reminder and escalations already tried, oldest
	// first (see Followup).
	Followups []Followup

	Created, Deadline time.Time

	// Effects are what the call does, one plain line per class
	// (pending.Effect), shown before anything else.
	Effects []pending.Effect

	// Risky are the words that made the call ask (see Risky): a surface
	// that folds a long call keeps them in sight.
	Risky Risky
}

// Text is what the call's code shows: the command, the content written,
// the diff or the arguments.
func (v View) Text() string {
	switch v.Kind {
	case Command:
		return v.Command
	case Write:
		return v.Content
	case Edit:
		return v.Diff
	}
	return v.Arguments
}

// Left is how long until the deadline at now (0 once it passed).
func (v View) Left(now time.Time) time.Duration {
	return max(0, v.Deadline.Sub(now))
}

// What an Ask stores of its programs and its session's name, so that its
// record stays within its budget (pending's TestRedisBytesPerPendingAsk):
// each program in at most maxProgramRunes (a surface shows 64), at most
// maxProgramBytes of them (the rest are counted), the name in at most
// maxSessionRunes. What is cut ends in cutMark.
const (
	maxProgramRunes = 65
	maxProgramBytes = 400
	maxSessionRunes = 120
	cutMark         = "…"
)

// Of is a's view. limit > 0 bounds, in runes, how much of a command, file
// content or argument string is redacted and kept (a surface shows far
// less; redacting 100 KB to show 3 KB would be waste), counting what is
// left out in Cut. The cut is safe: any secret that starts in what is
// shown ends long before limit, and the multi-line rule (PEM) also matches
// a block cut short. An edit is always read whole: its diff needs both
// sides.
//
// The exact call is what will run, so it is shown rather than the agent's
// Summary; the Summary stands in only when a call that describes nothing
// has arguments that cannot be read.
func Of(a pending.Ask, limit int) (v View) {
	v = View{
		Tool: a.Tool, LookAlikes: Call(a),
		Needed: a.Needed(), Counted: a.Counted(), Tally: a.Tally(),
		Created: a.CreatedAt, Deadline: a.Deadline, Followups: followups(a),
	}
	v.Session, v.SessionStarted = Session(a)
	defer func() {
		// What the call does, first on every surface.
		v.Effects = effectsOf(a, v.Kind == Command, v.Programs, v.MorePrograms, v.LookAlikes)
		v.Risky = riskyOf(a.Reason, a.Rule, v.Effects)
	}()
	head := func(s string) string {
		if limit <= 0 {
			return redact.Secrets(s)
		}
		n := utf8.RuneCountInString(s)
		if n <= limit {
			return redact.Secrets(s)
		}
		v.Cut += n - limit
		return redact.Secrets(s[:ByteOffset(s, limit)])
	}
	switch c := a.Describe(); c.Kind {
	case pending.CallCommand:
		v.Kind = Command
		v.Command = head(c.Command)
		v.Lines = strings.Count(c.Command, "\n") + 1
		if a.Shown != nil {
			v.Programs, v.MorePrograms = a.Shown.Programs, a.Shown.MorePrograms
		} else {
			sh := ReadHere(a.Request)
			v.Programs, v.MorePrograms = sh.Programs, sh.MorePrograms
		}
		if c.Cwd != "" && c.Cwd != a.Cwd {
			// Where it runs is part of what is approved.
			v.Cwd = redactHead(c.Cwd)
		}
		return v
	case pending.CallWrite:
		v.Kind = Write
		v.Path = redactHead(c.Path)
		v.Content = head(c.Content)
		v.Lines = strings.Count(c.Content, "\n") + 1
		v.ContentLines = strings.Count(c.Content, "\n")
		if c.Content != "" && !strings.HasSuffix(c.Content, "\n") {
			v.ContentLines++
		}
		return v
	case pending.CallEdit:
		v.Kind = Edit
		v.Path = redactHead(c.Path)
		v.Diff = LineDiff(redact.Secrets(c.Old), redact.Secrets(c.New))
		v.Lines = strings.Count(v.Diff, "\n") + 1
		for l := range strings.SplitSeq(v.Diff, "\n") {
			switch {
			case strings.HasPrefix(l, "- "):
				v.Removed += l + "\n"
			case strings.HasPrefix(l, "+ "):
				v.Added += l + "\n"
			}
		}
		return v
	}
	// A call that describes nothing is shown as its arguments.
	v.Kind = Other
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(a.Args))
	dec.UseNumber()
	if a.Args == "" || dec.Decode(&args) != nil || args == nil {
		v.Arguments = head(a.Args)
		if strings.TrimSpace(v.Arguments) == "" {
			v.Cut = 0
			v.Arguments = head(a.Summary)
		}
		v.Lines = strings.Count(v.Arguments, "\n") + 1
		return v
	}
	v.Arguments = ArgumentsText(redact.JSONValue(args, head))
	v.Lines = strings.Count(v.Arguments, "\n") + 1
	return v
}

// Prepare is what is shown of req that is worked out once, when its Ask
// is made, and stored with it (pending.Shown): what the call does (its
// effects, one line per class) and the programs its command runs, from
// read, the policy's reading of the command as it was judged
// (policy.Verdict.Reading): never a second parse, so the approver sees
// what was judged; and the session's name, cut with marks (the programs
// left out are counted), and its start, in seconds. A command call
// without a reading says its code is unknown. The session offer is the
// caller's to add (approval decides it).
func Prepare(req pending.Request, read *policy.Reading) pending.Shown {
	var s pending.Shown
	c := req.Describe()
	if c.Kind == pending.CallCommand && read == nil {
		read = &policy.Reading{Programs: []string{policy.UnknownCode},
			Effects: policy.Effects{Unread: []string{"the policy's reading of the command did not reach this Ask"}}}
	}
	red := redactionOf(c, hiddenOf(req))
	if c.Kind == pending.CallCommand {
		s.Programs, s.MorePrograms = programs(read.Programs, red.secrets)
	}
	s.Effects = effects(req, read, red)
	s.Session = cutRunes(req.SessionName, maxSessionRunes)
	if s.Session != "" && !req.SessionStarted.IsZero() && req.SessionStarted.Unix() > 0 {
		s.Started = req.SessionStarted.Unix()
	}
	return s
}

// programs is the programs of a reading as an approver may see them (each
// through shownItem), cut with marks.
func programs(all, secrets []string) ([]string, int) {
	var out []string
	used := 0
	for i, p := range all {
		p = cutRunes(shownItem(p, secrets), maxProgramRunes)
		if used+len(p) > maxProgramBytes {
			return out, len(all) - i
		}
		out = append(out, p)
		used += len(p)
	}
	return out, 0
}

// ReadHere is Prepare with the policy's reading of req's command made
// here, for what no verdict came with: an Ask the policy allowed at once
// (only a verdict that asks or denies carries its reading), a request
// built without the policy (approval.Core.Prepare's when its door set no
// Shown), or an Ask recorded before Shown existed — that case goes with
// Remove in v0.2.0, when no such record is left waiting or in the history
// a surface shows. Read from the redacted command, as before the reading travelled
// with the verdict; every door of this release prepares from its verdict.
func ReadHere(req pending.Request) pending.Shown {
	c := req.Describe()
	if c.Kind != pending.CallCommand {
		return Prepare(req, nil)
	}
	command := redact.Quoting(c.Command, hiddenOf(req))
	cwd := req.Cwd
	if c.Cwd != "" {
		cwd = c.Cwd
	}
	return Prepare(req, &policy.Reading{Programs: policy.Programs(command), Effects: policy.CommandEffects(command, cwd, req.Workspace)})
}

// cutRunes is s in at most n runes, ending in cutMark when it was cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return s[:ByteOffset(s, n-1)] + cutMark
}

// redactHead redacts what a path or directory line can show: far more
// than any surface shows of one, with the margin that lets a secret that
// starts in the shown part be matched whole.
func redactHead(s string) string {
	const limit = 600 + 4096
	if len(s) > limit {
		s = s[:ByteOffset(s, limit)]
	}
	return redact.Secrets(s)
}

// ByteOffset is the byte offset of s's n-th rune (len(s) past the end):
// where a cut after n runes falls. Slack's renderer cuts with it too.
func ByteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// GrantLives are the time-boxed choices offered beside "Approve for
// session" on a: those decided when it was made, or, on an Ask recorded
// before they were stored, configured.
func GrantLives(a pending.Ask, configured []time.Duration) []time.Duration {
	if a.Shown == nil {
		return configured
	}
	var out []time.Duration
	for _, s := range a.Shown.GrantLives {
		out = append(out, time.Duration(s)*time.Second)
	}
	return out
}
