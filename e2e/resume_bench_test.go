package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// sequentialSamples is how many clicks the one-Ask case times, one after
// another (each on the run's next Ask), so its p99 is more than one sample.
const sequentialSamples = 50

// humanPause is how long the one-Ask case lets the replicas idle between
// an Ask's message being recorded and the click (a person takes seconds).
const humanPause = 50 * time.Millisecond

// BenchmarkClickToResume measures issue 14's path through the built binary:
// a signed Approve sent to replica B until the agent on replica A has run
// the approved write_file and sent its next request to the model (the
// request has arrived whole at the fake model, which timestamps it before
// decoding: decoding the conversation is the model's work).
//
//   - waiting=1: one run asks sequentialSamples times in a row; each Ask is
//     the only one open when it is clicked.
//   - waiting=100, 1000: that many runs (each in its own channel, so
//     Slack's per-channel pace does not serialize the posts) wait at once,
//     and their Asks are clicked one after another.
//
// Besides the push path (push) it prints, per click: the interaction's
// acknowledgement (click → 200, ack; the decision is durable and announced
// before it, so B's part of push is at most ack); with
// ASKOPS_BENCH_ANNOUNCED=1, when the decision was announced on Redis (click
// → PUBLISH seen by a third subscriber, announced; the rest of push is
// replica A's part); and, for scale, what creating and closing one file in
// the agent's workspace costs on this machine (fs-create, timed off the
// clock after each click: write_file's own share of push). In the same
// run, pollers that re-read the store every 1 s and every 3 s (as peers
// that poll do) watch the same Asks;
// their time from the click to seeing the decision is printed beside push,
// with the ratios. Run it with
//
//	go test ./e2e -run '^$' -bench ClickToResume -benchtime 1x
//
// With ASKOPS_BENCH_PROFILE=DIR the bot is built with the askops_pprof tag
// and both replicas write CPU, block and mutex profiles of the click phase
// only into DIR (see cmd/bot/profile.go).
func BenchmarkClickToResume(b *testing.B) {
	for _, waiting := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			for range b.N {
				clickToResume(b, waiting)
			}
		})
	}
}

func clickToResume(b *testing.B, waiting int) {
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	w := newWorld(b)
	runs, steps := waiting, 1
	if waiting == 1 {
		steps = sequentialSamples
	}
	var mu sync.Mutex
	resumed := map[string]chan time.Time{}
	for i := range runs {
		tag := fmt.Sprintf("e2e-resume-%d", i)
		ch := make(chan time.Time, steps)
		resumed[tag] = ch
		w.script.onTimed(tag, func(step int, received time.Time) fakeopenai.Reply {
			if step > 0 {
				mu.Lock()
				select {
				case ch <- received: // the model's next request arrived: the agent went on
				default:
				}
				mu.Unlock()
			}
			if step < steps {
				return fakeopenai.Call(fakeopenai.ToolCall{ID: fmt.Sprintf("c%d", step), Name: "write_file",
					Arguments: fmt.Sprintf(`{"path":"resume-%d-%d.txt","content":"x"}`, i, step)})
			}
			return fakeopenai.Text("written")
		})
	}
	s := settings{Timeout: "5m", MaxIterations: steps + 2}
	a := w.serve(ctx, b, "A", s)
	bRep := w.serve(ctx, b, "B", s)
	for i := range runs {
		code, body := w.slashIn(ctx, b, a.base, fmt.Sprintf("CRESUME%d", i), approverID, fmt.Sprintf("run e2e-resume-%d: write the file", i))
		if code != 200 {
			b.Fatalf("/askops run %d: %d %s", i, code, body)
		}
	}
	clicked := map[string]bool{} // Ask ids already clicked
	openAsks := func() []fakeslack.Message {
		return slices.DeleteFunc(w.slack.Messages(), func(m fakeslack.Message) bool { id := askID(m.Blocks); return id == "" || clicked[id] })
	}
	var asks []fakeslack.Message
	testwait.Until(ctx, b, fmt.Sprintf("%d open Asks", runs), func() bool { asks = openAsks(); return len(asks) >= runs })

	store, client, closeStore := w.openAskStore(ctx, b)
	defer closeStore()

	// With ASKOPS_BENCH_ANNOUNCED=1 a third subscriber to the decisions
	// channel timestamps each announcement: the point where B's part ends
	// and A's begins. It is off by default because it is one more process
	// woken at that very moment on this 2-core machine, in this one, beside
	// the fakes: it lengthened the path it measures (the execution traces
	// of A, B and this process).
	announced := map[string]time.Time{}
	var amu sync.Mutex
	timeAnnouncements := os.Getenv("ASKOPS_BENCH_ANNOUNCED") == "1"
	if timeAnnouncements {
		sub := client.Subscribe(ctx, "askops:{askops}:decided")
		if _, err := sub.Receive(ctx); err != nil {
			b.Fatal(err)
		}
		var listening sync.WaitGroup
		listening.Go(func() {
			for msg := range sub.Channel() {
				at := time.Now()
				// The record's announcement comes first, the id alone after.
				id, _, _ := strings.Cut(msg.Payload, "\n")
				amu.Lock()
				if _, seen := announced[id]; !seen {
					announced[id] = at
				}
				amu.Unlock()
			}
		})
		defer func() { sub.Close(); listening.Wait() }()
	}

	var push, ack, pub, fsCreate []time.Duration
	pollIntervals := []time.Duration{time.Second, 3 * time.Second}
	polled := map[time.Duration][]time.Duration{} // by interval; written under pmu
	var pollers sync.WaitGroup
	var pmu sync.Mutex
	clicker := &http.Client{Transport: &http.Transport{}}
	defer clicker.CloseIdleConnections()
	// Slack keeps its connections to the app open: so does the clicker,
	// which opens its one before the clock starts.
	if resp, err := clicker.Get(bRep.base + "/healthz"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	prof := startProfiles(b, a.proc, bRep.proc)
	b.ResetTimer()
	for k := range runs * steps {
		var m fakeslack.Message
		if waiting > 1 {
			m = asks[k]
		} else if k > 0 {
			testwait.Until(ctx, b, "the run's next Ask", func() bool { asks = openAsks(); return len(asks) > 0 })
			m = asks[0]
		} else {
			m = asks[0]
		}
		id := askID(m.Blocks)
		clicked[id] = true
		tag := "e2e-resume-" + strings.TrimPrefix(m.Channel, "CRESUME")
		if waiting == 1 {
			// A person reads the Ask before clicking: the click comes
			// once replica A has recorded the message and has been idle
			// a moment, not while it is still finishing the post (its
			// HTTP reply, the message's save, the wait's first read),
			// which the bench would otherwise time as part of the path.
			testwait.Until(ctx, b, "the message of "+id+" recorded", func() bool {
				got, err := store.Get(ctx, id)
				return err == nil && got.MessageTS != ""
			})
			time.Sleep(humanPause)
		}
		// Slack's part (the payload, its signature) is made before the
		// clock starts.
		req, err := w.slack.SignedRequest(ctx, bRep.base+"/slack/interactions", "application/x-www-form-urlencoded",
			clickBody(w, m, slackui.ActionApprove), fakeslack.SignOptions{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for _, every := range pollIntervals {
			pollers.Go(func() {
				// A poller's phase is unrelated to the click: its first
				// read comes a random part of its interval after it.
				t := time.NewTimer(time.Duration(int64(every) * int64((k*7919)%1000) / 1000))
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
					if got, err := store.Get(ctx, id); err == nil && got.Status != pending.StatusPending {
						pmu.Lock()
						polled[every] = append(polled[every], time.Since(start))
						pmu.Unlock()
						return
					}
					t.Reset(every)
				}
			})
		}
		resp, err := clicker.Do(req)
		if err != nil {
			b.Fatalf("click: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ack = append(ack, time.Since(start))
		if resp.StatusCode != 200 {
			b.Fatalf("click: %s", resp.Status)
		}
		select {
		case at := <-resumed[tag]:
			push = append(push, at.Sub(start))
		case <-ctx.Done():
			b.Fatalf("the agent of %s never resumed", tag)
		}
		settle(ctx, b, w, m, waiting > 1)
		fsCreate = append(fsCreate, createFile(b, w.ws, k))
		if timeAnnouncements {
			testwait.Until(ctx, b, "the announcement of "+id, func() bool {
				amu.Lock()
				defer amu.Unlock()
				at, ok := announced[id]
				if ok {
					pub = append(pub, at.Sub(start))
				}
				return ok
			})
		}
	}
	b.StopTimer()
	prof.stop()
	pollers.Wait()
	b.Logf("load after the clicks: %s", loadavg())
	report := func(name string, ds []time.Duration) time.Duration {
		if len(ds) == 0 {
			return 0
		}
		slices.Sort(ds)
		p50, p99, mx := ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)], ds[len(ds)-1]
		b.ReportMetric(float64(p50.Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, name+"-p99-ms")
		b.Logf("%-10s p50 %9s  p99 %9s  max %9s  (%d clicks)", name, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), mx.Round(10*time.Microsecond), len(ds))
		return p50
	}
	p := report("push", push)
	report("ack", ack)
	report("announced", pub)
	report("fs-create", fsCreate)
	for _, every := range pollIntervals {
		q := report(fmt.Sprintf("poll-%s", every), polled[every])
		b.ReportMetric(float64(q)/float64(p), fmt.Sprintf("poll%s/push-p50", every))
		b.Logf("poll every %s / push at p50: %.0fx", every, float64(q)/float64(p))
	}
}

// loadavg is the first three fields of /proc/loadavg ("?" elsewhere): the
// machine is shared, and numbers without the load they ran under mislead.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// clickBody is the form Slack posts when approverID clicks action on the
// Ask message m.
func clickBody(w *world, m fakeslack.Message, action string) []byte {
	payload := w.slack.BlockActionsPayload(fakeslack.BlockActions{
		User: approverID, Channel: m.Channel, MessageTS: m.TS, ActionID: action, Value: askID(m.Blocks),
	})
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}

// settle waits, off the clock, until the work a click sets off besides the
// agent's next step is done: the Ask message has lost its buttons and, when
// the run ends with this step (runEnds), its answer is posted and its
// status message says finished. Humans click seconds apart, so each timed
// click should find the replicas idle, not busy with the previous click's
// message updates (the interaction benchmark in slackui measures clicks
// arriving back to back).
func settle(ctx context.Context, b *testing.B, w *world, m fakeslack.Message, runEnds bool) {
	b.Helper()
	w.waitDecided(ctx, b, m)
	if !runEnds {
		return
	}
	for _, c := range []struct{ method, text string }{{"chat.postMessage", "written"}, {"chat.update", "finished"}} {
		if _, err := w.slack.WaitForCall(ctx, c.method, func(call fakeslack.Call) bool {
			return call.OK() && call.Channel == m.Channel && strings.Contains(call.Text, c.text)
		}); err != nil {
			b.Fatalf("run in %s: no %s saying %q: %v", m.Channel, c.method, c.text, err)
		}
	}
}

// createFile times creating and closing one new file in dir, as write_file
// does for a new path.
func createFile(b *testing.B, dir string, k int) time.Duration {
	b.Helper()
	start := time.Now()
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("fs-probe-%d.txt", k)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}
