package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `bot hook` answers deny, exit 0, whatever fails under it: the serve it
// asks frozen (SIGSTOP) with the Ask open, the serve's Redis frozen with
// the Ask open, and, for a hook with -config (its own stores), Redis
// frozen before it starts. The agent lets the call through when the hook
// outlives its timeout; askops promises the answer within -timeout plus
// hook.Grace. Only the decision is asserted: how long each took is
// logged here and measured by bench/hookbound.
func TestHookDeniesWhateverFails(t *testing.T) {
	for _, fault := range []string{"serve frozen", "redis frozen", "-config, redis frozen"} {
		t.Run(fault, func(t *testing.T) {
			w := newWorld(t)
			ctx := testCtxFor(t, 120*time.Second)
			command := "terraform apply -target=module." + strings.ReplaceAll(fault, " ", "-")
			event := `{"session_id":"bound","turn_id":"t1","cwd":"` + w.ws + `","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"` + command + `"}}`
			args := []string{"hook", "codex", "-timeout", "3s"}
			var serve *replica
			if fault == "-config, redis frozen" {
				args = append(args, "-config", w.writeConfig(t, "hook-config", freePort(t), settings{}))
				w.redis.Freeze()
				defer w.redis.Thaw()
			} else {
				serve = w.serve(ctx, t, "bound", settings{Extra: apiBlock})
				args = append(args, "-url", serve.base)
			}
			hook := exec.CommandContext(ctx, botBinary, args...)
			hook.Env = append(childEnv(), "ASKOPS_TOKEN="+anaToken)
			hook.Stdin = strings.NewReader(event)
			var out, errOut bytes.Buffer
			hook.Stdout, hook.Stderr = &out, &errOut
			started := time.Now()
			if err := hook.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- hook.Wait() }()
			switch fault {
			case "serve frozen":
				w.waitOpenAsk(ctx, t, command)
				if err := serve.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				defer func() { _ = serve.cmd.Process.Signal(syscall.SIGCONT) }()
			case "redis frozen":
				w.waitOpenAsk(ctx, t, command)
				w.redis.Freeze()
				defer w.redis.Thaw()
			}
			var err error
			select {
			case err = <-exited:
			case <-ctx.Done():
				t.Fatalf("the hook never answered\nstderr %s", errOut.String())
			}
			t.Logf("%s: answered after %s (-timeout 3s)", fault, time.Since(started).Round(10*time.Millisecond))
			if err != nil || !strings.Contains(out.String(), `"behavior":"deny"`) {
				t.Errorf("exit %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
			}
		})
	}
}
