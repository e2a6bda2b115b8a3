package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/askops/askops/gateway/script"
	"github.com/askops/askops/internal/shellquote"
	"strings"
	"time"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/config"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/policy"
)

// cmdAskMain is `bot ask -- COMMAND ARGS…`: ask a human whether a script may
// run a command (one argument is a command line: askCommand). Exit 0
// approved, 1 denied/expired/cancelled, 2 unavailable or bad usage. It
// never runs the command itself:
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
		return badUsage(env, fs, "bot ask: no command to ask about (put it after --)")
	}
	if *timeout < 0 {
		fmt.Fprintln(env.stderr, "bot ask: -timeout must be > 0 (or 0 for approvals.timeout), got", *timeout)
		return exitUsage
	}
	command, err := askCommand(argv)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot ask: %v\n", err)
		return exitUsage
	}
	asJSON := *output == "json"
	question := scriptHere(env.getenv, command, *reason, *label, *session)
	if *path == "" {
		// Ask the bot serve running on this machine with no Slack (its
		// console), through the Ask API it announces in the local endpoint
		// file. Every failure is unavailable (exit 2).
		final, err := askLocal(ctx, env.getenv, question, *timeout, env.stderr)
		if err != nil {
			return writeAskUnavailable(ctx, env.stdout, err.Error(), asJSON)
		}
		return writeAskAnswer(env.stdout, final, asJSON, "")
	}
	cfg, ok := loadConfig(env, *path, config.Ask)
	if !ok {
		return exitUsage
	}
	log := cfg.Log.NewLogger(env.stderr)
	progress := &askProgress{Out: env.stderr, Now: time.Now}
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
	req := question.Request()
	if started, err := script.Start(ctx, a.Sessions, req, a.now(), a.cfg.Approvals.SessionTTL.D()); err != nil {
		log.Warn("could not record when the session started; the ask names it without", "session", req.SessionID, "err", err)
	} else {
		req.SessionStarted = started
	}
	j := script.Judge(ctx, cfg.Policy.Rules, a.Grants, req, command, log)
	if j.Granted {
		return writeAskGranted(env.stdout, req, j.Grant, asJSON)
	}
	if j.Verdict.Decision == policy.Deny {
		// A deny rule: nobody is asked, as at every other front door.
		stopListening()
		return writeAskAnswer(env.stdout, script.Denied(req, j.Verdict), asJSON, "")
	}
	// Every requirement the verdict states goes with the Ask: a rule's
	// quorum (two approvals for terraform apply) and the rule itself.
	req.Approvals, req.Rule = j.Verdict.Approvals, j.Verdict.Rule
	shown := askview.Prepare(req, j.Verdict.Reading) // the reading that was judged
	req.Shown = &shown
	if team, err := a.slack.AuthTestContext(ctx); err == nil {
		progress.TeamURL = team.URL
	}
	progress.Asking(command)
	final := a.approver.Approve(ctx, req)
	stopListening()
	progress.Ended(final)
	return writeAskAnswer(env.stdout, final, asJSON, progress.Link(final.Channel, final.MessageTS))
}

// askCommand is the command `bot ask` asks about, as bash would read it:
// one argument is a command line (`bot ask -- "terraform apply
// -auto-approve"` is terraform with two arguments, as whoever quoted it
// meant, and a rule on `terraform apply` and its quorum apply to it, which
// they cannot to a program named with spaces); two or more are the words
// of one command, quoted back as a shell reads them. A single program
// whose path has spaces is quoted inside the one argument, or given with
// an argument of its own. The progress line prints the command back as it
// was read.
func askCommand(argv []string) (string, error) {
	if len(argv) == 1 {
		if strings.TrimSpace(argv[0]) == "" {
			return "", errors.New("an empty command to ask about")
		}
		return argv[0], nil
	}
	return shellquote.Join(argv), nil
}
