package console

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/durationtext"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/redact"
)

// MaxDenyReason caps a typed deny reason, in characters, as Slack's modal
// does: the reason goes to the model and into the audit trail.
const MaxDenyReason = 2000

// maxShown bounds, in characters, each piece of a call shown on the page;
// more is cut with a count, never dropped silently.
const maxShown = 20000

// callView is an Ask's call as the page shows it: the Ask's view
// (askview.Of, as the Slack message shows it), with invisible and
// direction-changing characters made visible. Every string here is plain
// text; the template escapes it.
type callView struct {
	Kind         string   // "command", "write", "edit" or "other"
	Command      string   // command
	Programs     []string // command: every program it runs, from the policy's own parse
	MorePrograms int      // command: programs the Ask's record left out
	CwdArg       string   // command: the cwd argument, when it differs from the Ask's
	Path         string   // write, edit
	Body         string   // write: content; other: JSON
	Lines        int      // write: lines of content
	// Diff (edit) is how the old text becomes the new, line by line, as
	// the Slack message shows it.
	Diff   []diffLine
	Cut    int // characters left out
	Hidden int // invisible or look-alike-prone characters made visible
	// LookAlikes are the characters of the call that may not be what they
	// look like, as the Slack message lists them (askview.Call), at most
	// maxLookAlikes; MoreLookAlikes counts the rest.
	LookAlikes     []lookAlikeLine
	MoreLookAlikes int
	// Code is the command, the content written or the arguments as the
	// card shows them, folded where long (foldText); Row the command as a
	// history row shows it.
	Code, Row codeText
}

// effectLine is one line of what a call does: its kind (the line's
// class on the page) and its words.
type effectLine struct{ Kind, Text string }

// diffLine is one line of an edit's diff: Op is "-" (removed), "+"
// (added) or " " (unchanged context, or "…" for a run left out).
type diffLine struct{ Op, Text string }

// lookAlikeLine is one look-alike finding, as plain text.
type lookAlikeLine struct{ Where, What, Word string }

// maxLookAlikes is how many findings a card lists, as Slack's modal does.
const maxLookAlikes = 10

// viewLookAlikes words askview's findings for the page: the word each is
// in redacted and with invisible characters made visible, like the call.
func viewLookAlikes(found []askview.LookAlike) ([]lookAlikeLine, int) {
	var out []lookAlikeLine
	for i, f := range found {
		if i == maxLookAlikes {
			return out, len(found) - maxLookAlikes
		}
		word := redact.Secrets(f.Word)
		if r := []rune(word); len(r) > 80 {
			word = string(r[:80]) + "…"
		}
		word = oneLine(word)
		what, _ := markInvisible(f.What)
		out = append(out, lookAlikeLine{Where: f.Where(), What: what, Word: word})
	}
	return out, 0
}

// viewCall words av, a's view (askview.Of), for the page.
func viewCall(av askview.View) callView {
	v := callView{Kind: string(av.Kind), Cut: av.Cut, MorePrograms: av.MorePrograms, Lines: av.ContentLines}
	v.LookAlikes, v.MoreLookAlikes = viewLookAlikes(av.LookAlikes)
	show := func(s string) string {
		if n := utf8.RuneCountInString(s); n > maxShown {
			v.Cut += n - maxShown
			s = string([]rune(s)[:maxShown])
		}
		s, hidden := markInvisible(s)
		v.Hidden += hidden
		return s
	}
	switch av.Kind {
	case askview.Command:
		v.Command = show(av.Command)
		for _, p := range av.Programs {
			v.Programs = append(v.Programs, show(p))
		}
		v.CwdArg = oneLine(show(av.Cwd))
	case askview.Write:
		v.Path, v.Body = oneLine(show(av.Path)), show(av.Content)
	case askview.Edit:
		v.Path = oneLine(show(av.Path))
		for l := range strings.SplitSeq(show(av.Diff), "\n") {
			op, text := " ", l
			if len(l) >= 2 { // "- ", "+ " or "  ", then the line
				op, text = l[:1], l[2:]
			}
			v.Diff = append(v.Diff, diffLine{Op: op, Text: text})
		}
	default:
		v.Body = show(av.Arguments)
	}
	switch {
	case v.Command != "":
		v.Code = foldText(v.Command, av.Risky, cardFold)
		v.Row = foldText(v.Command, av.Risky, rowFold)
	case v.Body != "":
		v.Code = foldText(v.Body, av.Risky, cardFold)
	}
	return v
}

// markInvisible replaces characters that show as nothing, break a line
// or reorder the text around them with a visible ⟨U+XXXX⟩, so what the
// approver reads is what will run; n counts them. They are the characters
// the Slack message shows as \u escapes (slackui's visibleRune): format
// characters such as U+202E and U+200B, controls other than newline and
// tab, the line and paragraph separators U+2028 and U+2029 (a browser
// breaks the line at them), blank fillers (U+3164, U+2800, …), the
// combining grapheme joiner and spaces other than the ASCII one.
func markInvisible(s string) (string, int) {
	hidden := func(r rune) bool {
		switch {
		case r == '\n' || r == '\t':
			return false
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r),
			r == '\u2028', r == '\u2029',
			r == '\u3164', r == '\u115f', r == '\u1160', r == '\uffa0', r == '\u2800', r == '\u034f',
			r != ' ' && unicode.Is(unicode.Zs, r):
			return true
		}
		return false
	}
	if !strings.ContainsFunc(s, hidden) {
		return s, 0
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			n++
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), n
}

// oneLine is s, made visible by markInvisible, for a field shown on one
// line in a <code> (a directory, a label, a run, a rule, a path, a grant's
// scope): the page keeps the line breaks of a <code> (white-space:
// pre-wrap), so a newline is shown as ⏎ and a tab as a space, as the
// Slack message's code spans show them. Otherwise the agent's label or
// directory could draw lines of their own on the card ("Approved by
// console:dana").
func oneLine(s string) string {
	s, _ = markInvisible(s)
	return strings.NewReplacer("\n", "⏎", "\t", " ").Replace(s)
}

// askView is one Ask as a card on the page.
type askView struct {
	ID   string
	Tool string
	// Effects are what the call does, one plain line per class
	// (askview.Effects), shown first.
	Effects []effectLine
	Call    callView

	Summary, Reason, Rule   string
	Workspace, Cwd          string
	RunID, StartedBy, Label string
	SessionID               string
	Session                 string // the session as a person knows it
	// Followups is the reminder and escalations already tried, in words
	// ("reminded after 5m; escalated to U1, group S1 after 10m"); "" when
	// none was.
	Followups string
	// SessionStarted is when it started (zero: unknown), StartedText
	// that in UTC for the page without its script, and StartedClock
	// whether the time of day alone tells it (askview.TimeOnly).
	SessionStarted            time.Time
	StartedText               string
	StartedClock              bool
	Created, Deadline         time.Time
	Left                      string        // until the deadline, at render
	Scope                     string        // "Approve for session" grants this; "" offers none
	GrantChoices              []grantChoice // "Approve for 15 min" and the like, with Scope
	Outcome                   string
	DecidedBy, DecisionReason string
	DecidedAt                 time.Time
	Known                     bool // the store still has the record (history)
}

func (c *Console) viewAsk(a pending.Ask, now time.Time) askView {
	text := func(s string) string { s, _ = markInvisible(redact.Secrets(s)); return s }
	line := func(s string) string { return oneLine(redact.Secrets(s)) }
	av := askview.Of(a, 0)
	v := askView{
		ID: a.ID, Tool: text(a.Tool), Call: viewCall(av), Known: true, Session: text(av.Session),
		Reason: text(a.Reason), Rule: line(a.Rule),
		Workspace: line(a.Workspace), Cwd: line(a.Cwd),
		RunID: line(a.RunID), StartedBy: text(a.StartedBy), Label: line(a.Label), SessionID: line(a.SessionID),
		Created: a.CreatedAt, Deadline: a.Deadline,
		DecidedBy: text(a.DecidedBy), DecisionReason: text(a.DecisionReason), DecidedAt: a.DecidedAt,
		Followups: followupsText(av.Followups),
	}
	for _, e := range av.Effects {
		t, _ := markInvisible(e.Text)
		v.Effects = append(v.Effects, effectLine{Kind: e.Kind, Text: t})
	}
	if !av.SessionStarted.IsZero() {
		v.SessionStarted = av.SessionStarted
		v.StartedText = askview.StartedText(av.SessionStarted, a.CreatedAt)
		v.StartedClock = askview.TimeOnly(av.SessionStarted, a.CreatedAt)
	}
	if v.Call.Kind == "other" && a.Summary != "" {
		v.Summary = text(a.Summary)
	}
	if o, done := a.Outcome(); done {
		v.Outcome = string(o)
	} else {
		v.Scope = oneLine(c.cfg.ScopeText(a))
		if v.Scope != "" {
			v.GrantChoices = c.grantChoices(askview.GrantLives(a, c.cfg.GrantDurations))
		}
		if left := a.Deadline.Sub(now); left > 0 {
			v.Left = left.Round(time.Second).String()
		} else {
			v.Left = "now"
		}
	}
	return v
}

// followupsText words what was tried on an Ask for the page, naming
// people by id as the page names the decider, a group as "group S1".
func followupsText(fs []askview.Followup) string {
	var tried []string
	for _, f := range fs {
		after := " after " + durationtext.Short(f.After)
		switch f.Did {
		case pending.EventReminded:
			tried = append(tried, "reminded"+after)
		case pending.EventEscalated:
			var to []string
			for _, u := range f.Users {
				u, _ = markInvisible(u)
				to = append(to, u)
			}
			for _, g := range f.Groups {
				g, _ = markInvisible(g)
				to = append(to, "group "+g)
			}
			tried = append(tried, "escalated to "+strings.Join(to, ", ")+after)
		}
	}
	return strings.Join(tried, "; ")
}

// grantView is one grant in the list.
type grantView struct {
	ID, SessionID, Scope, By string
	// Session is SessionID as shown (oneLine); SessionID is what Revoke
	// sends back.
	Session          string
	Created, Expires time.Time
	Standing         bool
}

func viewGrant(g grants.Grant) grantView {
	text := func(s string) string { s, _ = markInvisible(s); return s }
	return grantView{
		ID: g.ID, SessionID: g.SessionID, Session: oneLine(g.SessionID), Scope: oneLine(g.Scope.String()), By: text(g.By),
		Created: g.CreatedAt, Expires: g.ExpiresAt, Standing: g.Standing(),
	}
}

// alreadyDecided tells a late click how the Ask ended and who ended it,
// as Slack's ephemeral reply does.
func alreadyDecided(a pending.Ask) string {
	return askview.LateClickReply(a, askview.Wording{
		Person: func(who string) string {
			if who == "" {
				return "someone"
			}
			return who
		},
		Time:   func(at time.Time) string { return "at " + at.UTC().Format("2006-01-02 15:04:05 UTC") },
		Reason: func(r string) string { return r },
	})
}
