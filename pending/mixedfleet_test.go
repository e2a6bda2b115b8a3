package pending

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/redistest"
)

// A mixed fleet fails closed: the previous release's decide and vote
// scripts (testdata/previous, taken from the release before the format
// gate) find a quorum Ask of this release not pending, so an old replica's
// one click cannot approve an Ask that needs two people; the record stays
// pending for this release, which counts the vote as usual. An Ask without
// a quorum is not gated: both releases decide it alike.
func TestMixedFleetOldScriptsRefuseGatedRecords(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{Logger: quietLogger()})
	raw := newRedisClient(t, srv.URL())
	old := func(name string) *redis.Script {
		b, err := os.ReadFile("testdata/previous/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return redis.NewScript(string(b))
	}
	oldDecide, oldVote := old("decide.lua"), old("vote.lua")
	keys := func(id string) []string {
		return []string{s.keys.ask(id), s.keys.deadlines, s.keys.audit, s.keys.auditHead}
	}

	quorum := sampleRequest(1)
	quorum.Approvals = 2
	a, err := s.Create(t.Context(), quorum, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := raw.HGet(t.Context(), s.keys.ask(a.ID), "status").Result(); st != statusGated {
		t.Fatalf("a quorum Ask is stored with status %q, want the gated %q", st, statusGated)
	}
	for name, run := range map[string]func() ([]any, error){
		"old decide": func() ([]any, error) {
			return oldDecide.Run(t.Context(), raw, keys(a.ID), a.ID, "approved", "U0OLD", "", "", s.keys.decided, 1000, "late").Slice()
		},
		"old vote": func() ([]any, error) {
			return oldVote.Run(t.Context(), raw, keys(a.ID), a.ID, "approved", "U0OLD", "", "", s.keys.decided, 1000, "late", "").Slice()
		},
	} {
		res, err := run()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res[0] != "lost" {
			t.Errorf("%s on a gated record answered %v, want lost (no write)", name, res[0])
		}
		got, err := s.Get(t.Context(), a.ID)
		if err != nil || got.Status != StatusPending || got.Counted() != 0 {
			t.Fatalf("after %s the Ask is %s with votes %v (%v), want pending and untouched", name, got.Status, got.Votes, err)
		}
	}
	// This release counts the first vote and waits for the second.
	got, err := s.Cast(t.Context(), a.ID, Ballot{Outcome: Approved, By: "U0NEW1", Person: "U0NEW1"})
	if err != nil || got.Status != StatusPending || got.Counted() != 1 {
		t.Fatalf("a vote of this release: %s, votes %v (%v); want pending with 1 vote", got.Status, got.Votes, err)
	}

	plain, err := s.Create(t.Context(), sampleRequest(2), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	res, err := oldDecide.Run(t.Context(), raw, keys(plain.ID), plain.ID, "denied", "U0OLD", "", "", s.keys.decided, 1000, "late").Slice()
	if err != nil || res[0] != "won" {
		t.Fatalf("the old decide of an Ask without quorum: %v %v, want won", res, err)
	}
	if got, err := s.Get(t.Context(), plain.ID); err != nil || got.Status != Status(Denied) || got.DecidedBy != "U0OLD" {
		t.Errorf("this release reads the old replica's decision as %s by %q (%v)", got.Status, got.DecidedBy, err)
	}
}

// Every script of this release that asks whether an Ask is still pending
// reads both stored formats (openLua's is_open): one that compares the
// status to "pending" itself would take a quorum Ask (stored gated) for
// ended — as the escalation's step script once did, and the quorum's
// on-call escalation never went out.
func TestScriptsReadTheGatedStatusAsPending(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "'status')") && (strings.Contains(line, "~= 'pending'") || strings.Contains(line, "== 'pending'")) {
				t.Errorf("%s:%d compares the stored status to 'pending' alone; use is_open (record.go): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
