package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// TestKilledAgentEndsItsHooksAsk: an Ask dies with its asker, whatever
// kills the agent. The real Codex and Claude Code, each waiting on `bot
// hook` for a human, are killed with SIGTERM and with SIGKILL; neither
// stops its hook, which notices on its own (its parent gone, or nobody left
// to read its answer) and cancels its Ask: "the agent stopped waiting", and
// an approval after that is refused, so history never says approved for a
// call that never ran. A hook left running keeps polling, which keeps its
// Ask's lease, so only the hook noticing ends the Ask before its 60 s. How
// long that took is logged (-v; $ASKOPS_E2E_KILL_RUNS runs of each),
// never asserted.
func TestKilledAgentEndsItsHooksAsk(t *testing.T) {
	codex, claude := codexBinary(t), claudeBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, time.Duration(120+120*killRuns())*time.Second)
	a := w.serve(ctx, t, "death-a", settings{Extra: apiBlock, SweepInterval: "10m"})
	for _, agent := range []string{"codex", "claude"} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			var took []time.Duration
			for range killRuns() {
				took = append(took, agentKilled(ctx, t, w, a, agent, sig, codex, claude))
			}
			t.Logf("%s killed with %s -> its Ask cancelled: %s", agent, sig, spread(took))
		}
	}
}

// agentKilled runs agent (codex or claude) until its hook waits on an
// Ask on a, kills it with sig, and returns how long its Ask took to end.
func agentKilled(ctx context.Context, t *testing.T, w *world, a *replica, agent string, sig syscall.Signal, codex, claude string) (took time.Duration) {
	t.Run(agent+"/"+sig.String(), func(t *testing.T) {
		project := t.TempDir()
		command := fmt.Sprintf("touch %s", filepath.Join(project, "released"))
		var run *agentRun
		var replies *agentReplies
		if agent == "codex" {
			model := &fakeResponses{cmd: command, justification: "release"}
			run, replies = startCodex(ctx, t, codex, project, a.base, model, 120), &model.replies
		} else {
			// `bot hook claude` asks a as its PermissionRequest hook.
			model := &fakeMessages{command: command}
			run, replies = startClaude(ctx, t, claude, project, claudeHooks([2]string{"PermissionRequest", botHookClaude(a.base, 120)}), model), &model.replies
		}
		started, done := run.cmd, run.done
		m := w.waitAgentAsk(ctx, t, run, command, replies)
		id := askID(m.Blocks)
		hook := findHook(t, started.Process.Pid)
		target := started.Process.Pid
		if agent == "codex" {
			// The npm package's launcher runs the native Codex as
			// its child on older Node; the hook's parent is Codex.
			target = ppidOf(hook)
		}
		killed := time.Now()
		if err := syscall.Kill(target, sig); err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		testwait.For(t, "the killed agent's Ask to end", func() bool {
			_, rec = apiDo(ctx, t, "GET", a.base+"/v1/asks/"+id, consoleToken, nil)
			return rec["status"] != nil && rec["status"] != "pending"
		})
		took = time.Since(killed)
		if rec["status"] != "cancelled" || rec["reason"] != pending.ReasonAskerGone {
			t.Errorf("the killed agent's Ask: %v", rec)
		}
		status, body := apiDo(ctx, t, "POST", a.base+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve"})
		if status != http.StatusConflict {
			t.Errorf("approving the killed agent's Ask: %d %v", status, body)
		}
		testwait.Until(ctx, t, "the hook to exit", func() bool { return !alive(hook) })
		if target != started.Process.Pid {
			_ = started.Process.Kill() // the launcher, if Codex was its child
		}
		<-done
	})
	return took
}

// findHook returns the pid of the `bot hook` running under the process
// root (its child, or further down).
func findHook(t *testing.T, root int) int {
	t.Helper()
	var hook int
	testwait.For(t, "the agent's bot hook process", func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			argv, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			args := strings.Split(string(argv), "\x00")
			if len(args) > 1 && args[0] == botBinary && args[1] == "hook" && descends(pid, root) {
				hook = pid
				return true
			}
		}
		return false
	})
	return hook
}

// descends says whether pid runs under root.
func descends(pid, root int) bool {
	for range 64 {
		if pid == root {
			return true
		}
		if pid <= 1 {
			return false
		}
		pid = ppidOf(pid)
	}
	return false
}

// ppidOf is pid's parent, 0 if pid is gone.
func ppidOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// alive says whether pid still runs (a zombie has ended).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
