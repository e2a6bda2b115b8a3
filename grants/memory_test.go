package grants_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askops/askops/grants"
)

func TestMemoryStoreDropsExpiredSessions(t *testing.T) {
	ctx := t.Context()
	clk := newClock()
	st := grants.NewMemoryStore(grants.Options{Now: clk.Now})
	scope := must(t)(grants.ScopeFor(bashCall("ls", "/ws")))
	for i := range 1000 {
		if _, err := st.Record(ctx, fmt.Sprintf("old-%d", i), scope, "U1", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Hour)
	for i := range 1000 {
		if _, err := st.Record(ctx, fmt.Sprintf("new-%d", i), scope, "U1", 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// Without sweeping, 2000 sessions would be held; with it, the 1000 expired
	// ones are gone long before the new ones are all in.
	if n := st.SessionCount(); n > 1500 {
		t.Fatalf("memory store holds %d sessions, expected the 1000 expired ones to be swept", n)
	}
	if list, _ := st.List(ctx, "new-999"); len(list) != 1 {
		t.Fatal("sweep dropped a live session")
	}
}
