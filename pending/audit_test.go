package pending

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// auditFixture fills a store with n decided Asks (and one event of another
// kind each, as reminders and votes will be) and returns their ids.
func auditFixture(t *testing.T, s interface {
	Store
	AuditLog
}, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		ask, err := s.Create(t.Context(), sampleRequest(i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendEvent(t.Context(), Event{Kind: "reminded", AskID: ask.ID, RunID: ask.RunID, Tool: ask.Tool, Detail: "<!subteam^S1>"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(t.Context(), ask.ID, Denied, fmt.Sprintf("U%d", i), "not now"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ask.ID)
	}
	return ids
}

func TestAuditChainIntact(t *testing.T) {
	srv := redistest.Start(t)
	for name, s := range map[string]interface {
		Store
		AuditLog
	}{
		"memory": NewMemoryStore(Options{}),
		"redis":  newRedisStore(t, srv.URL(), Options{}),
	} {
		t.Run(name, func(t *testing.T) {
			auditFixture(t, s, 5)
			r, err := s.VerifyAudit(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !r.Intact() || r.Events != 15 || r.Trimmed || r.First.Seq != 1 || r.Last.Seq != 15 || r.Head == nil || r.Head.Seq != 15 {
				t.Fatalf("report = %s", r)
			}
			if r.Records != 10 {
				t.Errorf("records compared = %d, want 10 (5 asked, 5 decided)", r.Records)
			}
			events, _ := s.Audit(t.Context(), 0)
			if events[0].Detail != "git push origin main" || events[0].Prev != "" || events[1].Prev != EventDigest(events[0]) {
				t.Errorf("first events = %+v", events[:2])
			}
		})
	}
}

// TestAuditLuaDigestMatchesGo appends events at times whose RFC 3339 form
// is easy to get wrong (leap days, century years, µs, no fraction, the
// fraction's trailing zeros) through the Lua append, and checks the chain
// Go computes agrees with the head Lua wrote.
func TestAuditLuaDigestMatchesGo(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{})
	times := []string{
		"1970-01-01T00:00:01Z", "2000-02-29T23:59:59.999999Z", "2024-02-29T12:00:00.1Z",
		"2100-03-01T00:00:00.000001Z", "2026-12-31T23:59:59.5Z", "2001-01-01T00:00:00.12Z", "2038-01-19T03:14:08Z",
	}
	for i, ts := range times {
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.AppendEvent(t.Context(), Event{Kind: "vote", AskID: "a", By: "Ü\n名", Reason: strings.Repeat("x", i*100), At: at})
		if err != nil {
			t.Fatal(err)
		}
		if !e.At.Equal(at) || e.Seq != int64(i+1) {
			t.Fatalf("appended %+v, want at %s seq %d", e, at, i+1)
		}
		head, err := s.auditHead(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if head.Hash != EventDigest(e) {
			t.Fatalf("at %s: Lua digest %s, Go digest %s of %q", ts, head.Hash, EventDigest(e), canonicalEvent(e))
		}
	}
}

// TestAuditChainDoesNotForkUnderConcurrency appends from two stores (two
// processes) at once: the chain stays one line.
func TestAuditChainDoesNotForkUnderConcurrency(t *testing.T) {
	_, a, b := twoReplicas(t)
	var wg sync.WaitGroup
	for _, s := range []*RedisStore{a, b, a, b} {
		wg.Go(func() {
			for range 50 {
				ask, err := s.Create(t.Context(), sampleRequest(1), time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.AppendEvent(t.Context(), Event{Kind: "escalated", AskID: ask.ID}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	r, err := b.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Intact() || r.Events != 400 {
		t.Fatalf("after 400 concurrent appends: %s", r)
	}
}

func TestAuditTrimmedChainStartsAtFirstRetained(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{AuditMaxLen: 10})
	auditFixture(t, s, 100)
	r, err := s.VerifyAudit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Intact() || !r.Trimmed || r.First.Seq <= 1 || r.Last.Seq != 300 || r.Events != int(300-r.First.Seq+1) {
		t.Fatalf("report = %s", r)
	}
	if !strings.Contains(r.String(), "trimmed (MAXLEN)") {
		t.Errorf("report does not say the start was trimmed:\n%s", r)
	}
}

// rewriteEvent edits one field of the audit entry id the only way Redis
// allows: the stream is rebuilt with the same ids and that one value
// changed (XADD with explicit ids), as someone covering their tracks would.
func rewriteEvent(t *testing.T, c redis.UniversalClient, stream, id, field, value string) {
	t.Helper()
	ctx := t.Context()
	msgs, err := c.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Del(ctx, stream).Err(); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		var vals []any
		for _, k := range []string{"seq", "prev", "kind", "ask_id", "run_id", "tool", "outcome", "by", "reason", "detail", "at", "cap"} {
			v := m.Values[k]
			if m.ID == id && k == field {
				v, found = value, true
			}
			vals = append(vals, k, v)
		}
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: m.ID, Values: vals}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatalf("no event %s", id)
	}
}

func TestAuditVerifyDetectsTampering(t *testing.T) {
	srv := redistest.Start(t)
	cases := []struct {
		name   string
		tamper func(t *testing.T, c redis.UniversalClient, s *RedisStore, events []Event, ids []string)
		seq    int64  // the event the break must name
		says   string // part of the problem
	}{
		{"edited decider", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event, _ []string) {
			rewriteEvent(t, c, s.keys.audit, ev[5].ID, "by", "UMALLORY") // the second Ask's decided event
		}, 6, "content was changed"},
		{"edited newest event", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event, _ []string) {
			rewriteEvent(t, c, s.keys.audit, ev[len(ev)-1].ID, "outcome", "approved")
		}, 12, "head recorded"},
		{"deleted event", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event, _ []string) {
			c.XDel(t.Context(), s.keys.audit, ev[6].ID) // the third Ask's asked event
		}, 8, "seq 7 is missing"},
		{"deleted newest event", func(t *testing.T, c redis.UniversalClient, s *RedisStore, ev []Event, _ []string) {
			c.XDel(t.Context(), s.keys.audit, ev[len(ev)-1].ID)
		}, 11, "seq 12 is missing after it"},
		{"edited record", func(t *testing.T, c redis.UniversalClient, s *RedisStore, _ []Event, ids []string) {
			c.HSet(t.Context(), s.keys.ask(ids[2]), fieldDecidedBy, "UMALLORY")
		}, 9, `decided_by="UMALLORY"`},
		{"deleted head", func(t *testing.T, c redis.UniversalClient, s *RedisStore, _ []Event, _ []string) {
			c.Del(t.Context(), s.keys.auditHead)
		}, 12, "head record is missing"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Namespace: fmt.Sprintf("tamper%d", i)}
			s := newRedisStore(t, srv.URL(), opts)
			c := newRedisClient(t, srv.URL())
			ids := auditFixture(t, s, 4)
			events, _ := s.Audit(t.Context(), 0)
			if r, _ := s.VerifyAudit(t.Context()); !r.Intact() {
				t.Fatalf("before tampering: %s", r)
			}
			tc.tamper(t, c, s, events, ids)
			r, err := s.VerifyAudit(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if r.Intact() {
				t.Fatalf("tampering not detected: %s", r)
			}
			if r.Break.Event.Seq != tc.seq || !strings.Contains(r.Break.Problem, tc.says) {
				t.Errorf("break = seq %d %q, want seq %d and %q\n%s", r.Break.Event.Seq, r.Break.Problem, tc.seq, tc.says, r)
			}
		})
	}
}

func TestMemoryAuditVerifyDetectsEdit(t *testing.T) {
	s := NewMemoryStore(Options{})
	auditFixture(t, s, 3)
	s.mu.Lock()
	s.audit[4].Reason = "fine by me"
	s.mu.Unlock()
	r, _ := s.VerifyAudit(t.Context())
	if r.Intact() || r.Break.Event.Seq != 5 {
		t.Fatalf("report = %s", r)
	}
}

func TestAuditExportHistories(t *testing.T) {
	clock := newFakeClock()
	s := NewMemoryStore(clockOptions(clock))
	old := auditFixture(t, s, 1)
	clock.Advance(48 * time.Hour)
	recent := auditFixture(t, s, 2)
	events, err := s.AuditSince(t.Context(), clock.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHistories(&buf, Histories(events)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(buf.String(), old[0]) {
		t.Fatalf("export since 24h:\n%s", buf.String())
	}
	var h AskHistory
	if err := json.Unmarshal([]byte(lines[1]), &h); err != nil {
		t.Fatal(err)
	}
	if h.AskID != recent[1] || h.AskedBy != "U0STARTER" || h.What != "git push origin main" || h.PolicyReason != "side effect" ||
		h.Outcome != Denied || h.DecidedBy != "U1" || h.DecisionReason != "not now" || len(h.Events) != 3 || h.Events[1].Kind != "reminded" {
		t.Errorf("history = %+v", h)
	}
}

// TestAuditAnchorCatchesAFullRewrite: someone with write access edits an
// event and recomputes every later link and the head. The chain alone
// cannot tell; a head kept from an earlier check can.
func TestAuditAnchorCatchesAFullRewrite(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{})
	c := newRedisClient(t, srv.URL())
	auditFixture(t, s, 3) // seq 1..9
	before, err := s.VerifyAudit(t.Context())
	if err != nil || !before.Intact() {
		t.Fatalf("%s %v", before, err)
	}
	kept := *before.Head
	auditFixture(t, s, 1) // seq 10..12, after the head was kept

	events, _ := s.Audit(t.Context(), 0)
	events[5].By = "UMALLORY" // the second Ask's decider
	c.Del(t.Context(), s.keys.audit)
	prev := ""
	for _, e := range events {
		e.Prev = prev
		prev = EventDigest(e)
		c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.keys.audit, ID: e.ID, Values: []any{
			"seq", e.Seq, "prev", e.Prev, "kind", string(e.Kind), "ask_id", e.AskID, "run_id", e.RunID, "tool", e.Tool,
			"outcome", string(e.Outcome), "by", e.By, "reason", e.Reason, "detail", e.Detail, "at", micros(e.At), "cap", e.Cap}})
	}
	c.HSet(t.Context(), s.keys.auditHead, "seq", 12, "hash", prev)
	c.HSet(t.Context(), s.keys.ask(events[5].AskID), fieldDecidedBy, "UMALLORY")

	if r, _ := s.VerifyAudit(t.Context()); !r.Intact() {
		t.Fatalf("a consistent rewrite should pass the chain alone (that is the limit anchors address): %s", r)
	}
	r, err := s.VerifyAudit(t.Context(), kept)
	if err != nil {
		t.Fatal(err)
	}
	if r.Intact() || r.Break.Event.Seq != 9 || !strings.Contains(r.Break.Problem, "the head you kept for seq 9") {
		t.Fatalf("with the kept head: %s", r)
	}

	// An anchor past the end, and one trimmed away.
	if r, _ := s.VerifyAudit(t.Context(), AuditHead{Seq: 40, Hash: kept.Hash}); r.Intact() || !strings.Contains(r.Break.Problem, "trail ends at seq 12") {
		t.Errorf("anchor past the end: %s", r)
	}
	trimmed := newRedisStore(t, srv.URL(), Options{Namespace: "trimmed", AuditMaxLen: 10})
	auditFixture(t, trimmed, 100)
	// A kept head the cap has trimmed away proves nothing any more: it is
	// a gap (the first release reported it intact, "not checked", so a
	// rewrite plus a trim past the anchor passed).
	r, _ = trimmed.VerifyAudit(t.Context(), AuditHead{Seq: 1, Hash: kept.Hash})
	if r.Intact() || r.AnchorsTrimmed != 1 || !r.Trimmed || r.Break.Kind != GapAnchor || r.Break.Before != r.First.ID ||
		!strings.Contains(r.Break.Problem, fmt.Sprintf("older than the oldest retained event (seq %d, id %s)", r.First.Seq, r.First.ID)) {
		t.Errorf("anchor older than the retained trail: %s", r)
	}
}

func TestParseAnchor(t *testing.T) {
	good := "12:" + strings.Repeat("ab", 20)
	if a, err := ParseAnchor(good); err != nil || a.Seq != 12 {
		t.Errorf("ParseAnchor(%q) = %+v, %v", good, a, err)
	}
	for _, bad := range []string{"", "12", "x:" + strings.Repeat("ab", 20), "0:" + strings.Repeat("ab", 20), "3:abc", "3:" + strings.Repeat("AB", 20)} {
		if _, err := ParseAnchor(bad); err == nil {
			t.Errorf("ParseAnchor(%q) accepted", bad)
		}
	}
}

// TestCanonicalEventIsPinned: the encoding an event's digest is taken over
// must never change silently, or every chain written before would fail
// verification. A deliberate change gets a new auditCanonVersion.
func TestCanonicalEventIsPinned(t *testing.T) {
	at, _ := time.Parse(time.RFC3339Nano, "2026-12-01T02:36:41.5Z")
	e := Event{Seq: 7, Prev: "ab", Kind: EventDecided, AskID: "a1", RunID: "r1", Tool: "bash", Outcome: Denied,
		By: "U1", Reason: "not\nnow", Detail: "", At: at.In(time.FixedZone("CET", 3600))}
	const want = "askops-audit/1\n1:7\n2:ab\n7:decided\n2:a1\n2:r1\n4:bash\n6:denied\n2:U1\n7:not\nnow\n0:\n22:2026-12-01T02:36:41.5Z\n"
	if got := canonicalEvent(e); got != want {
		t.Errorf("canonicalEvent = %q, want %q", got, want)
	}
	if got := EventDigest(e); got != "450bd8e5840a4e8faeb2ab8eb5589ea001e20749" {
		t.Errorf("digest %s (change the pin only with a new auditCanonVersion)", got)
	}

	// An event that records its cap: version 2, the cap last.
	e.Cap = 100000
	const wantCap = "askops-audit/2\n1:7\n2:ab\n7:decided\n2:a1\n2:r1\n4:bash\n6:denied\n2:U1\n7:not\nnow\n0:\n22:2026-12-01T02:36:41.5Z\n6:100000\n"
	if got := canonicalEvent(e); got != wantCap {
		t.Errorf("canonicalEvent with a cap = %q, want %q", got, wantCap)
	}
	if got := EventDigest(e); got != "e1119f8066f7f484c9c83da5a377d0ecfa214ec5" {
		t.Errorf("digest with a cap %s (change the pin only with a new auditCanonVersionCap)", got)
	}
}
