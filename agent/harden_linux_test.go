package agent

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/policy"
)

type nopModel struct{}

func (nopModel) Complete(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{}, errors.New("no model in this test")
}

type nopPolicy struct{}

func (nopPolicy) Evaluate(context.Context, policy.Call) policy.Verdict {
	return policy.Verdict{Decision: policy.Deny}
}

type nopApprover struct{}

func (nopApprover) Approve(_ context.Context, _ Request, done func(Decision)) {
	go done(Decision{Outcome: Unavailable})
}

// The bot's secrets live in its environment; the minimal command
// environment keeps them out of the commands' own, but a command could still
// read its parent's: /proc/$PPID/environ. A Runner makes the process
// non-dumpable so that file (and /proc/PID/mem, ptrace) is refused to the
// commands it starts.
func TestRunnerHidesTheProcessFromItsCommands(t *testing.T) {
	if _, err := NewRunner(Config{Model: nopModel{}, ModelName: "m", Workspace: t.TempDir(), Policy: nopPolicy{}, Approver: nopApprover{}}); err != nil {
		t.Fatal(err)
	}
	if !processHidden() {
		t.Fatal("the process is still dumpable after NewRunner: its commands can read /proc/$PPID/environ")
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: a root command may read any process, so the /proc check is skipped")
		return
	}
	out, err := runBash(t.Context(), t.TempDir(), "cat /proc/$PPID/environ >/dev/null 2>&1 && echo READABLE || echo REFUSED",
		10*time.Second, 1<<10, []string{"PATH=" + os.Getenv("PATH")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "REFUSED") {
		t.Errorf("a command read the bot's environment: %s", out)
	}
}
