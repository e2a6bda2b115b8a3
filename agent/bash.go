package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/askops/askops/policy"
)

func bashTool(commandEnv []string, bounder Bounder) Tool {
	return Tool{
		Name: "bash",
		Description: "Run a shell command with `bash -c` in the working directory (inside the workspace). " +
			"Returns the combined stdout and stderr (long output is cut in the middle) and the exit code. " +
			"The command and every process it starts are killed when it times out; background processes do not outlive it. " +
			"Some commands need a human's approval first; if a call is denied, do not repeat it unchanged.",
		Params: []Param{
			{Name: "command", Type: String, Required: true, Description: "the command line, run with bash -c"},
			{Name: "timeout_seconds", Type: Integer, Description: "kill the command after this many seconds (default and maximum are set by the operator)"},
		},
		Safety: policy.SideEffect,
		Prepare: func(env Env, a Args) (Action, error) {
			command := a.String("command")
			if strings.TrimSpace(command) == "" {
				return Action{}, errors.New(`invalid arguments for bash: field "command" is empty`)
			}
			timeout := env.DefaultTimeout
			if n, ok := a.Int("timeout_seconds"); ok {
				if n <= 0 {
					return Action{}, fmt.Errorf(`invalid arguments for bash: field "timeout_seconds" must be positive, got %d`, n)
				}
				timeout = time.Duration(n) * time.Second
				if timeout > env.MaxTimeout {
					return Action{}, fmt.Errorf(`invalid arguments for bash: field "timeout_seconds" is %d, more than the maximum of %d`, n, int(env.MaxTimeout/time.Second))
				}
			}
			// Judge, show and run one text: the command as the policy
			// parses it, printed back. A command that cannot be printed
			// back (it does not parse, or has characters where shells
			// disagree) stays raw; the policy never allows it.
			// A command that prints back unchanged keeps its own text,
			// which the conversation holds already.
			if canonical, err := policy.Canonical(command); err == nil && canonical != command {
				command = canonical
			}
			return Action{
				Command: command,
				Summary: command,
				Effect:  Effect{Kind: EffectCommand, Command: command},
				Run: func(ctx context.Context) (string, error) {
					return runBash(ctx, env.Cwd, command, timeout, env.MaxOutputBytes, commandEnv, nil)
				},
				Bounded: boundedRun(bounder, func(ctx context.Context, wrap func(*exec.Cmd) (func() string, error)) (string, error) {
					return runBash(ctx, env.Cwd, command, timeout, env.MaxOutputBytes, commandEnv, wrap)
				}, env.Workspace),
			}, nil
		},
	}
}

// boundedRun is run inside bounder's bound of workspace; nil when there is
// no bounder.
func boundedRun(bounder Bounder, run func(context.Context, func(*exec.Cmd) (func() string, error)) (string, error), workspace string) func(context.Context) (string, error) {
	if bounder == nil {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		return run(ctx, func(cmd *exec.Cmd) (func() string, error) { return bounder.Wrap(cmd, workspace) })
	}
}

// runBash runs command in its own process group so that a timeout or a stop
// kills everything it started, not just bash. The output is capped head+tail.
// wrap, when not nil, puts the command inside an OS bound first; a bound
// that cannot be set up fails the call, which then does not run.
func runBash(ctx context.Context, cwd, command string, timeout time.Duration, maxOut int, environ []string, wrap func(*exec.Cmd) (func() string, error)) (string, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("bash: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = cwd
	cmd.Env = environ
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	release := func() string { return "" }
	if wrap != nil {
		if release, err = wrap(cmd); err != nil {
			w.Close()
			return "", fmt.Errorf("bash: the OS bound could not be set up, so the command did not run: %w", err)
		}
	}
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	if err := cmd.Start(); err != nil {
		w.Close()
		return "", fmt.Errorf("bash: could not start: %w", err)
	}
	w.Close() // only the children hold the write end now, so EOF means they are all gone
	pgid := cmd.Process.Pid

	out := newCapWriter(maxOut)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, r)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var waitErr error
	select {
	case waitErr = <-exited:
	case <-tctx.Done():
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		waitErr = <-exited
	}
	// Whatever is left of the group (background jobs) goes with the command.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	grace := time.NewTimer(2 * time.Second)
	select {
	case <-copied:
	case <-grace.C:
		// Something escaped the group (setsid) and holds the pipe: stop reading.
		r.Close()
		<-copied
	}
	grace.Stop()
	released = true
	undone := release() // the command has ended: what the bound undoes is final

	var b strings.Builder
	text := out.String()
	if text == "" {
		text = "(no output)"
	}
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(&b, "[stopped: the run was cancelled; the command and its child processes were killed]")
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&b, "[timed out after %s: the command and its child processes were killed; the output above is partial]", timeout)
	default:
		fmt.Fprintf(&b, "[exit code: %d]", exitCode(cmd, waitErr))
	}
	if undone != "" {
		fmt.Fprintf(&b, "\n[%s]", undone)
	}
	return b.String(), nil
}

func exitCode(cmd *exec.Cmd, waitErr error) int {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return cmd.ProcessState.ExitCode()
	}
	if waitErr != nil {
		return -1
	}
	return 0
}

// capWriter keeps the first and last bytes of a stream and counts what it
// drops, because the start (the command's first errors) and the end (its
// result) are what matter.
type capWriter struct {
	headMax, tailMax int
	head, tail       []byte
	total            int64
}

func newCapWriter(max int) *capWriter {
	if max < 2 {
		max = 2
	}
	return &capWriter{headMax: max / 2, tailMax: max - max/2}
}

func (c *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	// The tail is kept in one buffer, moved within it: a stream of
	// gigabytes (a command's output, a line read_file reads) costs no
	// more than its first writes.
	if len(p) >= c.tailMax {
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*c.tailMax {
		c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-c.tailMax:])]
	}
	return n, nil
}

func (c *capWriter) String() string {
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	cut := c.total - int64(len(c.head)) - int64(len(tail))
	if cut <= 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(c.head), "\uFFFD") +
		fmt.Sprintf("\n[… %d bytes cut …]\n", cut) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}

// capText caps s the same way.
func capText(s string, max int) string {
	c := newCapWriter(max)
	_, _ = c.Write([]byte(s))
	return c.String()
}
