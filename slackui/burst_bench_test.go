package slackui

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/batchmsg"
	"github.com/askops/askops/internal/channelpace"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
)

// BenchmarkBurst is issue 24's burst: 50 Asks created at once from 3
// replicas (3 notifiers and stores on one real Redis) into one approval
// channel, against a fake Slack holding askops to Slack's rate limits.
// One approver taps Approve on each as soon as it is shown. "before" is
// the pacing each replica kept on its own, one post per Ask; "after" is
// the shared pace with batch messages; "after-1KB" the same with each
// command 1 KB long (a heredoc, a curl with its JSON), whose batch entries
// show the command's head and Show full. Reported: when the first and the
// last Ask were shown with working buttons (their message recorded), the
// 429s Slack answered, and when all 50 were decided.
//
//	go test -run '^$' -bench Burst -benchtime 1x ./slackui/
func BenchmarkBurst(b *testing.B) {
	for _, c := range []struct {
		mode  string
		after bool
		pad   int // bytes added to each command
	}{{"before", false, 0}, {"after", true, 0}, {"after-1KB", true, 1000}} {
		b.Run(c.mode, func(b *testing.B) {
			for range b.N {
				burstOnce(b, c.after, c.pad)
			}
		})
	}
}

func burstOnce(b *testing.B, after bool, pad int) {
	const replicas, asks = 3, 50
	srv := redistest.Start(b)
	fake := fakeslack.New(b, fakeslack.Options{SigningSecret: "bench-secret", RateLimits: &fakeslack.RateLimits{}})
	log := slog.New(slog.DiscardHandler)
	cores := make([]*approval.Core, replicas)
	stores := make([]pending.Store, replicas)
	var notifiers []*Notifier
	for i := range replicas {
		st, client := redisAsks(b, srv.URL(), pending.Options{Logger: log})
		stores[i] = st
		cfg := NotifierConfig{ApprovalChannel: approvals, ScopeText: approval.ScopeText(approval.DefaultScopeFor), Logger: log}
		if after {
			cfg.Asks, cfg.Pace, cfg.Batches = st, channelpace.NewRedis(client, rediskey.Default()), batchmsg.NewRedis(client, rediskey.Default(), time.Hour)
		}
		n := NewNotifier(fakeAPI(fake), cfg)
		notifiers = append(notifiers, n)
		var err error
		cores[i], err = approval.New(approval.Config{
			Asks: st, Grants: grants.NewRedisStore(client, grants.Options{}), Notifiers: []approval.Notifier{n},
			Timeout: 2 * time.Minute, SessionTTL: time.Hour, Logger: log,
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	approvers, _ := NewApprovers(ApproversConfig{Users: []string{approverA}})
	inter := NewInteractions(InteractionsConfig{Asks: stores[0], Notifier: notifiers[0], Approvers: approvers,
		API: fakeAPI(fake), Logger: log,
		Decider: testDecider(b, stores[0], notifiers[0], approvers, approval.SelfApproval{})})
	clicksURL := serveInteractions(b, fake.SigningSecret(), inter)

	start := time.Now()
	ids := make([]string, asks)
	var ended sync.WaitGroup
	for k := range asks {
		a, run := cores[k%replicas].Launch(b.Context(), bashRequest(fmt.Sprintf("run-%d", k), fmt.Sprintf("sess-%d", k), fmt.Sprintf("make step-%d", k)+strings.Repeat(" x", pad/2)), 0)
		ids[k] = a.ID
		ended.Add(1)
		run(b.Context(), func(pending.Ask) { ended.Done() })
	}
	var first, last time.Duration
	failed := 0 // ended unavailable, never shown: the calls fail closed
ids:
	for _, id := range ids { // the approver taps through them as they appear
		var a pending.Ask
		for {
			var err error
			if a, err = stores[0].Get(b.Context(), id); err == nil && a.MessageTS != "" {
				break
			}
			if _, done := a.Outcome(); done {
				failed++
				continue ids
			}
			time.Sleep(5 * time.Millisecond)
		}
		shown := time.Since(start)
		if first == 0 || shown < first {
			first = shown
		}
		last = max(last, shown)
		resp, err := fake.PostInteraction(b.Context(), clicksURL, fake.BlockActionsPayload(fakeslack.BlockActions{
			User: approverA, Channel: a.Channel, MessageTS: a.MessageTS, ActionID: ActionApprove, Value: id,
		}))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	ended.Wait()
	decided := time.Since(start)
	approved := 0
	for _, id := range ids {
		if a, _ := stores[0].Get(b.Context(), id); a.Status == pending.Status(pending.Approved) {
			approved++
		}
	}
	b.ReportMetric(float64(approved), "approved")
	b.ReportMetric(float64(failed), "never-shown")
	b.ReportMetric(first.Seconds(), "s-first-shown")
	b.ReportMetric(last.Seconds(), "s-last-shown")
	b.ReportMetric(decided.Seconds(), "s-all-decided")
	b.ReportMetric(float64(fake.RateLimited()), "429s")
	b.ReportMetric(float64(len(fake.Calls("chat.postMessage"))-fake.RateLimited()), "posts")
}
