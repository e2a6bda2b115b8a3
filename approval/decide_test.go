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
