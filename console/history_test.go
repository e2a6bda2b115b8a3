package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/pending"
)

// wholeTrailRefused is a store on which reading the whole audit trail is a
// test failure: the history must read only its newest decisions.
type wholeTrailRefused struct {
	*pending.MemoryStore
	t *testing.T
}

func (s wholeTrailRefused) Audit(ctx context.Context, limit int) ([]pending.Event, error) {
	s.t.Errorf("the console read the audit trail from its start (limit %d)", limit)
	return s.MemoryStore.Audit(ctx, limit)
}

// The history shows the newest 30 decisions, newest first, read from the
// end of the audit trail however long it is.
func TestHistoryReadsOnlyTheNewestDecisions(t *testing.T) {
	mem, gs := memoryStores(t)
	c, err := console.New(deciding(t, mem, console.Config{Asks: wholeTrailRefused{mem, t}, Grants: gs, Live: console.NewLive(), User: "dana"}, approval.DeciderConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	_, s := serveSignedIn(t, c)
	for i := range 40 {
		a, err := mem.Create(t.Context(), pending.Request{RunID: fmt.Sprintf("run-%02d", i), Tool: "bash", Args: `{"command":"true"}`}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Decide(t.Context(), a.ID, pending.Denied, "U0ANA", fmt.Sprintf("reason-%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	page := s.get(t, "/live")
	if strings.Contains(page, "reason-09") || !strings.Contains(page, "reason-10") {
		t.Errorf("the history is not the newest 30 decisions (10..39)")
	}
	if i, j := strings.Index(page, "reason-39"), strings.Index(page, "reason-38"); i < 0 || j < 0 || i > j {
		t.Errorf("the history is not newest first")
	}
}
