package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/policy"
)

// newRunner builds the agent runner: the model endpoint, the policy engine
// (rules, default mode, the grant store) and this app's Approver.
func newRunner(a *app) (*agent.Runner, error) {
	cfg := a.cfg
	engine, err := policy.New(policy.Config{
		Rules:  cfg.Policy.Rules,
		Mode:   policy.Mode(cfg.Policy.Mode),
		Grants: a.grants,
		Logger: a.log.With("component", "policy"),
	})
	if err != nil {
		return nil, err
	}
	// An absent workspace is created: a fresh install should not fail on it.
	if err := os.MkdirAll(cfg.Agent.Workspace, 0o750); err != nil {
		return nil, fmt.Errorf("agent.workspace: %w", err)
	}
	model := agent.NewModel(cfg.OpenAI.BaseURL, cfg.OpenAI.APIKey.Reveal(), &http.Client{Timeout: 5 * time.Minute}, agent.RetryOptions{})
	return agent.NewRunner(agent.Config{
		Model:         model,
		ModelName:     cfg.OpenAI.Model,
		Workspace:     cfg.Agent.Workspace,
		MaxIterations: cfg.Agent.MaxIterations,
		Policy:        engine,
		Approver:      agentApprover{next: a.approver},
		Logger:        a.log.With("component", "agent"),
		Now:           a.now,
	})
}

// cmdRunMain is `bot run "TASK"`: one agent run from a terminal or a cron
// job. Its Asks go to the approval channel; progress and the final answer
// are printed; Ctrl-C stops the run and its Asks end cancelled.
func cmdRunMain(ctx context.Context, env *environment, args []string) int {
	fs := flagSet("run", env.stderr, `-config FILE [-mode ask|never|full] [-cwd DIR] "TASK"`)
	path := fs.String("config", "", "config file (YAML)")
	mode := fs.String("mode", "", "policy mode for this run: ask, never (unattended: asks become denials) or full (default policy.mode)")
	cwd := fs.String("cwd", "", "working directory inside agent.workspace (default the workspace)")
	label := fs.String("label", "", "what approvers see as the run's name (default: bot run on HOST)")
	positional, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	task := strings.TrimSpace(strings.Join(positional, " "))
	if task == "" {
		fmt.Fprintln(env.stderr, "bot run: no task given")
		fs.Usage()
		return exitUsage
	}
	if m := policy.Mode(*mode); m != "" && !m.Valid() {
		fmt.Fprintf(env.stderr, "bot run: -mode: unknown mode %q (want ask, never or full)\n", *mode)
		return exitUsage
	}
	cfg, ok := loadConfig(env, *path, cmdRun)
	if !ok {
		return exitUsage
	}
	log := newLogger(cfg.Log, env.stderr)
	metrics := NewMetrics()
	a, err := newApp(ctx, cfg, log, metrics, appOptions{})
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: %v\n", err)
		return exitFailed
	}
	defer a.Close()
	runner, err := newRunner(a)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: %v\n", err)
		return exitFailed
	}
	stopListening, err := a.takeClicks(ctx)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: cannot take Slack interactions, so nobody could answer an Ask: %v\n", err)
		return exitFailed
	}
	defer stopListening()
	// With Redis, /askops stop on any serve replica reaches this run too.
	releaseStops, err := a.sessions.HandleStops(ctx, stopperFor(runner, log.With("component", "run")))
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: redis.url: %v\n", err)
		return exitFailed
	}
	defer releaseStops()

	host, _ := os.Hostname()
	who := env.getenv("USER")
	if who == "" {
		who = "unknown user"
	}
	if *label == "" {
		*label = "bot run on " + host
	}
	id := "run-" + randomID()
	spec := agent.RunSpec{
		ID:        id,
		SessionID: id, // one bot run invocation is one session
		StartedBy: who + "@" + host,
		Label:     *label,
		Task:      task,
		Mode:      policy.Mode(*mode),
		Cwd:       *cwd,
	}
	progress := &progressPrinter{w: env.stdout}
	run := runner.Start(ctx, spec, progress.event)
	res := run.Wait()
	metrics.RunEnded(string(res.Status))
	return progress.result(res)
}

// progressPrinter prints a run's events as lines a person (or a cron log)
// can follow.
type progressPrinter struct {
	mu sync.Mutex
	w  io.Writer
	// held is the last assistant line, printed when the run goes on: the
	// final answer also arrives as an assistant message and is printed once,
	// at the end.
	held string
}

func (p *progressPrinter) event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Kind == agent.EventFinished {
		p.held = ""
		return
	}
	if p.held != "" {
		fmt.Fprintln(p.w, p.held)
		p.held = ""
	}
	line := progressLine(e)
	if e.Kind == agent.EventAssistant {
		p.held = line
		return
	}
	if line != "" {
		fmt.Fprintln(p.w, line)
	}
}

func progressLine(e agent.Event) string {
	switch e.Kind {
	case agent.EventStarted:
		return fmt.Sprintf("run %s started", e.RunID)
	case agent.EventToolCall:
		d := string(e.Decision)
		if d == "" {
			d = "malformed"
		}
		return fmt.Sprintf("[%d] %s: %s (%s)", e.Iteration, e.Tool, firstLine(e.Summary, 200), d)
	case agent.EventAsked:
		return fmt.Sprintf("[%d] asking in Slack: %s — %s", e.Iteration, firstLine(e.Summary, 200), e.Reason)
	case agent.EventDecided:
		s := fmt.Sprintf("[%d] %s", e.Iteration, outcomeText(string(e.Outcome)))
		if e.By != "" {
			s += " by " + e.By
		}
		if e.Reason != "" {
			s += ": " + e.Reason
		}
		return s
	case agent.EventToolResult:
		if e.NotPerformed {
			return fmt.Sprintf("[%d] not performed: %s", e.Iteration, firstLine(e.Text, 200))
		}
		if e.IsError {
			return fmt.Sprintf("[%d] failed: %s", e.Iteration, firstLine(e.Text, 200))
		}
		return ""
	case agent.EventAssistant:
		if t := strings.TrimSpace(e.Text); t != "" {
			return fmt.Sprintf("[%d] %s", e.Iteration, firstLine(t, 300))
		}
	}
	return ""
}

// result prints how the run ended and returns the exit code.
func (p *progressPrinter) result(res agent.Result) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != "" && res.Status != agent.StatusFinished {
		fmt.Fprintln(p.w, p.held)
	}
	switch res.Status {
	case agent.StatusFinished:
		fmt.Fprintln(p.w, res.Answer)
		return exitOK
	case agent.StatusCancelled:
		fmt.Fprintf(p.w, "run %s stopped\n", res.RunID)
	default:
		msg := "failed"
		if res.Err != nil {
			msg += ": " + res.Err.Error()
		}
		fmt.Fprintf(p.w, "run %s %s\n", res.RunID, msg)
	}
	return exitFailed
}

func outcomeText(o string) string {
	if o == "approved_session" {
		return "approved for session"
	}
	return o
}

// firstLine is s's first line, cut to n runes.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	} else if cut {
		return s + " …"
	}
	return s
}
