package grants_test

import (
	"testing"
	"time"

	"github.com/askops/askops/grants"
)

// testBoxed: a grant for 15 minutes lapses after 15 minutes while its
// session (and its other grants) live on, and says how long it has left.
func testBoxed(t *testing.T, newStore newStoreFunc) {
	ctx := t.Context()
	clk := newClock()
	st := newStore(t, clk)
	apply := bashCall("terraform apply", "/ws/app")
	test := bashCall("npm test", "/ws/app")
	short, err := st.RecordFor(ctx, "s1", must(t)(grants.ScopeFor(apply)), "U1", time.Hour, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(15 * time.Minute); !short.Until.Equal(want) || !short.ExpiresAt.Equal(want) {
		t.Errorf("15-min grant: until %s expires %s; want both %s", short.Until, short.ExpiresAt, want)
	}
	if _, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(test)), "U1", time.Hour); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	gs, _ := st.List(ctx, "s1")
	left := map[string]time.Duration{}
	for _, g := range gs {
		left[g.Scope.Command] = g.ExpiresAt.Sub(clk.Now())
	}
	if len(gs) != 2 || left["terraform apply"] != 5*time.Minute || left["npm test"] != 50*time.Minute {
		t.Fatalf("after 10 min: time left %v; want terraform apply 5m, npm test 50m", left)
	}
	if _, ok, _ := st.Match(ctx, "s1", apply); !ok {
		t.Error("the 15-min grant does not cover the call after 10 min")
	}
	clk.Advance(5 * time.Minute)
	if _, ok, _ := st.Match(ctx, "s1", apply); ok {
		t.Error("the 15-min grant still covers the call after 15 min")
	}
	if _, ok, _ := st.Match(ctx, "s1", test); !ok {
		t.Error("the session's other grant lapsed with the short one")
	}
	if gs, _ := st.List(ctx, "s1"); len(gs) != 1 || gs[0].Scope.Command != "npm test" {
		t.Errorf("after 15 min List = %+v; want only the session grant", gs)
	}
	// A life longer than the session is the session's.
	long, err := st.RecordFor(ctx, "s2", must(t)(grants.ScopeFor(apply)), "U1", time.Minute, time.Hour)
	if err != nil || !long.Until.IsZero() || !long.ExpiresAt.Equal(clk.Now().Add(time.Minute)) {
		t.Errorf("a life past the session: %+v, %v", long, err)
	}
	if _, err := st.RecordFor(ctx, "s2", must(t)(grants.ScopeFor(apply)), "U1", time.Minute, -time.Second); grants.ErrorCode(err) != grants.CodeInvalid {
		t.Errorf("negative life: %v; want invalid", err)
	}
}
