// Package agent runs AI agents over an OpenAI-compatible chat completions API.
//
// A run is a loop: the model answers with tool calls, each call goes through
// the policy (allow, deny, ask), an ask goes to a human through the Approver,
// and the outcome — the tool's output, or a text saying why it was not
// performed — goes back to the model, until the model answers without tool
// calls. Read-only calls the policy allows run concurrently; everything that
// may ask or has side effects runs alone, in the model's order, and no call
// starts before the Asks ahead of it are decided.
//
// The package knows nothing of Slack, Redis or the approval store: the
// wiring satisfies the small Policy and Approver interfaces defined here,
// and the agent's own Request, Decision and Outcome are what they trade in.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/internal/drain"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/policy"
)

// Policy decides one call. The policy package's engine satisfies it.
type Policy interface {
	Evaluate(ctx context.Context, c policy.Call) policy.Verdict
}

// ErrStopped is the cause of a run's end when Runner.Stop stopped it.
var ErrStopped = errors.New("agent: run stopped")

// Config is what a Runner needs. Model, ModelName, Workspace, Policy and
// Approver are required; zero values elsewhere take the defaults noted.
type Config struct {
	Model         Model
	ModelName     string
	Workspace     string // must exist and be a directory
	MaxIterations int    // model calls per run; default 30
	Policy        Policy
	Approver      Approver
	Logger        *slog.Logger     // default: discard
	Now           func() time.Time // default: time.Now
	SystemPrompt  string           // default: DefaultSystemPrompt

	MaxOutputBytes        int           // per tool result; default 32 KiB
	DefaultCommandTimeout time.Duration // bash without timeout_seconds; default 2m
	MaxCommandTimeout     time.Duration // largest timeout_seconds accepted; default 30m

	// CommandEnv is the environment of bash commands. Nil means a minimal one
	// (PATH, HOME, USER, LANG, TMPDIR) so the bot's own secrets — API keys,
	// Slack tokens — are not handed to the model's commands.
	CommandEnv []string

	// Tools are added to the built-in ones (bash, read_file, write_file,
	// edit_file, list_files). A name may not repeat.
	Tools []Tool

	// MaxParallel bounds how many read-only calls of one batch run at once; default 8.
	MaxParallel int

	// Bound is the OS bound a command the policy allowed without a person
	// (a rule, a grant, mode full) runs inside; a call a person approved
	// runs as approved. Nil: every command runs unbounded and no surface
	// speaks of a bound.
	Bound Bounder
}

// Bounder puts a command inside an OS bound. Package bound's Bound
// satisfies it.
type Bounder interface {
	// Wrap makes cmd run inside the bound of workspace; release, called
	// once the command ended, removes what the bound made and says what
	// of the command's it undid ("" for nothing), for the command's
	// output. An error means cmd must not run.
	Wrap(cmd *exec.Cmd, workspace string) (release func() (undone string), err error)
	// Active reports whether allowed commands run bounded.
	Active() bool
	// Required reports whether, with no bound active, an allowed command
	// is asked about instead of running unbounded.
	Required() bool
	// Describe names the bound in force, or why there is none.
	Describe() string
}

// DefaultSystemPrompt tells the model where it is and how asking works.
const DefaultSystemPrompt = `You are an operations and coding agent working in a workspace directory on a real machine.
Use the tools to inspect and change files and to run commands; every path must stay inside the workspace.
Some tool calls need a human's approval before they run. If a call is denied, expired or otherwise not performed,
the tool result says so and why: do not repeat the same call unchanged; take a different approach or explain what you need.
When you are done, answer with a short summary of what you did and found, without calling a tool.`

// Runner starts and tracks runs.
type Runner struct {
	cfg       Config
	workspace string
	tools     map[string]*Tool
	defs      []openai.Tool // the tools' definitions in declaration order, for the model

	mu   sync.Mutex
	runs map[string]*Run
	wg   sync.WaitGroup

	promptsMu sync.Mutex
	prompts   map[string]string // the system prompt by working directory (systemPrompt)
}

// NewRunner checks cfg and returns a Runner. A workspace that does not exist
// or is not a directory is refused here, before any run starts.
func NewRunner(cfg Config) (*Runner, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: config: no model")
	}
	if cfg.ModelName == "" {
		return nil, errors.New("agent: config: no model name")
	}
	if cfg.Policy == nil {
		return nil, errors.New("agent: config: no policy (every call must be judged)")
	}
	if cfg.Approver == nil {
		return nil, errors.New("agent: config: no approver (use one that answers unavailable if there is no channel)")
	}
	ws, err := openWorkspace(cfg.Workspace)
	if err != nil {
		return nil, err
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = 30
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SystemPrompt == "" {
		cfg.SystemPrompt = DefaultSystemPrompt
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = 32 << 10
	}
	if cfg.DefaultCommandTimeout <= 0 {
		cfg.DefaultCommandTimeout = 2 * time.Minute
	}
	if cfg.MaxCommandTimeout <= 0 {
		cfg.MaxCommandTimeout = 30 * time.Minute
	}
	if cfg.MaxCommandTimeout < cfg.DefaultCommandTimeout {
		return nil, fmt.Errorf("agent: config: max command timeout %s is below the default %s", cfg.MaxCommandTimeout, cfg.DefaultCommandTimeout)
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 8
	}
	if cfg.CommandEnv == nil {
		cfg.CommandEnv = MinimalEnv(os.LookupEnv)
	}
	// The minimal environment keeps the bot's secrets out of the commands'
	// own; this keeps them out of reach through /proc/$PPID/environ.
	if err := hideProcess(); err != nil {
		cfg.Logger.Warn("agent: could not make the process non-dumpable; commands may read its environment through /proc", "err", err)
	}

	r := &Runner{cfg: cfg, workspace: ws, tools: map[string]*Tool{}, runs: map[string]*Run{}, prompts: map[string]string{}}
	builtin := []Tool{bashTool(cfg.CommandEnv, cfg.Bound), readFileTool(), writeFileTool(), editFileTool(), listFilesTool()}
	for _, t := range append(builtin, cfg.Tools...) {
		if t.Name == "" || t.Prepare == nil {
			return nil, fmt.Errorf("agent: config: tool %q needs a name and a Prepare func", t.Name)
		}
		if _, dup := r.tools[t.Name]; dup {
			return nil, fmt.Errorf("agent: config: tool %q is declared twice", t.Name)
		}
		r.tools[t.Name] = &t
		// Built once: every run sends the same definitions, and a
		// waiting run held its own copy (about 2.5 KB).
		r.defs = append(r.defs, t.definition())
	}
	return r, nil
}

// Workspace returns the workspace's real absolute path.
func (r *Runner) Workspace() string { return r.workspace }

// MinimalEnv is the environment a command gets when Config.CommandEnv is
// nil, from the variables lookup finds: PATH, HOME, USER, LOGNAME, LANG,
// LC_ALL, TMPDIR and TZ, and TERM=dumb, so the bot's secrets stay out of
// its commands. `bot sandbox` gives its command the same.
func MinimalEnv(lookup func(string) (string, bool)) []string {
	env := []string{"TERM=dumb"}
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "TZ"} {
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// RunSpec says what to run and on whose behalf.
type RunSpec struct {
	ID        string // generated if empty
	SessionID string
	StartedBy string
	Label     string
	Task      string
	Mode      policy.Mode // passed to the policy as is; empty means the policy's default
	// ModeFor, when set, is read before each policy evaluation: the mode the
	// session's humans set while the run goes (e.g. /askops mode never). It
	// returns "" when none is set, and the run uses Mode. It may make a run
	// stricter (never) or relax it back to ask, never more: full, any other
	// value and a failed read are ignored, and the run keeps the last mode it
	// knew (Mode until a read succeeds).
	ModeFor func(ctx context.Context) (policy.Mode, error)
	// Copied into every Request so the Ask is posted in the run's thread.
	ReplyChannel  string
	ReplyThreadTS string
	Cwd           string // relative to the workspace or absolute inside it; default the workspace
	// SessionName is the session as a person knows it, copied into every
	// Request for approvers to read ("thread 'deploy v1.4'"); "" leaves
	// the naming to the Approver. SessionStarted is when the session
	// started; zero means the run's start.
	SessionName    string
	SessionStarted time.Time
}

// RunStatus is how a run ended.
type RunStatus string

const (
	StatusFinished  RunStatus = "finished"  // the model answered without tool calls
	StatusFailed    RunStatus = "failed"    // model error, max_iterations, bad spec
	StatusCancelled RunStatus = "cancelled" // Stop, or the run's context ended
)

// Result is a run's end.
type Result struct {
	RunID      string
	Status     RunStatus
	Answer     string // the model's final answer (StatusFinished)
	Err        error  // why it did not finish
	Iterations int
}

// RunInfo describes a live run.
type RunInfo struct {
	ID        string
	SessionID string
	StartedBy string
	Label     string
	Task      string
	Mode      policy.Mode
	StartedAt time.Time
	Iteration int
}

// Run is one started run.
type Run struct {
	spec    RunSpec
	started time.Time
	cancel  context.CancelCauseFunc
	done    chan struct{}
	result  Result

	iteration atomic.Int64
	modeMu    sync.Mutex
	mode      policy.Mode // the last mode known to apply (see RunSpec.ModeFor)
	emitMu    sync.Mutex
	onEvent   func(Event)
	now       func() time.Time

	thenMu sync.Mutex
	ended  bool
	then   []func(Result)
}

// ID returns the run's id.
func (run *Run) ID() string { return run.spec.ID }

// Wait blocks until the run ends and returns its Result.
func (run *Run) Wait() Result {
	<-run.done
	return run.result
}

// Then calls f with the run's Result once it ends: on the run's goroutine
// (the Runner's Wait waits for it), or at once on the caller's if the run
// has ended. A caller that would only wait for the end so holds no
// goroutine of its own while the run waits for a human.
func (run *Run) Then(f func(Result)) {
	run.thenMu.Lock()
	if !run.ended {
		run.then = append(run.then, f)
		run.thenMu.Unlock()
		return
	}
	run.thenMu.Unlock()
	f(run.Wait())
}

// end closes done and calls the Then funcs, on the goroutine that ends
// the run.
func (run *Run) end() {
	close(run.done)
	run.thenMu.Lock()
	run.ended = true
	fs := run.then
	run.then = nil
	run.thenMu.Unlock()
	for _, f := range fs {
		f(run.result)
	}
}

// Start starts a run in its own goroutine; a run waiting for its human
// holds none, and goes on on the goroutine that
// brings the decision. onEvent (may be nil) receives the
// run's events in order, never concurrently, on the run's goroutines; it
// should not block for long and must not call Wait on the same run.
// The run ends when the model answers, at MaxIterations, on Stop, or when ctx ends.
func (r *Runner) Start(ctx context.Context, spec RunSpec, onEvent func(Event)) *Run {
	if spec.ID == "" {
		spec.ID = recordid.NewRun()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	run := &Run{spec: spec, started: r.cfg.Now(), cancel: cancel, done: make(chan struct{}), onEvent: onEvent, now: r.cfg.Now, mode: spec.Mode}

	r.mu.Lock()
	if _, taken := r.runs[spec.ID]; taken {
		r.mu.Unlock()
		cancel(nil)
		run.result = Result{RunID: spec.ID, Status: StatusFailed, Err: fmt.Errorf("agent: a run with id %q is already running", spec.ID)}
		run.emit(Event{Kind: EventFailed, Err: run.result.Err})
		run.end()
		return run
	}
	r.runs[spec.ID] = run
	r.wg.Add(1)
	r.mu.Unlock()

	// The run goes on from the goroutine that brings each decision, so
	// its end is a func, not this goroutine's return.
	// It reads the run, not spec and cancel: a waiting run keeps this
	// func, and spec would be a second copy.
	go r.execute(ctx, run, func(res Result) {
		defer r.wg.Done()
		defer run.cancel(nil)
		spec := &run.spec
		res.RunID = spec.ID
		res.Iterations = int(run.iteration.Load())
		run.result = res

		r.mu.Lock()
		delete(r.runs, spec.ID)
		r.mu.Unlock()

		log := r.cfg.Logger.With("run", spec.ID, "session", spec.SessionID)
		if res.Status == StatusFinished {
			log.Info("run finished", "iterations", res.Iterations)
			run.emit(Event{Kind: EventFinished, Text: res.Answer})
		} else {
			log.Warn("run ended without an answer", "status", res.Status, "err", res.Err, "iterations", res.Iterations)
			run.emit(Event{Kind: EventFailed, Err: res.Err, Text: string(res.Status)})
		}
		run.end()
	})
	return run
}

// Stop cancels a live run: a waiting Ask resolves cancelled and a running
// command's process group is killed. It reports whether the run was live.
func (r *Runner) Stop(runID string) bool {
	r.mu.Lock()
	run, ok := r.runs[runID]
	r.mu.Unlock()
	if ok {
		run.cancel(ErrStopped)
	}
	return ok
}

// Runs lists the live runs, oldest first.
func (r *Runner) Runs() []RunInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RunInfo, 0, len(r.runs))
	for _, run := range r.runs {
		s := run.spec
		out = append(out, RunInfo{ID: s.ID, SessionID: s.SessionID, StartedBy: s.StartedBy, Label: s.Label, Task: s.Task,
			Mode: run.currentMode(), StartedAt: run.started, Iteration: int(run.iteration.Load())})
	}
	slices.SortFunc(out, func(a, b RunInfo) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// Shutdown stops every live run and waits for them to end, or for ctx.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	for _, run := range r.runs {
		run.cancel(ErrStopped)
	}
	r.mu.Unlock()
	return drain.Wait(ctx, &r.wg)
}

func (run *Run) emit(e Event) {
	e.RunID = run.spec.ID
	e.SessionID = run.spec.SessionID
	e.Iteration = int(run.iteration.Load())
	run.emitMu.Lock()
	defer run.emitMu.Unlock()
	e.Time = run.now()
	if run.onEvent != nil {
		run.onEvent(e)
	}
}

func (run *Run) currentMode() policy.Mode {
	run.modeMu.Lock()
	defer run.modeMu.Unlock()
	return run.mode
}

// modeNow is the mode for the next policy evaluation. A session's mode can
// change while the run goes; a read that fails or returns a mode chat-ops
// may not set keeps the last mode known, so a failure never relaxes a run.
func (run *Run) modeNow(ctx context.Context, log *slog.Logger) policy.Mode {
	if run.spec.ModeFor == nil {
		return run.spec.Mode
	}
	m, err := safeModeFor(ctx, run.spec.ModeFor)
	run.modeMu.Lock()
	defer run.modeMu.Unlock()
	switch {
	case err != nil:
		log.Warn("could not read the session's mode; keeping the last one known", "mode", run.mode, "err", err)
		return run.mode
	case m == "":
		m = run.spec.Mode
	case !m.SessionSettable():
		log.Warn("ignored a session mode that may not be set while a run goes", "got", m, "mode", run.mode)
		return run.mode
	}
	if m != run.mode {
		log.Info("session mode changed", "from", run.mode, "to", m)
	}
	run.mode = m
	return m
}

func safeModeFor(ctx context.Context, f func(context.Context) (policy.Mode, error)) (m policy.Mode, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reading the session mode panicked: %v", p)
		}
	}()
	return f(ctx)
}
