package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/bound"
	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/policy"
)

// newBound builds the OS bound of the agent's allowed commands from cfg:
// agent.bound, the policy's read_file deny rules as the files a bounded
// command cannot read, and its write_file deny rules as the files and
// directories it cannot change. configPaths are the config files cfg was read from
// ("" for none): a bounded command cannot change them where they lie in its
// workspace (bound.Config.Keep), nor an agent's or an editor's settings at
// its top (policy.SettingsName). It probes the kernel: one start of this
// binary.
func newBound(ctx context.Context, cfg config.Config, configPaths ...string) (*bound.Bound, error) {
	denied, outside, err := ruleDenials(cfg.Policy.Rules, policy.ToolReadFile)
	if err != nil {
		return nil, err
	}
	unwritable, _, err := ruleDenials(cfg.Policy.Rules, policy.ToolWriteFile)
	if err != nil {
		return nil, err
	}
	var keep []string
	for _, p := range configPaths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", p, err)
		}
		keep = append(keep, abs)
	}
	return bound.New(bound.Config{
		Keep:          keep,
		Mode:          bound.Mode(cfg.Agent.Bound.Mode),
		Writable:      cfg.Agent.Bound.Writable,
		Hosts:         cfg.Agent.Bound.Hosts,
		Denied:        denied,
		DeniedOutside: outside,
		Unwritable:    unwritable,
		KeepNames:     policy.SettingsName,
		Support:       bound.Probe(ctx, ""),
	})
}

// ruleDenials is what the deny rules of tool (read_file or write_file)
// deny, as the bound asks it: the policy itself judges each file or
// directory (a call of tool on it, in mode full, so no grant is looked
// up), so the bound hides, or keeps read-only, exactly what the rules
// name. Rules naming an absolute path with no pattern name files outside
// any workspace (outside).
func ruleDenials(rules []policy.Rule, tool string) (func(workspace, path string) bool, []string, error) {
	var deny []policy.Rule
	var outside []string
	for _, r := range rules {
		if r.Tool != tool || r.Decision != policy.Deny {
			continue
		}
		deny = append(deny, r)
		if filepath.IsAbs(r.Path) && !strings.ContainsAny(r.Path, "*?[\\") {
			outside = append(outside, filepath.Clean(r.Path))
		}
	}
	if len(deny) == 0 {
		return nil, nil, nil
	}
	safety := policy.ReadOnly
	if tool != policy.ToolReadFile {
		safety = policy.SideEffect
	}
	engine, err := policy.New(policy.Config{Rules: deny, Mode: policy.ModeFull})
	if err != nil {
		return nil, nil, fmt.Errorf("policy.rules: %w", err)
	}
	return func(workspace, path string) bool {
		v := engine.Evaluate(context.Background(), policy.Call{
			Tool: tool, Safety: safety, Path: path,
			Workspace: workspace, Cwd: workspace, Mode: policy.ModeFull,
			Resolved: true, Exact: true, // a file the bound found on this machine
		})
		return v.Decision == policy.Deny
	}, outside, nil
}

// cmdSandboxMain is `bot sandbox -workspace DIR [-config FILE] -- CMD…`:
// CMD runs as a command askops' agent runs without a person would, inside
// the same bound with the same environment, and its status is bot
// sandbox's. Where the kernel offers no bound, agent.bound.mode required
// (the default) refuses to run it (status 126); best-effort runs it
// unbounded with a warning.
func cmdSandboxMain(ctx context.Context, env *environment, args []string) int {
	fs := cliflag.New("sandbox", env.stderr, "-workspace DIR [-config FILE] -- COMMAND ARGS...")
	workspace := fs.String("workspace", "", "the workspace: the command may write inside it (never its .git)")
	path := fs.String("config", "", "config file (YAML): agent.bound and the policy's read_file and write_file deny rules")
	if code, ok := cliflag.Parse(fs, args); !ok {
		return code
	}
	argv := fs.Args()
	if *workspace == "" || len(argv) == 0 {
		return badUsage(env, fs, "bot sandbox: want -workspace DIR and a command after --")
	}
	cfg := config.Default()
	if *path != "" {
		var ok bool
		if cfg, ok = loadConfig(env, *path, config.Sandbox); !ok {
			return exitUsage
		}
	}
	ws, err := realDir(*workspace)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot sandbox: -workspace: %v\n", err)
		return exitUsage
	}
	b, err := newBound(ctx, cfg, *path)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot sandbox: %v\n", err)
		return exitUsage
	}

	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = agent.MinimalEnv(func(k string) (string, bool) { v := env.getenv(k); return v, v != "" })
	cmd.Dir = ws
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil && (real == ws || strings.HasPrefix(real, ws+string(filepath.Separator))) {
			cmd.Dir = real
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.stdin, env.stdout, env.stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	switch {
	case b.Active():
		release, err := b.Wrap(cmd, ws)
		if err != nil {
			fmt.Fprintf(env.stderr, "bot sandbox: %v; the command did not run\n", err)
			return bound.ExitSetup
		}
		defer func() {
			if undone := release(); undone != "" {
				fmt.Fprintf(env.stderr, "bot sandbox: %s\n", undone)
			}
		}()
	case b.Required():
		fmt.Fprintf(env.stderr, "bot sandbox: no OS bound here: %s; agent.bound.mode is required, so the command did not run\n", b.Describe())
		return bound.ExitSetup
	case b.Mode() == bound.BestEffort:
		fmt.Fprintf(env.stderr, "bot sandbox: warning: no OS bound here (%s); agent.bound.mode is best-effort, so the command runs unbounded\n", b.Describe())
	}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(env.stderr, "bot sandbox: %v\n", err)
	return 127
}

// realDir is dir as an absolute path with its links resolved, if it is a
// directory.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}

// boundBash is gateway.bound_bash: nil when off; else the wrapping of an
// allowed Claude Code Bash command into `bot sandbox`, naming this binary
// and configPath ("" when the serve has no config file), for a Claude Code
// on this machine.
func boundBash(cfg config.Config, configPath string) (gateway.BoundBash, error) {
	if !cfg.Gateway.BoundBash {
		return nil, nil
	}
	bot, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("gateway.bound_bash: this binary's path: %w", err)
	}
	prefix := shellQuote(bot) + " sandbox"
	if configPath != "" {
		abs, err := filepath.Abs(configPath)
		if err != nil {
			return nil, fmt.Errorf("gateway.bound_bash: %w", err)
		}
		prefix += " -config " + shellQuote(abs)
	}
	return func(workspace, command string) (string, bool) {
		if !filepath.IsAbs(workspace) {
			return "", false
		}
		return prefix + " -workspace " + shellQuote(workspace) + " -- bash -c " + shellQuote(command), true
	}, nil
}

// shellQuote is s as one bash word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
