package chatops

import (
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/sessions"
)

// A run started with /askops run is recorded for its starter while it
// runs (so every replica's App Home lists it), with a redacted, short
// label, and the record ends with the run; each change is announced.
func TestRunIsRecordedWhileItRuns(t *testing.T) {
	st := sessions.NewMemoryStore(sessions.Options{TTL: time.Hour})
	g := newGate(true)
	o := newTestOps(t, testOptions{sessions: st, approver: g, replies: []fakeopenai.Reply{bashCall("c1", "touch x"), fakeopenai.Text("done")}})
	changed := make(chan struct{}, 4)
	o.cfg.RunsChanged = func() { changed <- struct{}{} }

	o.slash(t, "COPS", starterID, "run deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789 "+strings.Repeat("x", 300))
	<-g.asked // the run waits on its Ask
	waitChanged(t, changed, "recorded")
	m, err := st.RunsOf(t.Context(), []string{starterID, approverID})
	if err != nil {
		t.Fatal(err)
	}
	runs := m[starterID]
	if len(runs) != 1 || len(m[approverID]) != 0 {
		t.Fatalf("recorded runs = %+v, want one of %s", m, starterID)
	}
	r := runs[0]
	if r.ID == "" || r.Channel != "COPS" || r.StartedAt.IsZero() {
		t.Errorf("recorded run = %+v", r)
	}
	if strings.Contains(r.Label, "ghp_abcdefghij") || !strings.HasPrefix(r.Label, "deploy with token") || len([]rune(r.Label)) > runLabelRunes+1 {
		t.Errorf("label = %q: want it redacted and at most %d runes", r.Label, runLabelRunes)
	}

	g.open()
	waitChanged(t, changed, "ended")
	m, err = st.RunsOf(t.Context(), []string{starterID})
	if err != nil {
		t.Fatal(err)
	}
	if len(m[starterID]) != 0 {
		t.Errorf("after the run ended: %+v", m[starterID])
	}
}

// waitChanged waits for a RunsChanged call; the bound only keeps a broken
// build from hanging the suite.
func waitChanged(t *testing.T, changed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("RunsChanged never said the run was %s", what)
	}
}
