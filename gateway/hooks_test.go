package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
)

var update = flag.Bool("update", false, "rewrite testdata/answers from what the hooks answer")

// hookCase is how the human (or the failure) answers a recorded event.
type hookCase struct {
	name string
	// before breaks something before the hook runs (Slack, the store).
	before func(t *testing.T, s *stack, r *redistest.Server)
	// decide answers the posted Ask; nil lets it run its course.
	decide  func(t *testing.T, ctx context.Context, s *stack, a pending.Ask)
	timeout time.Duration // approvals.timeout; default 1m
	redis   bool
}

func hookCases() []hookCase {
	return []hookCase{
		{name: "approve", decide: func(t *testing.T, ctx context.Context, s *stack, a pending.Ask) {
			if _, err := s.asks.Decide(ctx, a.ID, pending.Approved, approverID, ""); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deny", decide: func(t *testing.T, ctx context.Context, s *stack, a pending.Ask) {
			if _, err := s.asks.Decide(ctx, a.ID, pending.Denied, approverID, "not before the freeze ends"); err != nil {
				t.Fatal(err)
			}
		}},
		// Nobody answers: the Ask expires at its deadline (a short
		// approvals.timeout, so the test ends soon; no sleep).
		{name: "expire", timeout: 300 * time.Millisecond},
		{name: "slack_failure", before: func(t *testing.T, s *stack, _ *redistest.Server) {
			s.slack.FailNext("chat.postMessage", 10, fakeslack.FailMode{SlackError: "channel_not_found"})
		}},
		{name: "store_failure", redis: true, before: func(t *testing.T, s *stack, r *redistest.Server) {
			r.Stop()
		}},
	}
}

// TestRecordedHookEvents feeds each recorded Claude Code / Codex event to
// the hook and compares its stdout with testdata/answers exactly: approve,
// deny, expiry, Slack down and the store down. Every answer is exit 0;
// every failure a deny.
func TestRecordedHookEvents(t *testing.T) {
	events, err := filepath.Glob("testdata/events/*.json")
	if err != nil || len(events) == 0 {
		t.Fatalf("no recorded events: %v", err)
	}
	for _, path := range events {
		event := strings.TrimSuffix(filepath.Base(path), ".json")
		agent := hook.AgentClaude
		if strings.HasPrefix(event, "codex") {
			agent = hook.AgentCodex
		}
		input, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, hc := range hookCases() {
			t.Run(event+"/"+hc.name, func(t *testing.T) {
				t.Parallel()
				o := stackOptions{timeout: hc.timeout}
				var r *redistest.Server
				if hc.redis {
					r = redistest.Start(t)
					client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
					t.Cleanup(func() { client.Close() })
					o.redis = client
				}
				s := newStack(t, o)
				if hc.before != nil {
					hc.before(t, s, r)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				var out, errOut bytes.Buffer
				done := make(chan int, 1)
				go func() {
					done <- runHook(ctx, agent, "ana@laptop", bytes.NewReader(input), &out, &errOut, s.svc.Settler())
				}()
				if hc.decide != nil {
					hc.decide(t, ctx, s, s.posted(t, ctx))
				}
				if code := <-done; code != hook.ExitAnswered {
					t.Fatalf("exit %d, want 0; stderr: %s", code, errOut.String())
				}
				checkAnswer(t, filepath.Join("testdata", "answers", event, hc.name+".json"), out.Bytes())
			})
		}
	}
}

func checkAnswer(t *testing.T, golden string, got []byte) {
	t.Helper()
	if !json.Valid(got) {
		t.Fatalf("answer is not JSON: %q", got)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to record it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("answer differs from %s\n got: %s\nwant: %s", golden, got, want)
	}
}
