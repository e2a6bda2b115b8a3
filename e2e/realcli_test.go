package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
)

// claudeBinary is the real Claude Code CLI (.ci/run installs
// @anthropic-ai/claude-code@2.1.332 and sets ASKOPS_CLAUDE_BIN).
func claudeBinary(t *testing.T) string {
	t.Helper()
	return realCLI(t, "ASKOPS_CLAUDE_BIN", "claude", "npm install @anthropic-ai/claude-code@2.1.332")
}

// codexBinary is the real Codex CLI (.ci/run installs @openai/codex@0.171.0
// and sets ASKOPS_CODEX_BIN).
func codexBinary(t *testing.T) string {
	t.Helper()
	return realCLI(t, "ASKOPS_CODEX_BIN", "codex", "npm install @openai/codex@0.171.0")
}

// realCLI is the path of an agent's real CLI: the variable env names it, or
// it is found as name on PATH. Without it the test skips on a developer's
// machine and fails in CI (CI=true), where .ci/run installs the pinned
// versions: a real-CLI check that silently skips proves nothing.
func realCLI(t *testing.T, env, name, install string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := "the " + name + " CLI is not installed (" + install + "; or set " + env + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// agentRun is a real agent CLI (Claude Code or Codex) running as the
// test's child. Its output is kept for the failure messages, and done
// receives its exit (cmd.Wait's error) once.
type agentRun struct {
	name        string // "claude" or "codex", for messages
	cmd         *exec.Cmd
	done        chan error
	out, errOut bytes.Buffer
}

// startAgent starts cmd, the agent CLI called name, capturing its stdout
// and stderr. The tests of both CLIs start, wait on and report their
// agent the same way, so they share this.
func startAgent(t *testing.T, name string, cmd *exec.Cmd) *agentRun {
	t.Helper()
	r := &agentRun{name: name, cmd: cmd, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = &r.out, &r.errOut
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { r.done <- cmd.Wait() }()
	return r
}

// output is the agent's stdout and stderr so far, for a failure message.
func (r *agentRun) output() string {
	return "stdout " + r.out.String() + "\nstderr " + r.errOut.String()
}

// wait waits for the agent to exit and fails the test if it failed.
func (r *agentRun) wait(t *testing.T) {
	t.Helper()
	if err := <-r.done; err != nil {
		t.Fatalf("%s: %v\n%s", r.name, err, r.output())
	}
}

// waitAskOrExit waits for an open Ask about want, or for the run's exit
// (exited true, with its error).
func (w *world) waitAskOrExit(ctx context.Context, t *testing.T, want string, done chan error) (m fakeslack.Message, exited bool, runErr error) {
	t.Helper()
	testwait.Until(ctx, t, "an Ask about "+want+", or the agent's exit", func() bool {
		select {
		case runErr = <-done:
			exited = true
			return true
		default:
		}
		for _, msg := range w.slack.Messages() {
			if askID(msg.Blocks) != "" && strings.Contains(text(msg), want) {
				m = msg
				return true
			}
		}
		return false
	})
	return m, exited, runErr
}

// waitAgentAsk waits for the open Ask about want that the agent's hook
// must post; the agent exiting first fails the test, with its output and
// the model's side (replies) in the message.
func (w *world) waitAgentAsk(ctx context.Context, t *testing.T, r *agentRun, want string, replies *agentReplies) fakeslack.Message {
	t.Helper()
	m, exited, err := w.waitAskOrExit(ctx, t, want, r.done)
	if exited {
		t.Fatalf("%s exited without asking: %v\n%s\nreplies to the model %q", r.name, err, r.output(), replies.all())
	}
	return m
}

// agentReplies records what an agent CLI sent back to a fake model API
// (Claude Code's tool results, Codex's function_call_output items). The
// API's handler adds, the test reads: it is safe for both at once.
type agentReplies struct {
	mu  sync.Mutex
	got []string
}

func (r *agentReplies) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
}

// all is a copy of the replies so far, oldest first.
func (r *agentReplies) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// wantLast fails the test unless there is a reply and the latest one
// contains want. what names the replies in the message, detail adds
// context (the agent's output, say).
func (r *agentReplies) wantLast(t *testing.T, what, want, detail string) {
	t.Helper()
	got := r.all()
	if len(got) == 0 || !strings.Contains(got[len(got)-1], want) {
		t.Errorf("%s %q, want the last one containing %q\n%s", what, got, want, detail)
	}
}
