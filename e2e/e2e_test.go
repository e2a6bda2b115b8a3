package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/slackui"
)

// testCtx bounds one test; every wait inside it ends by then.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestApproveOnOtherReplica (scenarios 1 and 2): a run started with
// /askops run on replica A asks in its thread; Approve delivered to replica
// B resumes A's agent and the command runs; a plain approval does not cover
// the next identical call, "Approve for session" does: the third identical
// call runs without a new Ask message.
func TestApproveOnOtherReplica(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	const command = "echo hi >> marker.txt"
	w.script.on("e2e-approve", steps(
		bash("c1", command), bash("c2", command), bash("c3", command),
		fakeopenai.Text("appended hi three times"),
	))
	a := w.serve(ctx, t, "A", settings{})
	b := w.serve(ctx, t, "B", settings{})
	marker := filepath.Join(w.ws, "marker.txt")

	w.startRun(ctx, t, a, "e2e-approve: append hi to marker.txt three times")
	ask1 := w.waitOpenAsk(ctx, t, "marker.txt")
	if ask1.Channel != opsChannel || ask1.ThreadTS == "" {
		t.Fatalf("the Ask was posted in %s thread %q, want a thread in %s", ask1.Channel, ask1.ThreadTS, opsChannel)
	}
	inThread := false
	for _, m := range w.slack.Thread(opsChannel, ask1.ThreadTS) {
		inThread = inThread || m.TS == ask1.TS
	}
	if _, ok := w.slack.Message(opsChannel, ask1.ThreadTS); !ok || !inThread {
		t.Fatalf("the Ask is not a reply in the run's thread (parent found: %v)", ok)
	}
	if n := lines(t, marker); n != 0 {
		t.Fatalf("the command ran %d times before anyone approved", n)
	}

	// 1. Approve, delivered to B; the agent waiting on A resumes.
	if resp := w.click(ctx, t, b.base, ask1, approverID, slackui.ActionApprove); resp.StatusCode != http.StatusOK {
		t.Fatalf("approve on B: %s", resp.Status)
	}
	waitFor(ctx, t, "the approved command to run once", func() bool { return lines(t, marker) >= 1 })
	w.waitDecided(ctx, t, ask1, "Approved", approverID)

	// 2. A plain approval covers one call: the identical second call asks
	// again. Approve it for the session.
	ask2 := w.waitOpenAsk(ctx, t, "marker.txt", ask1)
	if ask2.ThreadTS != ask1.ThreadTS {
		t.Errorf("the second Ask is in thread %q, want %q", ask2.ThreadTS, ask1.ThreadTS)
	}
	if resp := w.click(ctx, t, b.base, ask2, approverID, slackui.ActionApproveSession); resp.StatusCode != http.StatusOK {
		t.Fatalf("approve for session on B: %s", resp.Status)
	}
	w.waitDecided(ctx, t, ask2, "Approved for session", approverID)

	// The third identical call runs on the grant: no new Ask message.
	w.waitAnswer(ctx, t, ask1.ThreadTS, "appended hi three times")
	if n := lines(t, marker); n != 3 {
		t.Errorf("marker.txt has %d lines, want 3 (one per approved or granted call)", n)
	}
	if n := w.askPosts(); n != 2 {
		t.Errorf("%d Ask messages were posted, want 2 (the granted call must not ask)", n)
	}

	// The run lived on A: A counted it and waited on the Asks; B only took
	// the clicks.
	ma, mb := a.metrics(ctx, t), b.metrics(ctx, t)
	for _, want := range []string{
		`askops_runs_total{state="finished"} 1`,
		`askops_asks_total{outcome="approved"} 1`,
		`askops_asks_total{outcome="approved_session"} 1`,
	} {
		if !strings.Contains(ma, want) {
			t.Errorf("A's /metrics lacks %s", want)
		}
	}
	if strings.Contains(mb, `askops_runs_total{state="finished"}`) {
		t.Errorf("B counts a finished run; the run should have lived on A")
	}

	// SIGTERM: both replicas drain and exit 0.
	if code := b.terminate(); code != 0 {
		t.Errorf("B exited %d after SIGTERM", code)
	}
	if code := a.terminate(); code != 0 {
		t.Errorf("A exited %d after SIGTERM", code)
	}
}

// silence unused imports until the other scenarios land.
var _ = fakeslack.SignOptions{}
