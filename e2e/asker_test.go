package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// killRuns is how many times TestKilledAskerEndsItsAsk kills each kind of
// asker: 1, or $ASKOPS_E2E_KILL_RUNS to measure (it logs p50 and max).
func killRuns() int {
	if n, err := strconv.Atoi(os.Getenv("ASKOPS_E2E_KILL_RUNS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// TestKilledAskerEndsItsAsk: an Ask lives only while its asker waits. A
// `bot hook codex` killed with SIGKILL (as Codex does at its timeout), and
// a serve killed while Claude Code's HTTP hook waits on it, each leave an
// Ask that the other replica ends cancelled — "the agent stopped waiting" —
// with its message's buttons gone; a decision after that is refused with
// the reason. With the default sweep_interval (15s) and lease (6s).
func TestKilledAskerEndsItsAsk(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtxFor(t, time.Duration(60+40*killRuns())*time.Second)
	b := w.serve(ctx, t, "asker-b", settings{Extra: apiBlock, Timeout: "10m", SweepInterval: "15s"})

	var hookGone, serveGone []time.Duration
	for i := range killRuns() {
		// A hook killed while it long polls replica A.
		a := w.serve(ctx, t, fmt.Sprintf("asker-a%d", i), settings{Extra: apiBlock, Timeout: "10m", SweepInterval: "15s"})
		command := fmt.Sprintf("terraform destroy -target=module.db%d", i)
		event := `{"session_id":"codex-kill","cwd":"` + w.ws + `","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"` + command + `"}}`
		hook := exec.CommandContext(ctx, botBinary, "hook", "codex", "-url", a.base)
		hook.Env = append(childEnv(), "ASKOPS_TOKEN="+anaToken)
		hook.Stdin = strings.NewReader(event)
		var out bytes.Buffer
		hook.Stdout, hook.Stderr = &out, &out
		if err := hook.Start(); err != nil {
			t.Fatal(err)
		}
		m := w.waitOpenAsk(ctx, t, command)
		killed := time.Now()
		if err := hook.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = hook.Wait()
		w.waitDecided(ctx, t, m, "Cancelled", pending.ReasonAskerGone)
		hookGone = append(hookGone, time.Since(killed))
		refusedAfter(ctx, t, b.base, askID(m.Blocks))

		// A serve killed while the HTTP hook's Ask waits in it.
		command = fmt.Sprintf("kubectl delete ns prod-%d", i)
		go func() {
			body := `{"session_id":"claude-kill","cwd":"` + w.ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + command + `"},"tool_use_id":"t1"}`
			req, _ := http.NewRequestWithContext(ctx, "POST", a.base+"/v1/hooks/claude", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+anaToken)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		m = w.waitOpenAsk(ctx, t, command)
		// Killed once the Ask's message is recorded (its permalink is
		// known): a serve killed between its post and that record leaves
		// a message nobody can find to update (a known window).
		testwait.Until(ctx, t, "the Ask's message recorded", func() bool {
			_, body := apiDo(ctx, t, "GET", b.base+"/v1/asks/"+askID(m.Blocks), consoleToken, nil)
			u, _ := body["message_url"].(string)
			return u != ""
		})
		killed = time.Now()
		a.kill9(t)
		w.waitDecided(ctx, t, m, "Cancelled", pending.ReasonAskerGone)
		serveGone = append(serveGone, time.Since(killed))
		refusedAfter(ctx, t, b.base, askID(m.Blocks))
	}
	t.Logf("kill -9 of a waiting bot hook -> its Ask cancelled on the other replica: %s", spread(hookGone))
	t.Logf("kill -9 of the serve an HTTP hook waits on -> its Ask cancelled by the other replica: %s", spread(serveGone))
}

// refusedAfter checks that a decision on the cancelled Ask id, through
// replica base's API, is refused with the reason.
func refusedAfter(ctx context.Context, t *testing.T, base, id string) {
	t.Helper()
	status, body := apiDo(ctx, t, "POST", base+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve"})
	if status != http.StatusConflict || !strings.Contains(fmt.Sprint(body), pending.ReasonAskerGone) {
		t.Errorf("approving the Ask of a gone asker: %d %v", status, body)
	}
}

func spread(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("n=%d p50=%s max=%s all=%v", len(s), s[len(s)/2].Round(10*time.Millisecond), s[len(s)-1].Round(10*time.Millisecond), s)
}
