package approval

import (
	"slices"
	"testing"

	"github.com/askops/askops/pending"
)

// EachMessage names every message that shows an Ask once, the clicked one
// first, each copy naming one message alone; empty addresses are skipped.
func TestEachMessage(t *testing.T) {
	a := pending.Ask{ID: "a1"}
	a.Channel, a.MessageTS = "C1", "1.1"
	a.Copies = "D1/2.2,D2/3.3"
	got := EachMessage(a, &Message{Channel: "D1", TS: "2.2"})
	var where []string
	for _, m := range got {
		if m.Copies != "" {
			t.Errorf("copy for %s/%s still carries copies %q", m.Channel, m.MessageTS, m.Copies)
		}
		where = append(where, m.Channel+"/"+m.MessageTS)
	}
	if want := []string{"D1/2.2", "C1/1.1", "D2/3.3"}; !slices.Equal(where, want) {
		t.Errorf("EachMessage = %v, want %v", where, want)
	}
	if got := EachMessage(pending.Ask{ID: "a2"}, &Message{}); len(got) != 0 {
		t.Errorf("an Ask shown nowhere: %d messages, want none", len(got))
	}
}

// MayApprove answers as Decide's self-approval rule would: the run's
// starter may not approve unless self-approval is on or they are the only
// approver; a token never approves what it asked; anyone else may.
func TestMayApprove(t *testing.T) {
	a := pending.Ask{ID: "a1", Request: pending.Request{StartedBy: "U_ANA"}}
	ana, bo := Voter{By: "U_ANA"}, Voter{By: "U_BO"}
	for _, tc := range []struct {
		name  string
		cfg   DeciderConfig
		voter Voter
		want  bool
	}{
		{"another person", DeciderConfig{}, bo, true},
		{"the starter", DeciderConfig{}, ana, false},
		{"the starter, self-approval on", DeciderConfig{SelfApproval: SelfApproval{Allowed: true}}, ana, true},
		{"the starter, the only approver", DeciderConfig{OnlyApprover: func(by string) bool { return by == "U_ANA" }}, ana, true},
		{"the starter matched by the surface", DeciderConfig{}, Voter{By: "console:ana", Started: func(by string) bool { return by == "U_ANA" }}, false},
		{"the token that asked", DeciderConfig{SelfApproval: SelfApproval{Allowed: true}}, Voter{By: "U_ANA", Token: true}, false},
	} {
		d := NewDecider(tc.cfg)
		if got := d.MayApprove(a, tc.voter); got != tc.want {
			t.Errorf("%s: MayApprove = %v, want %v", tc.name, got, tc.want)
		}
		d.Close()
	}
}
