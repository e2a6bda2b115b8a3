package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
	"github.com/redis/go-redis/v9"
)

// TestAuditVerifyAndExport drives `bot audit` against a real Redis holding
// a real trail: verify passes, export prints the Asks, and an event
// deleted by hand makes verify fail naming it.
func TestAuditVerifyAndExport(t *testing.T) {
	rds := redistest.Start(t)
	cfg := grantsConfig(t, grantsWorkspace(t))
	env := map[string]string{"REDIS_URL": rds.URL()}
	client, err := redisconn.Open(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	store, err := pending.NewRedisStore(t.Context(), client, pending.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var ids []string
	for i := range 3 {
		a, err := store.Create(t.Context(), pending.Request{RunID: "r1", StartedBy: "USTARTER", Tool: "bash", Summary: "terraform apply", Reason: "rule: terraform"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.AppendEvent(t.Context(), pending.Event{Kind: "vote", AskID: a.ID, By: "UANA", Outcome: pending.Approved}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := store.Decide(t.Context(), a.ID, pending.Approved, "UBOB", ""); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, a.ID)
	}

	code, out, errOut := runBot(t.Context(), t, env, "audit", "-config", cfg, "verify")
	if code != 0 || !strings.Contains(out, "8 events checked") || !strings.Contains(out, "intact") {
		t.Fatalf("verify = %d\n%s\n%s", code, out, errOut)
	}
	_, head, _ := strings.Cut(out, "head: ")
	head, _, _ = strings.Cut(head, " ")
	if code, out, errOut := runBot(t.Context(), t, env, "audit", "-config", cfg, "verify", "-anchor", head); code != 0 || !strings.Contains(out, "1 kept heads (anchors) match") {
		t.Fatalf("verify -anchor %s = %d\n%s\n%s", head, code, out, errOut)
	}
	code, out, errOut = runBot(t.Context(), t, env, "audit", "export", "-since", "1h", "-config", cfg)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 {
		t.Fatalf("export = %d, %d lines\n%s\n%s", code, len(lines), out, errOut)
	}
	var h pending.AskHistory
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	if h.AskID != ids[0] || h.AskedBy != "USTARTER" || h.What != "terraform apply" || h.PolicyReason != "rule: terraform" ||
		h.DecidedBy != "UBOB" || h.Outcome != pending.Approved || len(h.Events) != 3 || h.Events[1].Kind != "vote" || h.Events[1].By != "UANA" {
		t.Errorf("first line = %s", lines[0])
	}
	if code, out, _ := runBot(t.Context(), t, env, "audit", "-config", cfg, "export", "-since", time.Now().Add(time.Hour).Format(time.RFC3339)); code != 0 || out != "" {
		t.Errorf("export since a future time = %d %q", code, out)
	}

	// A decided event added by hand (a plain XADD): the first release read
	// only up to the head and said intact.
	added := client.XAdd(t.Context(), &redis.XAddArgs{Stream: "askops:{askops}:audit", Values: []any{
		"kind", "decided", "ask_id", ids[2], "outcome", "approved", "by", "UMALLORY"}}).Val()
	code, out, errOut = runBot(t.Context(), t, env, "audit", "-config", cfg, "verify")
	if code != 1 || !strings.Contains(out, "BROKEN at id "+added+" (decided of ask "+ids[2]+", no chain link)") || !strings.Contains(out, "BROKEN: 1 gap") {
		t.Fatalf("verify after a plain XADD = %d\n%s\n%s", code, out, errOut)
	}

	events, _ := store.Audit(t.Context(), 0)
	client.XDel(t.Context(), "askops:{askops}:audit", events[3].ID)
	code, out, _ = runBot(t.Context(), t, env, "audit", "-config", cfg, "verify", "-o", "json")
	var r pending.AuditReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, out)
	}
	if code != 1 || r.Break == nil || r.Break.Event.Seq != 5 || !strings.Contains(r.Break.Problem, "seq 4 is missing") {
		t.Errorf("verify after a deletion = %d\n%s", code, out)
	}
	if len(r.Gaps) != 2 || r.Gaps[0].After != events[2].ID || r.Gaps[0].Before != events[4].ID || r.Gaps[1].Kind != pending.GapTail || r.Gaps[1].Event.ID != added {
		t.Errorf("verify -o json names the gaps %+v, want the deletion between %s and %s, then %s", r.Gaps, events[2].ID, events[4].ID, added)
	}

	// The stream and its head deleted: no chain is left to break, but the
	// two decided records still say what was decided. The first release
	// said "intact".
	client.Del(t.Context(), "askops:{askops}:audit", "askops:{askops}:audit:head")
	code, out, errOut = runBot(t.Context(), t, env, "audit", "-config", cfg, "verify")
	if code != 1 || strings.HasSuffix(strings.TrimSpace(out), "intact") || !strings.Contains(out, "BROKEN: 2 gaps") ||
		!strings.Contains(out, "BROKEN at ask "+ids[0]+" (decided, no event)") || !strings.Contains(out, "BROKEN at ask "+ids[1]+" (decided, no event)") ||
		strings.Contains(out, ids[2]) {
		t.Errorf("verify with the trail deleted = %d, want 1 naming the two decided asks (not the pending one)\n%s\n%s", code, out, errOut)
	}
}

func TestAuditRefusals(t *testing.T) {
	cfg := grantsConfig(t, grantsWorkspace(t))
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"in-memory store", []string{"audit", "-config", cfg, "verify"}, "the audit trail needs redis.url"},
		{"no verb", []string{"audit", "-config", cfg}, "no verb"},
		{"unknown verb", []string{"audit", "-config", cfg, "rewrite"}, `unknown verb "rewrite"`},
		{"bad since", []string{"audit", "-config", cfg, "export", "-since", "yesterday"}, "neither a duration"},
		{"bad output", []string{"audit", "-config", cfg, "verify", "-o", "yaml"}, "-o must be text or json"},
		{"bad anchor", []string{"audit", "-config", cfg, "verify", "-anchor", "3:abc"}, "is not SEQ:HASH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			if tc.name != "in-memory store" {
				env["REDIS_URL"] = "redis://127.0.0.1:1" // never reached: refused first
			}
			code, _, errOut := runBot(t.Context(), t, env, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.wantStderr) {
				t.Errorf("code %d, stderr %q; want 2 and %q", code, errOut, tc.wantStderr)
			}
		})
	}
}
