package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/pending"
)

// cmdAskMain is `bot ask -- COMMAND ARGS…`: ask a human whether a script may
// run a command. Exit 0 approved, 1 denied/expired/cancelled, 2 unavailable
// or bad usage. It never runs the command itself:
//
//	bot ask -config askops.yaml -- terraform apply && terraform apply
func cmdAskMain(ctx context.Context, env *environment, args []string) int {
	fs := cliflag.New("ask", env.stderr, "[-config FILE] [-timeout 10m] [-reason TEXT] [-session ID] [-o json] -- COMMAND ARGS...")
	path := fs.String("config", "", "config file (YAML); without it, ask the bot serve running on this machine (its console)")
	timeout := fs.Duration("timeout", 0, "how long to wait for a decision (default approvals.timeout)")
	reason := fs.String("reason", "", "why the command should run, shown to the approvers")
	label := fs.String("label", "", "who is asking, shown to the approvers (default: bot ask on HOST)")
	session := fs.String("session", "", "a session id shared by related asks: offers \"Approve for session\", and a command\nalready granted in the session (same command, same directory) is approved without asking")
	output := fs.String("o", "text", "what to print on stdout at the end: text (one line) or json (the final Ask)")
	if code, ok := cliflag.Parse(fs, args); !ok {
		return code
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(env.stderr, "bot ask: -o must be text or json, got %q\n", *output)
		return exitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(env.stderr, "bot ask: no command to ask about (put it after --)")
		fs.Usage()
		return exitUsage
	}
	if *timeout < 0 {
		fmt.Fprintln(env.stderr, "bot ask: -timeout must be > 0")
		return exitUsage
	}
	if *path == "" {
		return askLocal(ctx, env, gateway.ShellJoin(argv), *reason, *label, *session, *timeout, *output)
	}
	cfg, ok := loadConfig(env, *path, config.Ask)
	if !ok {
		return exitUsage
	}
	log := cfg.Log.NewLogger(env.stderr)
	progress := &gateway.ScriptProgress{Out: env.stderr, Now: time.Now}
	a, err := newApp(ctx, cfg, log, metrics.New(buildVersion()), appOptions{AskTimeout: *timeout, Posted: progress.Posted})
	if err != nil {
		fmt.Fprintf(env.stdout, "unavailable: %v\n", err)
		return exitUsage
	}
	defer a.Close()

	// With the in-memory store nobody else can take the click: this process
	// serves the interaction endpoint (or Socket Mode) while it waits, and
	// does not ask at all if it cannot.
	stopListening, err := a.takeClicks(ctx)
	if err != nil {
		fmt.Fprintf(env.stdout, "unavailable: %v\n", err)
		return exitUsage
	}
	command := gateway.ShellJoin(argv)
	req := askRequest(env, command, *reason, *label, *session)
	if g, ok := a.grantFor(ctx, req, command); ok {
		granted, line := gateway.ScriptGranted(req, g)
		if *output == "json" {
			return printAsk(env, granted, "json", "")
		}
		fmt.Fprintln(env.stdout, line)
		return exitOK
	}
	if team, err := a.slack.AuthTestContext(ctx); err == nil {
		progress.TeamURL = team.URL
	}
	progress.Asking(command)
	final := a.approver.Approve(ctx, req)
	stopListening()
	progress.Ended(final)
	return printAsk(env, final, *output, progress.Link(final.Channel, final.MessageTS))
}

// printAsk prints the final Ask as -o asks (text: one line; json: the
// gateway API's Ask and the command) and returns bot ask's exit code.
func printAsk(env *environment, a pending.Ask, output, link string) int {
	if output == "json" {
		fmt.Fprintln(env.stdout, string(gateway.ScriptJSON(a, link)))
	} else {
		fmt.Fprintln(env.stdout, gateway.ScriptLine(a))
	}
	return gateway.ScriptExit(a)
}

// askLocal is bot ask with no config: it asks the `bot serve` running on
// this machine with no Slack (its console), through the Ask API that serve
// announces in the local endpoint file. Every failure is unavailable (exit
// 2); nothing runs without an answer.
func askLocal(ctx context.Context, env *environment, command, reason, label, session string, timeout time.Duration, output string) int {
	fail := func(why string) int {
		if output == "json" {
			return printAsk(env, pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops", DecisionReason: why}, output, "")
		}
		fmt.Fprintf(env.stdout, "unavailable: %s\n", why)
		return exitUsage
	}
	final, err := gateway.AskLocal(ctx, env.getenv, askScript(env, command, reason, label, session), timeout, env.stderr)
	if err != nil {
		return fail(err.Error())
	}
	return printAsk(env, final, output, "")
}

// askScript is this bot ask's question, asked from this machine's
// working directory.
func askScript(env *environment, command, reason, label, session string) gateway.Script {
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	return gateway.Script{Command: command, Reason: reason, Label: label, Session: session,
		User: env.getenv("USER"), Host: host, Cwd: cwd}
}

// askRequest is the Ask of this bot ask (see gateway.Script).
func askRequest(env *environment, command, reason, label, session string) pending.Request {
	return askScript(env, command, reason, label, session).Request()
}

// grantFor is gateway.GrantFor on a's policy rules and grant store.
func (a *app) grantFor(ctx context.Context, req pending.Request, command string) (grants.Grant, bool) {
	return gateway.GrantFor(ctx, a.cfg.Policy.Rules, a.Grants, req, command, a.log)
}
