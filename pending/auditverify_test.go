package pending

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// auditEvents appends n chained events (a third of them asked and decided
// by real Asks, the rest other kinds) and returns the trail as stored.
func auditEvents(t *testing.T, s *RedisStore, n int) []Event {
	t.Helper()
	auditFixture(t, s, n/3)
	for range n % 3 {
		if _, err := s.AppendEvent(t.Context(), Event{Kind: "escalated", AskID: "a0", Detail: "U9"}); err != nil {
			t.Fatal(err)
		}
	}
	events, err := s.Audit(t.Context(), 0)
	if err != nil || len(events) != n {
		t.Fatalf("%d events, %v; want %d", len(events), err, n)
	}
	return events
}

// plainDecided is a decided event as someone would add it by hand: the
// fields askops writes, without the chain's.
func plainDecided(askID string) []any {
	return []any{"kind", "decided", "ask_id", askID, "run_id", "run-0", "tool", "bash", "outcome", "approved",
		"by", "UMALLORY", "reason", "", "detail", "", "at", micros(time.Now())}
}

// wantGap is one gap a report must name: its kind, the event it names (by
// its index in the trail before the attack, or -1 for an event the attack
// added) and the ids around it, and words of its problem.
type wantGap struct {
	kind          GapKind
	event         int // index into the trail; -1: added (the id the attack returned)
	after, before int // indexes of the events around it; -1: none; -2: the added event
	says          string
}

// TestAuditVerifyNamesEveryGap does to a 400-event trail (cap 100,000)
// what someone with write access to Redis would do to hide or add a
// decision, and checks verify names every gap with the ids around it. The
// first release read the plain XADD (after the head), the XTRIM MINID and
// the XDEL of the first event as intact, the last two as a MAXLEN trim.
func TestAuditVerifyNamesEveryGap(t *testing.T) {
	srv := redistest.Start(t)
	const n = 400
	cases := []struct {
		name string
		// attack changes the trail and returns the id of an event it added ("" if none).
		attack func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string
		gaps   []wantGap
	}{
		{"plain XADD of a decided event", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			return c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.keys.audit, Values: plainDecided(ev[0].AskID)}).Val()
		}, []wantGap{{GapTail, -1, n - 1, -1, "after the head's event (seq 400"}}},

		{"XADD with forged chain fields, head not moved", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			forged := Event{Kind: EventDecided, AskID: ev[0].AskID, Outcome: Approved, By: "UMALLORY", At: time.Now().UTC().Truncate(time.Microsecond),
				Seq: n + 1, Prev: EventDigest(ev[n-1]), Cap: 100000}
			return c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.keys.audit, Values: []any{"seq", forged.Seq, "prev", forged.Prev,
				"kind", "decided", "ask_id", forged.AskID, "run_id", "", "tool", "", "outcome", "approved", "by", "UMALLORY",
				"reason", "", "detail", "", "at", micros(forged.At), "cap", forged.Cap}}).Val()
		}, []wantGap{{GapTail, -1, n - 1, -1, "added by hand"}}},

		{"plain XADD, then a chained append", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			id := c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.keys.audit, Values: plainDecided(ev[0].AskID)}).Val()
			if _, err := s.AppendEvent(t.Context(), Event{Kind: "escalated", AskID: ev[0].AskID}); err != nil {
				t.Fatal(err)
			}
			return id
		}, []wantGap{{GapUnchained, -1, n - 1, n + 1, "between seq 400"}}},

		{"XTRIM MINID drops 40%", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			if got := c.XTrimMinID(t.Context(), s.keys.audit, ev[n*4/10].ID).Val(); got != n*4/10 {
				t.Fatalf("XTRIM MINID removed %d", got)
			}
			return ""
		}, []wantGap{{GapPrefix, 160, -1, 160, "seq 1 to 160 (160 events) are missing before seq 161"}}},

		{"XDEL of the first event", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			c.XDel(t.Context(), s.keys.audit, ev[0].ID)
			return ""
		}, []wantGap{{GapPrefix, 1, -1, 1, "seq 1 is missing before seq 2"}}},

		{"XDEL in the middle", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			c.XDel(t.Context(), s.keys.audit, ev[199].ID)
			return ""
		}, []wantGap{{GapDeleted, 200, 198, 200, "seq 200 is missing between seq 199"}}},

		{"all at once", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event) string {
			c.XDel(t.Context(), s.keys.audit, ev[0].ID, ev[99].ID, ev[300].ID, ev[301].ID)
			return c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.keys.audit, Values: plainDecided(ev[0].AskID)}).Val()
		}, []wantGap{
			{GapPrefix, 1, -1, 1, "seq 1 is missing"},
			{GapDeleted, 100, 98, 100, "seq 100 is missing"},
			{GapDeleted, 302, 299, 302, "seq 301 to 302 (2 events) are missing"},
			{GapTail, -1, n - 1, -1, "after the head's event"},
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRedisStore(t, srv.URL(), Options{Namespace: fmt.Sprintf("gaps%d", i)})
			c := newRedisClient(t, srv.URL())
			ev := auditEvents(t, s, n)
			if r, err := s.VerifyAudit(t.Context()); err != nil || !r.Intact() || r.Trimmed {
				t.Fatalf("before the attack: %s %v", r, err)
			}
			added := tc.attack(t, c, s, ev)
			if added != "" {
				ev = append(ev, Event{ID: added})
			}
			if after, _ := s.Audit(t.Context(), 0); len(after) > len(ev) { // a chained append after the attack
				ev = append(ev, after[len(after)-1])
			}
			r, err := s.VerifyAudit(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", r)
			if r.Intact() || r.Trimmed {
				t.Fatalf("not reported as a gap (trimmed %v):\n%s", r.Trimmed, r)
			}
			if len(r.Gaps) != len(tc.gaps) {
				t.Fatalf("%d gaps, want %d:\n%s", len(r.Gaps), len(tc.gaps), r)
			}
			id := func(i int) string {
				switch i {
				case -1:
					return ""
				case -2:
					return added
				}
				return ev[i].ID
			}
			text := r.String()
			for j, w := range tc.gaps {
				g := r.Gaps[j]
				wantID := added
				if w.event >= 0 {
					wantID = ev[w.event].ID
				}
				if g.Kind != w.kind || g.Event.ID != wantID || g.After != id(w.after) || g.Before != id(w.before) || !strings.Contains(g.Problem, w.says) {
					t.Errorf("gap %d = %s %+v\nwant %s at %s between %q and %q saying %q", j, g.Kind, g, w.kind, wantID, id(w.after), id(w.before), w.says)
				}
				if !strings.Contains(text, g.String()) || !strings.Contains(g.String(), wantID) {
					t.Errorf("the report does not name gap %d by its id %s:\n%s", j, wantID, text)
				}
				for _, around := range []string{g.After, g.Before} {
					if !strings.Contains(g.Problem, around) {
						t.Errorf("gap %d's problem does not name the id %s around it: %s", j, around, g.Problem)
					}
				}
			}
			if *r.Break != r.Gaps[0] || strings.HasSuffix(text, "intact") {
				t.Errorf("break %+v, report ends:\n%s", r.Break, text)
			}
		})
	}
}

// TestAuditTrimByTheCapIsNotAGap: a real MAXLEN trim at a small cap
// verifies intact and says the start was trimmed by that cap; removing
// more than the cap leaves is a gap.
func TestAuditTrimByTheCapIsNotAGap(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{AuditMaxLen: 10})
	c := newRedisClient(t, srv.URL())
	auditFixture(t, s, 100)
	r, err := s.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Intact() || !r.Trimmed || r.TrimCap != 10 || r.TrimCapAssumed || r.First.Seq <= 1 || r.Last.Seq-r.First.Seq+1 < 10 {
		t.Fatalf("after a MAXLEN trim: %s", r)
	}
	if want := fmt.Sprintf("the %d before it were trimmed (MAXLEN) by the stream's cap of 10", r.First.Seq-1); !strings.Contains(r.String(), want) {
		t.Errorf("report does not say %q:\n%s", want, r)
	}

	if r.TrimCapBy < r.First.Seq || r.Cap != 10 {
		t.Errorf("trim explained by seq %d under the store's cap %d, want a retained event and 10", r.TrimCapBy, r.Cap)
	}

	// bot audit verify opens the store with the default cap: the cap the
	// events record still explains the trim, and the report says it
	// differs.
	other, _ := newRedisStore(t, srv.URL(), Options{}).VerifyAudit(t.Context())
	if want := fmt.Sprintf("by the stream's cap of 10, recorded by seq %d; the store's cap is now 100000", other.TrimCapBy); !other.Intact() || !strings.Contains(other.String(), want) {
		t.Errorf("verified by a store with another cap, the report does not say %q:\n%s", want, other)
	}

	// Deleting what the next trim would take anyway (down to the cap)
	// cannot be told from a trim; deleting one more can.
	events, _ := s.Audit(t.Context(), 0)
	c.XTrimMinID(t.Context(), s.keys.audit, events[len(events)-10].ID)
	if r, _ := s.VerifyAudit(t.Context()); !r.Intact() || !r.Trimmed || r.First.Seq != 291 || r.TrimCapBy != 300 {
		t.Fatalf("after an XTRIM MINID down to the cap: %s", r)
	}
	c.XDel(t.Context(), s.keys.audit, events[len(events)-10].ID)
	r, _ = s.VerifyAudit(t.Context())
	if r.Intact() || r.Trimmed || r.Break.Kind != GapPrefix || r.Break.Event.Seq != 292 ||
		!strings.Contains(r.Break.Problem, "from seq 292 to seq 300 (id "+events[len(events)-1].ID+") there are only 9 events, under the cap 10") {
		t.Fatalf("after an XDEL below the cap: %s", r)
	}
}

// TestAuditVerifyWhileAppending verifies while two replicas append: an
// event appended during the walk is a link like any other, never a gap.
func TestAuditVerifyWhileAppending(t *testing.T) {
	_, a, b := twoReplicas(t)
	auditFixture(t, a, 400) // 1,200 events: a walk of two pages
	var wg sync.WaitGroup
	done := make(chan struct{})
	for _, s := range []*RedisStore{a, b} {
		wg.Go(func() {
			for range 150 {
				if _, err := s.AppendEvent(t.Context(), Event{Kind: "escalated", AskID: "a1"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	checks := 0
	for running := true; running; checks++ {
		select {
		case <-done:
			running = false
		default:
		}
		r, err := b.VerifyAudit(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !r.Intact() {
			t.Fatalf("check %d while appending: %s", checks, r)
		}
	}
	t.Logf("%d checks while 300 events were appended", checks)
}

// downgrade rewrites the stream as the release before the cap was recorded
// wrote it (same ids, no cap field, the first encoding's digests) and its
// head, so the tests can show what verify makes of an older replica's
// trail.
func downgrade(t *testing.T, c redis.UniversalClient, s *RedisStore) []Event {
	t.Helper()
	ctx := t.Context()
	events, err := s.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Del(ctx, s.keys.audit)
	prev := events[0].Prev // "" unless trimmed; a trimmed start's prev is not checked
	for i := range events {
		e := &events[i]
		e.Cap, e.Prev = 0, prev
		prev = EventDigest(*e)
		c.XAdd(ctx, &redis.XAddArgs{Stream: s.keys.audit, ID: e.ID, Values: []any{
			"seq", e.Seq, "prev", e.Prev, "kind", string(e.Kind), "ask_id", e.AskID, "run_id", e.RunID, "tool", e.Tool,
			"outcome", string(e.Outcome), "by", e.By, "reason", e.Reason, "detail", e.Detail, "at", micros(e.At)}})
	}
	last := events[len(events)-1]
	c.HSet(ctx, s.keys.auditHead, "seq", last.Seq, "hash", prev, "id", last.ID)
	return events
}

// TestAuditVerifyOlderReleasesTrail: a trail the release before this one
// wrote (no cap in its events) still verifies intact, and after a rolling
// upgrade the two kinds of events chain on; its trimmed start is taken as
// trimmed by the configured cap, said so, and a deletion no cap explains
// is still a gap.
func TestAuditVerifyOlderReleasesTrail(t *testing.T) {
	srv := redistest.Start(t)
	c := newRedisClient(t, srv.URL())

	s := newRedisStore(t, srv.URL(), Options{Namespace: "old"})
	auditFixture(t, s, 20)
	old := downgrade(t, c, s)
	r, _ := s.VerifyAudit(t.Context())
	if !r.Intact() || r.Events != 60 || r.Trimmed || r.Records != 40 {
		t.Fatalf("an older release's trail: %s", r)
	}
	auditFixture(t, s, 2) // this release appends on
	if r, _ := s.VerifyAudit(t.Context()); !r.Intact() || r.Events != 66 || r.Last.Cap != 100000 {
		t.Fatalf("after the upgrade: %s", r)
	}
	// A replica of the previous release appends after this one's events
	// (a rolling upgrade): its script is this one without the cap.
	previous := strings.NewReplacer("'askops-audit/2\\n'", "'askops-audit/1\\n'", " .. audit_field(cap)", "", ", 'cap', cap)", ")").Replace(auditAppendLua)
	if strings.Count(previous, "cap") != 2 { // local cap = …, and MAXLEN's
		t.Fatalf("the previous release's append still records the cap:\n%s", previous)
	}
	oldAppend := redis.NewScript(serverNowLua + previous + `return audit_append(KEYS[1], KEYS[2], ARGV[2], now, 'escalated', 'a1', '', '', '', '', '', '')`)
	if err := oldAppend.Run(t.Context(), c, []string{s.keys.audit, s.keys.auditHead}, "", 100000).Err(); err != nil {
		t.Fatal(err)
	}
	auditFixture(t, s, 1)
	if r, _ := s.VerifyAudit(t.Context()); !r.Intact() || r.Events != 70 {
		t.Fatalf("after an older replica appended between this release's events: %s", r)
	}
	if ev, _ := s.Audit(t.Context(), 0); ev[66].Cap != 0 || ev[67].Cap != 100000 {
		t.Fatalf("events %+v %+v: want the older replica's without a cap", ev[66], ev[67])
	}

	c.XTrimMinID(t.Context(), s.keys.audit, old[24].ID) // 40% of the old events
	if r, _ := s.VerifyAudit(t.Context()); r.Intact() || r.Break.Kind != GapPrefix || !strings.Contains(r.Break.Problem, "seq 1 to 24 (24 events) are missing") {
		t.Fatalf("after an XTRIM MINID of an older release's events: %s", r)
	}

	trimmed := newRedisStore(t, srv.URL(), Options{Namespace: "oldtrimmed", AuditMaxLen: 10})
	auditFixture(t, trimmed, 100)
	downgrade(t, c, trimmed)
	r, _ = trimmed.VerifyAudit(t.Context())
	if !r.Intact() || !r.Trimmed || r.TrimCap != 10 || !r.TrimCapAssumed || !strings.Contains(r.String(), "the configured cap") {
		t.Fatalf("an older release's trail trimmed by the cap: %s", r)
	}
}

// TestAuditVerifyUnchainedOnlyTrail: a stream without any chain link and
// without a head proves nothing, so it is not reported intact.
func TestAuditVerifyUnchainedOnlyTrail(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{})
	c := newRedisClient(t, srv.URL())
	for range 3 {
		c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.keys.audit, Values: plainDecided("a1")})
	}
	r, err := s.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	events, _ := s.Audit(t.Context(), 0)
	if r.Intact() || r.Unchained != 3 || r.Break.Kind != GapUnchained || r.Break.Event.ID != events[0].ID ||
		!strings.Contains(r.String(), fmt.Sprintf("none of the 3 events (ids %s to %s) carries a chain link", events[0].ID, events[2].ID)) {
		t.Fatalf("a trail of unchained events only: %s", r)
	}
}

func TestMemoryAuditTrimByTheCap(t *testing.T) {
	s := NewMemoryStore(Options{AuditMaxLen: 10})
	auditFixture(t, s, 10)
	r, _ := s.VerifyAudit(t.Context())
	if !r.Intact() || !r.Trimmed || r.TrimCap != 10 || r.First.Seq != 21 || r.Events != 10 {
		t.Fatalf("memory store trimmed to its cap: %s", r)
	}
	s.mu.Lock()
	s.audit = s.audit[1:] // one more than the cap removes
	s.mu.Unlock()
	if r, _ := s.VerifyAudit(t.Context()); r.Intact() || r.Break.Kind != GapPrefix {
		t.Fatalf("memory store below its cap: %s", r)
	}
}

// TestAuditVerifyNamesDecidedRecordsWithoutEvents deletes the whole trail
// (the stream and its head), which leaves no chain to break, and then one
// decided event: the records that still say their Ask was decided are
// named, each, and the report is not intact. A pending Ask's record is no
// gap, nor is a record whose event the cap trimmed.
func TestAuditVerifyNamesDecidedRecordsWithoutEvents(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{})
	c := newRedisClient(t, srv.URL())
	ids := auditFixture(t, s, 3)
	if _, err := s.Create(t.Context(), sampleRequest(9), time.Minute); err != nil {
		t.Fatal(err)
	}
	events, _ := s.Audit(t.Context(), 0)
	var decidedID string
	for _, e := range events {
		if e.Kind == EventDecided && e.AskID == ids[1] {
			decidedID = e.ID
		}
	}
	c.XDel(t.Context(), s.keys.audit, decidedID)
	r, err := s.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.Intact() || r.Unrecorded != 1 || !strings.Contains(r.String(), "BROKEN at ask "+ids[1]+" (decided, no event)") {
		t.Fatalf("one decided event deleted: %s", r)
	}

	c.Del(t.Context(), s.keys.audit, s.keys.auditHead)
	r, err = s.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.Intact() || r.Unrecorded != 3 || len(r.Gaps) != 3 || strings.HasSuffix(r.String(), "intact") {
		t.Fatalf("the stream and its head deleted, three decided records left: %s", r)
	}
	for i, id := range ids {
		g := r.Gaps[i]
		if g.Kind != GapUnrecorded || g.Event.AskID != id || g.Event.Outcome != Denied ||
			!strings.Contains(g.Problem, "but the trail holds no events at all") {
			t.Errorf("gap %d = %+v, want ask %s's decided record named", i, g, id)
		}
	}

	mem := NewMemoryStore(Options{})
	defer mem.Close()
	auditFixture(t, mem, 2)
	mem.mu.Lock()
	mem.audit = mem.audit[:0]
	mem.chain.head = AuditHead{}
	mem.mu.Unlock()
	if r, _ := mem.VerifyAudit(t.Context()); r.Intact() || r.Unrecorded != 2 {
		t.Fatalf("memory store, trail gone: %s", r)
	}
}
