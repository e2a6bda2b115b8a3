package gateway

import (
	"github.com/askops/askops/pending"
)

// tallyNote says, for an Ask that needed several approvals, where the count
// stood when it ended: " after 1 of 2 approvals (U_ANA)" on a deny or an
// expiry, " (2 of 2 approvals (U_ANA, U_BO))" on an approval; "" for an
// Ask that needed one. The model and the hook's user are told who agreed,
// not a bare "denied".
func tallyNote(a pending.Ask) string {
	t := a.Tally()
	switch o, _ := a.Outcome(); {
	case t == "":
		return ""
	case o.Approves():
		return " (" + t + ")"
	default:
		return " after " + t
	}
}
