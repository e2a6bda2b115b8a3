package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askops/askops/gateway/hook"
)

// serveLocal starts `bot serve` with no Slack (the local console and the
// local endpoint `bot hook` finds without -url, through
// $ASKOPS_LOCAL_ENDPOINT, which the caller sets for the serve and its
// agents) in policy mode, and waits until the endpoint file names it and
// its /readyz answers 200.
func serveLocal(ctx context.Context, t *testing.T, mode string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "askops.yaml")
	body := fmt.Sprintf("console:\n  listen: %q\npolicy:\n  mode: %s\n", freePort(t), mode)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "local-"+mode, nil, "serve", "-config", cfg)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if p.exited() {
			t.Fatalf("the local serve exited with code %d:\n%s", p.code(), tail(p.stderr(), 8000))
		}
		if ep, err := hook.ReadLocalEndpoint(os.Getenv); err == nil {
			if code, _, err := httpGet(ctx, ep.URL+"/readyz"); err == nil && code == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the local serve never became ready: %v\n%s", ctx.Err(), tail(p.stderr(), 8000))
		case <-tick.C:
		}
	}
}

// policy.mode holds for the real agents' hooks on the serve without Slack,
// as it does with Slack: in mode full the command runs without an Ask, in
// mode never it is denied without one (the local endpoint judged every
// hook in mode ask before). No test here clicks: an Ask would hold the
// agent until its hook's timeout and fail the test.
func TestRealAgentsOnTheLocalEndpointFollowPolicyMode(t *testing.T) {
	claude, codex := claudeBinary(t), codexBinary(t)
	ctx := testCtxFor(t, 240*time.Second)
	for _, tc := range []struct {
		mode   string
		ran    bool
		result string // in what the agent hands the model back
	}{
		{"full", true, ""},
		{"never", false, "mode never"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv("ASKOPS_LOCAL_ENDPOINT", filepath.Join(t.TempDir(), "local.json"))
			serveLocal(ctx, t, tc.mode)

			t.Run("claude", func(t *testing.T) {
				project := t.TempDir()
				model := &fakeMessages{command: "git push origin main"}
				settings := claudeHooks([2]string{"PreToolUse",
					fmt.Sprintf(`{"type":"command","command":"%s hook claude","timeout":60,"onFailure":"block"}`, botBinary)})
				run := startClaude(ctx, t, claude, project, settings, model)
				run.wait(t)
				want := tc.result
				if tc.ran {
					want = "not a git repository" // git's own error: the command ran
				}
				model.replies.wantLast(t, "tool results", want, "stdout "+run.out.String())
			})
			t.Run("codex", func(t *testing.T) {
				project := t.TempDir()
				marker := filepath.Join(project, "released")
				model := &fakeResponses{cmd: "touch " + marker, justification: "create the release marker"}
				run := startCodex(ctx, t, codex, project, "", model, 60) // no URL: the local endpoint
				run.wait(t)
				if _, err := os.Stat(marker); (err == nil) != tc.ran {
					t.Errorf("the command ran: %v, want %v\nstderr %s", err == nil, tc.ran, run.errOut.String())
				}
				model.replies.wantLast(t, "function_call_output", tc.result, "stderr "+run.errOut.String())
			})
		})
	}
}
