package askview

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
)

// The kinds of effect line, in the order they are shown.
const (
	EffectRuns      = "runs"
	EffectWrites    = "writes"
	EffectDeletes   = "deletes"
	EffectNetwork   = "network"
	EffectPrivilege = "privilege"
	EffectUnknown   = "unknown"
	EffectSecrets   = "secrets"
)

// What an effect line holds, so that the Ask's record keeps its budget
// and a phone shows each line in a few rows: at most maxEffectItems
// items (the rest counted), each in at most maxEffectItemRunes.
const (
	maxEffectItems     = 5
	maxEffectItemRunes = 60
	// maxEffectBytes bounds one stored line.
	maxEffectBytes = 200
)

// effects words what req's call does, from read, the policy's reading of
// its command (Prepare): one line per class that has anything to say,
// each in at most maxEffectBytes, every item through shownItem. The
// programs it runs are not among them: they are stored apart
// (pending.Shown.Programs), and Of words the Runs line from them
// (runsLine). Never generated: the same call always gives the same lines.
func effects(req pending.Request, read *policy.Reading, r redaction) []pending.Effect {
	secrets := r.secrets
	var out []pending.Effect
	add := func(kind, text string) {
		out = append(out, pending.Effect{Kind: kind, Text: cutBytes(text, maxEffectBytes)})
	}
	shown := func(list []string) []string {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = shownItem(s, secrets)
		}
		return out
	}
	c := req.Describe()
	switch c.Kind {
	case pending.CallCommand:
		e := read.Effects
		if len(e.Writes) > 0 {
			add(EffectWrites, "Writes "+targets(e.Writes, secrets))
		}
		if len(e.Deletes) > 0 {
			add(EffectDeletes, "Deletes "+targets(e.Deletes, secrets))
		}
		net := shown(e.Hosts)
		for _, u := range shown(e.Unnamed) {
			net = append(net, "an unknown host ("+u+")")
		}
		if len(net) > 0 {
			add(EffectNetwork, "Network: "+items(net, 0))
		}
		if len(e.Privilege) > 0 {
			add(EffectPrivilege, "Privilege: "+items(shown(e.Privilege), 0))
		}
		if len(e.Unread) > 0 {
			add(EffectUnknown, "Unknown code: "+items(shown(e.Unread[:1]), len(e.Unread)-1))
		}
		if n := r.markers; n > 0 {
			add(EffectSecrets, fmt.Sprintf("Secrets: %d hidden in what is shown", n))
		}
	case pending.CallWrite, pending.CallEdit:
		t := policy.Target{Path: c.Path}
		if ws := path.Clean(req.Workspace); path.IsAbs(ws) {
			p := c.Path
			if !path.IsAbs(p) && path.IsAbs(req.Cwd) {
				p = path.Join(req.Cwd, p)
			}
			if path.IsAbs(p) {
				rel, inside := policy.Within(ws, path.Clean(p))
				t.Outside = !inside
				t.InGit = inside && (rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/"))
			}
		}
		add(EffectWrites, "Writes "+targets([]policy.Target{t}, secrets))
	}
	return out
}

// redaction is what the redaction hides of a call's text: every piece
// (what its caller's redaction hid in the call as it came, and what
// redacting the recorded command hides, read whole, in its context), and
// how many markers the redacted command shows.
type redaction struct {
	secrets []string
	markers int
}

// redactionOf redacts c's command once for everything Prepare shows.
func redactionOf(c pending.Call, hidden []string) redaction {
	if c.Kind != pending.CallCommand {
		return redaction{secrets: hidden}
	}
	red := redact.Quoting(c.Command, hidden)
	return redaction{secrets: append(slices.Clone(hidden), redact.Hidden(c.Command, red)...), markers: strings.Count(red, redact.Marker)}
}

// minInside is the shortest item shownItem hides for lying inside a
// secret: shorter ones (a program's name) are found inside ordinary
// secrets by chance.
const minInside = 8

// shownItem is one item of the policy's reading (a program, a path, a
// host) as an approver may see it: what the command's redaction hid,
// hidden wherever the item quotes it, and the whole item hidden when it
// lies inside a secret: an item read out of its context loses what says
// it is one (a line of a pasted private key reads as a program).
func shownItem(item string, secrets []string) string {
	core := strings.TrimSuffix(strings.TrimSuffix(item, "?"), "…")
	for _, h := range secrets {
		if len(core) >= minInside && strings.Contains(h, core) {
			return redact.Marker
		}
		if len(h) >= minInside { // inside a word too: a name is no token boundary
			item = strings.ReplaceAll(item, h, redact.Marker)
		}
	}
	return redact.Quoting(item, secrets)
}

// Effects are what a's call does, one plain line per class, as every
// surface shows them first (View.Effects): the Runs line, then the lines
// worked out when the Ask was made (or now, for an Ask recorded before).
// It reads no more of a than they need (the API answers with them).
func Effects(a pending.Ask) []pending.Effect {
	c := a.Describe()
	var progs []string
	more := 0
	if c.Kind == pending.CallCommand {
		if a.Shown != nil {
			progs, more = a.Shown.Programs, a.Shown.MorePrograms
		} else {
			sh := ReadHere(a.Request)
			progs, more = sh.Programs, sh.MorePrograms
		}
	}
	return effectsOf(a, c.Kind == pending.CallCommand, progs, more, Call(a))
}

// effectsOf is Effects given what Of already read of a.
func effectsOf(a pending.Ask, command bool, progs []string, more int, found []LookAlike) []pending.Effect {
	var out []pending.Effect
	if runs := runsLine(progs, more, found); command && runs != "" {
		out = append(out, pending.Effect{Kind: EffectRuns, Text: runs})
	}
	if a.Shown != nil {
		return append(out, a.Shown.Effects...)
	}
	return append(out, ReadHere(a.Request).Effects...)
}

// hiddenOf is what the redaction of req's call as it came hid
// (pending.Request.Hidden: set on an Ask not stored, such as one the
// policy decided at once), which every line hides too.
func hiddenOf(req pending.Request) []string {
	if req.Hidden == "" {
		return nil
	}
	return strings.Split(req.Hidden, "\n")
}

// runsLine is the Runs line of a command that runs programs (Prepare's
// list, the look-alike characters of the call): the programs, each that
// holds a look-alike character flagged; "" when it runs none. The
// reading's unknown code has its own line.
func runsLine(programs []string, more int, found []LookAlike) string {
	lookAlike := map[string]bool{}
	for _, l := range found {
		lookAlike[l.Word] = true
	}
	var runs []string
	seen := map[string]bool{}
	for _, p := range programs {
		// Each program once: the order is the Runs block's to tell.
		if p == policy.UnknownCode || seen[p] {
			continue
		}
		seen[p] = true
		if lookAlike[p] || lookAlike[strings.TrimSuffix(p, "?")] {
			p += " (look-alike characters)"
		}
		runs = append(runs, p)
	}
	if len(runs) == 0 {
		return ""
	}
	return "Runs " + items(runs, more)
}

// cutBytes is s in at most n bytes, ending in cutMark when it was cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len(cutMark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + cutMark
}

// targets words files: each as written, with where it lands called out.
func targets(ts []policy.Target, secrets []string) string {
	var words []string
	for _, t := range ts {
		w := cutRunes(shownItem(t.Path, secrets), maxEffectItemRunes)
		var where []string
		if t.InGit {
			where = append(where, "inside .git")
		}
		if t.Outside {
			where = append(where, "outside the workspace")
		}
		if t.ThroughLink {
			where = append(where, "through a link")
		}
		if len(where) > 0 {
			w += " (" + strings.Join(where, ", ") + ")"
		}
		words = append(words, w)
	}
	return items(words, 0)
}

// items lists list, at most maxEffectItems of them (each cut), counting
// the rest and more.
func items(list []string, more int) string {
	var shown []string
	for i, s := range list {
		if i == maxEffectItems {
			more += len(list) - i
			break
		}
		shown = append(shown, cutRunes(s, maxEffectItemRunes+30))
	}
	text := strings.Join(shown, ", ")
	if more > 0 {
		text += fmt.Sprintf(" and %d more", more)
	}
	return text
}
