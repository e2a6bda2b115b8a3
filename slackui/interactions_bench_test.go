package slackui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
)

// BenchmarkInteraction: a signed click POST → approver check → decision
// recorded in the store → 200, at a steady 500 requests/s, while the fake
// Slack takes 2 s to answer each chat.update (the update runs after the
// acknowledgement, so it must not show in the latency). Reports the click
// latency's p50 and p99.
//
//	go test -run '^$' -bench Interaction -benchtime 2000x ./slackui/
func BenchmarkInteraction(b *testing.B) {
	for _, store := range []string{"memory", "redis"} {
		b.Run(store, func(b *testing.B) { benchInteraction(b, store) })
	}
}

func benchInteraction(b *testing.B, store string) {
	const rate = 500 // requests per second
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	fake, err := fakeslack.Start(fakeslack.Options{SigningSecret: "bench-secret", SkipLimits: true})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	fake.SetDelay("chat.update", 2*time.Second)
	api := fakeAPI(fake)

	var asks pending.Store
	if store == "redis" {
		asks, _ = redisAsks(b, redistest.Start(b).URL(), pending.Options{Logger: log})
	} else {
		asks = pending.NewMemoryStore(pending.Options{Logger: log})
		defer asks.Close()
	}

	notifier := NewNotifier(api, NotifierConfig{ApprovalChannel: approvals, Logger: log, MaxAttempts: 1})
	approvers, err := NewApprovers(ApproversConfig{Users: []string{approverA}})
	if err != nil {
		b.Fatal(err)
	}
	inter := NewInteractions(InteractionsConfig{Asks: asks, Notifier: notifier, Approvers: approvers, API: api, Logger: log,
		Decider: testDecider(b, asks, notifier, approvers, approval.SelfApproval{})})
	defer inter.Close() // after the server: waits for the message updates the clicks started
	srv := httptest.NewServer(Verified(fake.SigningSecret(), time.Now, inter))
	defer srv.Close()

	// One open Ask with a posted message per click, and its signed click.
	reqs := make([]*http.Request, b.N)
	ids := make([]string, b.N)
	for i := range b.N {
		a, err := asks.Create(ctx, bashRequest(fmt.Sprintf("run-%d", i), "sess", "make deploy"), time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		ch, ts, err := api.PostMessageContext(ctx, approvals, slack.MsgOptionText("ask "+a.ID, false))
		if err != nil {
			b.Fatal(err)
		}
		if err := asks.SetMessage(ctx, a.ID, ch, ts); err != nil {
			b.Fatal(err)
		}
		payload := fake.BlockActionsPayload(fakeslack.BlockActions{
			User: approverA, Channel: ch, MessageTS: ts, ActionID: ActionApprove, Value: a.ID,
		})
		body := []byte(url.Values{"payload": {string(payload)}}.Encode())
		reqs[i], err = fake.SignedRequest(ctx, srv.URL+"/slack/interactions", "application/x-www-form-urlencoded", body, fakeslack.SignOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = a.ID
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}}
	defer client.CloseIdleConnections()

	latencies := make([]time.Duration, b.N)
	failures := make([]error, b.N)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Go(func() {
			start := time.Now()
			resp, err := client.Do(reqs[i])
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			latencies[i], failures[i] = time.Since(start), err
		})
	}
	wg.Wait()
	b.StopTimer()

	for i, err := range failures {
		if err != nil {
			b.Fatalf("click %d: %v", i, err)
		}
	}
	for _, id := range ids {
		a, err := asks.Get(ctx, id)
		if err != nil || a.Status != pending.Status(pending.Approved) {
			b.Fatalf("ask %s is %s (%v) after its click was answered", id, a.Status, err)
		}
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1.0), "max-ms")
	// The slow chat.updates are still running; Close waits for them, so the
	// fake Slack and the store outlive every background call.
	inter.Close()
}
