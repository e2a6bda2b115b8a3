package console

import (
	"time"

	"github.com/askops/askops/grants"
)

// Time-boxed grants (approvals.grant_durations): beside "Approve for
// session" the console offers "Approve for 15 min", "for 1 h", as Slack's
// message does. The choice travels as the form's grant_ttl (a Go
// duration), is checked by the approval Decider against
// Config.GrantDurations, and is cast as the ballot's GrantTTL: the waiting
// side records the grant from Ask.GrantTTL, the one path every channel
// shares.

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
