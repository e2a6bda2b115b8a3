package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// BenchmarkClickToResume measures issue 14's path through the built binary:
// a signed Approve sent to replica B until the agent on replica A has run
// the approved write_file and sent its next request to the model, with
// `waiting` Asks open at once (one run each, each in its own channel so
// Slack's per-channel pace does not serialize the posts). In the same run,
// pollers that re-read the store every 1 s and every 3 s (as peers that
// poll do) watch the same Asks; their time from the click to seeing the
// decision is printed beside askops' push wake-up. Run it with
//
//	go test ./e2e -run '^$' -bench ClickToResume -benchtime 1x
func BenchmarkClickToResume(b *testing.B) {
	for _, waiting := range []int{1, 100} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			for range b.N {
				clickToResume(b, waiting)
			}
		})
	}
}

func clickToResume(b *testing.B, waiting int) {
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	w := newWorld(b)
	var mu sync.Mutex
	resumed := map[string]chan time.Time{}
	for i := range waiting {
		tag := fmt.Sprintf("e2e-resume-%d", i)
		ch := make(chan time.Time, 1)
		resumed[tag] = ch
		w.script.on(tag, func(step int) fakeopenai.Reply {
			if step == 0 {
				return fakeopenai.Call(fakeopenai.ToolCall{ID: "c1", Name: "write_file",
					Arguments: fmt.Sprintf(`{"path":"resume-%d.txt","content":"x"}`, i)})
			}
			mu.Lock()
			select {
			case ch <- time.Now(): // the model's second request: the agent went on
			default:
			}
			mu.Unlock()
			return fakeopenai.Text("written")
		})
	}
	a := w.serve(ctx, b, "A", settings{Timeout: "5m"})
	bRep := w.serve(ctx, b, "B", settings{Timeout: "5m"})
	for i := range waiting {
		code, body := w.slashIn(ctx, b, a.base, fmt.Sprintf("CRESUME%d", i), approverID, fmt.Sprintf("run e2e-resume-%d: write the file", i))
		if code != 200 {
			b.Fatalf("/askops run %d: %d %s", i, code, body)
		}
	}
	waitFor(ctx, b, fmt.Sprintf("%d open Asks", waiting), func() bool {
		n := 0
		for _, m := range w.slack.Messages() {
			if askID(m.Blocks) != "" {
				n++
			}
		}
		return n >= waiting
	})
	asks := slices.DeleteFunc(w.slack.Messages(), func(m fakeslack.Message) bool { return askID(m.Blocks) == "" })

	client, err := pending.OpenRedis(w.redis.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	store, err := pending.NewRedisStore(ctx, client, pending.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()

	var push []time.Duration
	polled := map[time.Duration][]time.Duration{time.Second: nil, 3 * time.Second: nil}
	var pollers sync.WaitGroup
	var pmu sync.Mutex
	b.ResetTimer()
	for i, m := range asks {
		id := askID(m.Blocks)
		tag := "e2e-resume-" + strings.TrimPrefix(m.Channel, "CRESUME")
		clicked := time.Now()
		for every := range polled {
			pollers.Go(func() {
				// A poller's phase is unrelated to the click: its first
				// read comes a random part of its interval after it.
				t := time.NewTimer(time.Duration(int64(every) * int64((i*7919)%1000) / 1000))
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
					if got, err := store.Get(ctx, id); err == nil && got.Status != pending.StatusPending {
						pmu.Lock()
						polled[every] = append(polled[every], time.Since(clicked))
						pmu.Unlock()
						return
					}
					t.Reset(every)
				}
			})
		}
		if resp := w.click(ctx, b, bRep.base, m, approverID, slackui.ActionApprove); resp.StatusCode != 200 {
			b.Fatalf("click: %s", resp.Status)
		}
		select {
		case at := <-resumed[tag]:
			push = append(push, at.Sub(clicked))
		case <-ctx.Done():
			b.Fatalf("the agent of %s never resumed", tag)
		}
	}
	b.StopTimer()
	pollers.Wait()
	report := func(name string, ds []time.Duration) time.Duration {
		slices.Sort(ds)
		p50, p99, mx := ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)], ds[len(ds)-1]
		b.ReportMetric(float64(p50.Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, name+"-p99-ms")
		b.Logf("%-12s p50 %8s  p99 %8s  max %8s  (%d Asks)", name, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), mx.Round(10*time.Microsecond), len(ds))
		return p50
	}
	p := report("push", push)
	for _, every := range []time.Duration{time.Second, 3 * time.Second} {
		q := report(fmt.Sprintf("poll-%s", every), polled[every])
		b.Logf("poll every %s / push at p50: %.0fx", every, float64(q)/float64(p))
	}
}
