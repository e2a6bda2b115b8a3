package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/askview/lateclick"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
)

// MaxDenyReason caps a typed deny reason, in characters, as Slack's modal
// does: the reason goes to the model and into the audit trail.
const MaxDenyReason = 2000

// maxShown bounds, in characters, each piece of a call shown on the page;
// more is cut with a count, never dropped silently.
const maxShown = 20000

// callView is an Ask's call as the page shows it: redacted the way the
// Slack message is, with invisible and direction-changing characters made
// visible. Every string here is plain text; the template escapes it.
type callView struct {
	Kind     string   // "command", "write", "edit" or "other"
	Command  string   // command
	Programs []string // command: every program it runs, from the policy's own parse
	CwdArg   string   // command: the cwd argument, when it differs from the Ask's
	Path     string   // write, edit
	Body     string   // write: content; edit: old and new; other: JSON
	Cut      int      // characters left out
	Hidden   int      // invisible or look-alike-prone characters made visible
	// LookAlikes are the characters of the call that may not be what they
	// look like, as the Slack message lists them (askview.Call), at most
	// maxLookAlikes; MoreLookAlikes counts the rest.
	LookAlikes     []lookAlikeLine
	MoreLookAlikes int
}

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
		word, _ = markInvisible(word)
		what, _ := markInvisible(f.What)
		out = append(out, lookAlikeLine{Where: f.Where(), What: what, Word: word})
	}
	return out, 0
}

// viewCall shows a's described call (pending.Request.Describe) as slackui
// does: the exact call is what will run, so it is shown rather than the
// agent's Summary.
func viewCall(a pending.Ask) callView {
	var v callView
	v.LookAlikes, v.MoreLookAlikes = viewLookAlikes(askview.Call(a))
	show := func(s string) string {
		s = redact.Secrets(s)
		if n := utf8.RuneCountInString(s); n > maxShown {
			v.Cut += n - maxShown
			s = string([]rune(s)[:maxShown])
		}
		s, hidden := markInvisible(s)
		v.Hidden += hidden
		return s
	}
	switch c := a.Describe(); c.Kind {
	case pending.CallCommand:
		v.Kind = "command"
		v.Command = show(c.Command)
		// From the redacted command: a program redacted alone loses what
		// says it is a secret (a key block's lines parse as programs).
		for _, p := range policy.Programs(redact.Secrets(c.Command)) {
			v.Programs = append(v.Programs, show(p))
		}
		if c.Cwd != "" && c.Cwd != a.Cwd {
			v.CwdArg = show(c.Cwd)
		}
		return v
	case pending.CallWrite:
		v.Kind, v.Path, v.Body = "write", show(c.Path), show(c.Content)
		return v
	case pending.CallEdit:
		v.Kind, v.Path = "edit", show(c.Path)
		v.Body = show("replace:\n" + c.Old + "\n\nwith:\n" + c.New)
		return v
	}
	// A call that describes nothing is shown as its arguments.
	v.Kind = "other"
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(a.Args))
	dec.UseNumber()
	if a.Args == "" || dec.Decode(&args) != nil || args == nil {
		v.Body = show(a.Args)
		if strings.TrimSpace(v.Body) == "" {
			v.Body = show(a.Summary)
		}
		return v
	}
	v.Body = show(askview.ArgumentsText(redact.JSONValue(args, redact.Secrets)))
	return v
}

// markInvisible replaces characters that show as nothing or reorder the
// text around them (format characters such as U+202E, controls other than
// newline and tab) with a visible ⟨U+XXXX⟩, so what the approver reads is
// what will run; n counts them.
func markInvisible(s string) (string, int) {
	hidden := func(r rune) bool {
		return r != '\n' && r != '\t' && (unicode.Is(unicode.Cf, r) || unicode.IsControl(r))
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

// askView is one Ask as a card on the page.
type askView struct {
	ID   string
	Tool string
	Call callView

	Summary, Reason, Rule     string
	Workspace, Cwd            string
	RunID, StartedBy, Label   string
	SessionID                 string
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
	v := askView{
		ID: a.ID, Tool: text(a.Tool), Call: viewCall(a), Known: true,
		Reason: text(a.Reason), Rule: text(a.Rule),
		Workspace: text(a.Workspace), Cwd: text(a.Cwd),
		RunID: text(a.RunID), StartedBy: text(a.StartedBy), Label: text(a.Label), SessionID: text(a.SessionID),
		Created: a.CreatedAt, Deadline: a.Deadline,
		DecidedBy: text(a.DecidedBy), DecisionReason: text(a.DecisionReason), DecidedAt: a.DecidedAt,
	}
	if v.Call.Kind == "other" && a.Summary != "" {
		v.Summary = text(a.Summary)
	}
	if o, done := a.Outcome(); done {
		v.Outcome = string(o)
	} else {
		v.Scope = c.cfg.ScopeText(a)
		if v.Scope != "" {
			v.GrantChoices = c.grantChoices()
		}
		if left := a.Deadline.Sub(now); left > 0 {
			v.Left = left.Round(time.Second).String()
		} else {
			v.Left = "now"
		}
	}
	return v
}

// grantView is one grant in the list.
type grantView struct {
	ID, SessionID, Scope, By string
	Created, Expires         time.Time
	Standing                 bool
}

func viewGrant(g grants.Grant) grantView {
	text := func(s string) string { s, _ = markInvisible(s); return s }
	return grantView{
		ID: g.ID, SessionID: g.SessionID, Scope: text(g.Scope.String()), By: text(g.By),
		Created: g.CreatedAt, Expires: g.ExpiresAt, Standing: g.Standing(),
	}
}

// alreadyDecided tells a late click how the Ask ended and who ended it,
// as Slack's ephemeral reply does.
func alreadyDecided(a pending.Ask) string {
	return lateclick.Reply(a, lateclick.Wording{
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
