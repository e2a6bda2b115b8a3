package console

import (
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// Time-boxed grants (approvals.grant_durations): beside "Approve for
// session" the console offers "Approve for 15 min", "for 1 h", as Slack's
// message does. The choice travels as the form's grant_ttl (a Go
// duration), is checked against Config.GrantDurations, and is cast as the
// ballot's GrantTTL: the waiting side records the grant from Ask.GrantTTL,
// the one path every channel shares.

// grantChoice is one "Approve for …" button.
type grantChoice struct {
	Value string // the form's grant_ttl, a Go duration
	Label string // "15 min"
}

// grantChoices are the buttons for lives (askview.GrantLives).
func (c *Console) grantChoices(lives []time.Duration) []grantChoice {
	out := make([]grantChoice, len(lives))
	for i, d := range lives {
		out[i] = grantChoice{Value: d.String(), Label: grants.DurationText(d)}
	}
	return out
}

// grantTTL reads the form's grant_ttl for outcome: 0 (the session's life)
// when absent, else one of the configured durations; why is the flash when
// the form asks for anything else.
func (c *Console) grantTTL(form string, outcome pending.Outcome) (life time.Duration, why string) {
	if form == "" {
		return 0, ""
	}
	if outcome != pending.ApprovedSession {
		return 0, "A grant duration goes only with an approval for the session; nothing changed."
	}
	d, err := time.ParseDuration(form)
	if err == nil {
		for _, g := range c.cfg.GrantDurations {
			if d == g {
				return d, ""
			}
		}
	}
	return 0, "That grant duration is not offered (approvals.grant_durations); nothing changed."
}
