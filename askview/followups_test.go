package askview

import (
	"reflect"
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// TestOfHoldsTheFollowupsTried: the view carries the reminder and the
// escalations recorded on the Ask, oldest first, with users and user
// groups apart; an escalation that reached nobody (its level dropped) and
// a step of another name are not follow-ups tried.
func TestOfHoldsTheFollowupsTried(t *testing.T) {
	var a pending.Ask
	a.Followups = pending.FollowupLog("remind\t300000000\tU_A,S_A\n" +
		"escalate:1\t600000000\tU1,S1,W2\n" +
		"escalate:3\t0\t\n" +
		"other\t1\tU9")
	want := []Followup{
		{Did: pending.EventReminded, Users: []string{"U_A"}, Groups: []string{"S_A"}, After: 5 * time.Minute},
		{Did: pending.EventEscalated, Users: []string{"U1", "W2"}, Groups: []string{"S1"}, After: 10 * time.Minute},
	}
	if got := Of(a, 0).Followups; !reflect.DeepEqual(got, want) {
		t.Errorf("Followups = %+v\nwant %+v", got, want)
	}
	if got := Of(pending.Ask{}, 0).Followups; got != nil {
		t.Errorf("an Ask with no follow-ups: %+v", got)
	}
}
