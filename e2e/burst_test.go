package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

// A burst through the built binaries: 50 agents ask at once through the
// API, each a new session, half on each of two replicas sharing one Redis,
// into one approval channel of a fake Slack that holds the app to Slack's
// published rate limits. Every Ask becomes visible with working buttons
// (on its own message or in a shared "Asks waiting" message), none ends
// unshown, and one approver tapping through them all decides every one; the
// callers' long polls on the replica that created each Ask read the
// approval.
// The times are logged, not asserted (BenchmarkBurst measures them).
func TestBurstAcrossReplicas(t *testing.T) {
	const asks = 50
	w := newWorldWith(t, fakeslack.Options{RateLimits: &fakeslack.RateLimits{}})
	ctx := testCtxFor(t, 4*time.Minute)
	replicas := []*replica{
		w.serve(ctx, t, "burst-a", settings{Extra: apiBlock, Timeout: "3m"}),
		w.serve(ctx, t, "burst-b", settings{Extra: apiBlock, Timeout: "3m"}),
	}

	start := time.Now()
	ids := make([]string, asks)
	ended := make([]map[string]any, asks)
	var created, polled sync.WaitGroup
	for k := range asks {
		created.Go(func() {
			r := replicas[k%2]
			status, body := apiDo(ctx, t, "POST", r.base+"/v1/asks", anaToken, map[string]any{
				"session_id": fmt.Sprintf("burst-%02d", k), "agent": "Claude Code", "tool": "Bash",
				"input": map[string]any{"command": fmt.Sprintf("make deploy-%02d", k)}, "cwd": w.ws, "timeout": "3m",
			})
			if status != http.StatusCreated {
				t.Errorf("create %d on replica %d: %d %v", k, k%2, status, body)
				return
			}
			ids[k], _ = body["id"].(string)
			// The caller long polls until its Ask ends, as bot hook does
			// (an Ask nobody polls ends cancelled when its lease lapses).
			polled.Go(func() {
				for ctx.Err() == nil {
					status, got := apiDo(ctx, t, "GET", r.base+"/v1/asks/"+ids[k]+"?wait=20s", anaToken, nil)
					if status == http.StatusOK && got["status"] != "pending" {
						ended[k] = got
						return
					}
				}
			})
		})
	}
	created.Wait()
	if t.Failed() {
		t.FailNow()
	}
	createdIn := time.Since(start)

	// Where each Ask's Approve button is, as the approver would find it.
	shownAt := map[string]time.Duration{}
	where := map[string]fakeslack.Message{}
	testwait.Until(ctx, t, "every Ask visible with its buttons", func() bool {
		for _, m := range w.slack.Messages() {
			for _, id := range approveValues(m.Blocks) {
				if _, seen := shownAt[id]; !seen {
					shownAt[id] = time.Since(start)
				}
				where[id] = m
			}
		}
		for _, id := range ids {
			if _, ok := where[id]; !ok {
				return false
			}
		}
		return true
	})
	var times []time.Duration
	for _, id := range ids {
		times = append(times, shownAt[id])
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })

	// One approver taps through them, each click on the replica that did
	// not create the Ask.
	for k, id := range ids {
		m := where[id]
		payload := w.slack.BlockActionsPayload(fakeslack.BlockActions{
			User: approverID, Channel: m.Channel, MessageTS: m.TS, ActionID: slackui.ActionApprove, Value: id,
		})
		resp, err := w.slack.PostInteraction(ctx, replicas[(k+1)%2].base+"/slack/interactions", payload)
		if err != nil {
			t.Fatalf("click %s: %v", id, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("click %s: HTTP %d", id, resp.StatusCode)
		}
	}
	polled.Wait()
	for k, got := range ended {
		if got["status"] != "approved" || got["decided_by"] != approverID {
			t.Errorf("ask %d (%s) ended %v by %v (%v), want approved by %s", k, ids[k], got["status"], got["decided_by"], got["decision_reason"], approverID)
		}
	}
	t.Logf("%d Asks on 2 replicas: created in %v; first visible %v, last %v; all decided %v; %d answers 429 from the fake Slack",
		asks, createdIn.Round(time.Millisecond), times[0].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), w.slack.RateLimited())
}
