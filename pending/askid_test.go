package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
)

// testAskID is the contract of a door that assigns its own ids (AAP): the
// Ask is stored under Request.AskID, a malformed one is refused before the
// store is touched, and an Unleased Ask outlives a dropped hold.
func testAskID(t *testing.T, newStore newStoreFunc) {
	clock := newFakeClock()
	a, b := newStore(t, clockOptions(clock))
	ctx := t.Context()
	req := sampleRequest(1)
	req.AskID, req.Unleased, req.Keep = recordid.NewUUID(), true, 200*time.Hour
	ask, err := a.Create(ctx, req, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ask.ID != req.AskID {
		t.Fatalf("created ask %s, want the id asked for, %s", ask.ID, req.AskID)
	}
	if got, err := b.Get(ctx, req.AskID); err != nil || got.ID != req.AskID || got.Tool != req.Tool {
		t.Fatalf("Get(%s) = %s %s, %v", req.AskID, got.ID, got.Tool, err)
	}
	a.Hold(ctx, ask.ID)() // held and let go: a leased Ask would now lapse
	clock.Advance(DefaultLeaseTTL + time.Second)
	if swept, err := b.SweepLeases(ctx); err != nil || len(swept) != 0 {
		t.Fatalf("an unleased ask was swept as its asker gone: %v, %v", ids(swept), err)
	}
	if got, _ := b.Get(ctx, ask.ID); got.Status != StatusPending {
		t.Errorf("unleased ask is %s, want pending until its deadline", got.Status)
	}
	bad := sampleRequest(2)
	bad.AskID = "NOT-AN-ID"
	if _, err := a.Create(ctx, bad, time.Minute); ErrorCode(err) != CodeInvalid {
		t.Errorf("Create with a malformed AskID: %v, want invalid", err)
	}
}
