package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/gateway"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// cmdAskMain is `bot ask -- COMMAND ARGS…`: ask a human whether a script may
// run a command. Exit 0 approved, 1 denied/expired/cancelled, 2 unavailable
// or bad usage. It never runs the command itself:
//
//	bot ask -config askops.yaml -- terraform apply && terraform apply
func cmdAskMain(ctx context.Context, env *environment, args []string) int {
	fs := flagSet("ask", env.stderr, "[-config FILE] [-timeout 10m] [-reason TEXT] [-session ID] [-o json] -- COMMAND ARGS...")
	path := fs.String("config", "", "config file (YAML); without it, ask the bot serve running on this machine (its console)")
	timeout := fs.Duration("timeout", 0, "how long to wait for a decision (default approvals.timeout)")
	reason := fs.String("reason", "", "why the command should run, shown to the approvers")
	label := fs.String("label", "", "who is asking, shown to the approvers (default: bot ask on HOST)")
	session := fs.String("session", "", "a session id shared by related asks: offers \"Approve for session\", and a command\nalready granted in the session (same command, same directory) is approved without asking")
	output := fs.String("o", "text", "what to print on stdout at the end: text (one line) or json (the final Ask)")
	if code, ok := parseFlags(fs, args); !ok {
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
		return askLocal(ctx, env, shellJoin(argv), *reason, *label, *session, *timeout, *output)
	}
	cfg, ok := loadConfig(env, *path, cmdAsk)
	if !ok {
		return exitUsage
	}
	log := newLogger(cfg.Log, env.stderr)
	progress := &askProgress{out: env.stderr, now: time.Now}
	a, err := newApp(ctx, cfg, log, NewMetrics(), appOptions{AskTimeout: *timeout, Posted: progress.posted})
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
	command := shellJoin(argv)
	req := askRequest(env, command, *reason, *label, *session)
	if g, ok := a.grantFor(ctx, req, command); ok {
		if *output == "json" {
			granted := pending.Ask{Request: req, Status: pending.Status(pending.Approved), DecidedBy: g.By, DecisionReason: "covered by " + g.String()}
			return printAskJSON(env, granted, "", exitOK)
		}
		if g.Standing() {
			fmt.Fprintf(env.stdout, "approved by standing grant %s (from %s)\n", g.ID, g.By)
		} else {
			fmt.Fprintf(env.stdout, "approved by grant %s (from %s, session %s)\n", g.ID, g.By, *session)
		}
		return exitOK
	}
	if team, err := a.slack.AuthTestContext(ctx); err == nil {
		progress.teamURL = team.URL
	}
	fmt.Fprintf(env.stderr, "bot ask: asking a human about: %s\n", clipLine(command, 200))
	final := a.approver.Approve(ctx, req)
	stopListening()
	progress.ended(final)
	if *output == "json" {
		return printAskJSON(env, final, progress.link(final.Channel, final.MessageTS), exitCode(final))
	}
	return reportAsk(env, final)
}

// askProgress tells the person running bot ask, on stderr, where the Ask
// waits and how it ended: without it a Slack that accepts the post but
// never answers looks like a hang for the whole timeout.
type askProgress struct {
	out     io.Writer
	now     func() time.Time
	teamURL string // from auth.test: https://TEAM.slack.com/; set before the Ask

	mu    sync.Mutex // posted may run on a notifier's goroutine
	start time.Time
}

func (p *askProgress) posted(a pending.Ask, channel, ts string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		p.start = p.now()
	}
	where := "channel " + channel
	if link := p.link(channel, ts); link != "" {
		where += " (" + link + ")"
	}
	fmt.Fprintf(p.out, "bot ask: waiting for a decision in %s until %s (%s)\n",
		where, a.Deadline.Local().Format("15:04:05"), a.Deadline.Sub(p.now()).Round(time.Second))
}

func (p *askProgress) ended(a pending.Ask) {
	p.mu.Lock()
	defer p.mu.Unlock()
	took := ""
	if !p.start.IsZero() {
		took = " after " + p.now().Sub(p.start).Round(100*time.Millisecond).String()
	}
	fmt.Fprintf(p.out, "bot ask: %s%s\n", a.Status, took)
}

// link is a Slack message's permalink, https://TEAM.slack.com/archives/C…/p…
// (the documented permalink shape), or "" when the team URL is unknown.
func (p *askProgress) link(channel, ts string) string {
	if p.teamURL == "" || channel == "" || ts == "" {
		return ""
	}
	return strings.TrimSuffix(p.teamURL, "/") + "/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}

// printAskJSON prints the final Ask as -o json does: the gateway API's Ask
// (the same fields a client of /v1/asks reads) and the command asked about.
// link, when known, is the message's permalink from the team URL.
func printAskJSON(env *environment, a pending.Ask, link string, code int) int {
	j := gateway.NewAskJSON(a)
	j.Reason = a.DecisionReason
	if link != "" {
		j.MessageURL = link
	}
	b, _ := json.Marshal(struct {
		gateway.AskJSON
		Command string `json:"command"`
	}{j, a.Summary})
	fmt.Fprintln(env.stdout, string(b))
	return code
}

func clipLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// askLocal is bot ask with no config: it asks the `bot serve` running on
// this machine with no Slack (its console), through the Ask API that serve
// announces in the local endpoint file. Every failure is unavailable (exit
// 2); nothing runs without an answer.
func askLocal(ctx context.Context, env *environment, command, reason, label, session string, timeout time.Duration, output string) int {
	fail := func(why string) int {
		if output == "json" {
			return printAskJSON(env, pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops", DecisionReason: why}, "", exitUsage)
		}
		fmt.Fprintf(env.stdout, "unavailable: %s\n", why)
		return exitUsage
	}
	p, err := localEndpointPath(env.getenv)
	if err != nil {
		return fail(err.Error())
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fail("no local askops is running (start `bot serve` in another terminal), and no -config was given")
	}
	if err != nil {
		return fail(err.Error())
	}
	var ep localEndpoint
	if err := json.Unmarshal(b, &ep); err != nil || ep.URL == "" || ep.Token == "" {
		return fail(fmt.Sprintf("the local endpoint file %s is not readable as {url, token}", p))
	}
	req := askRequest(env, command, reason, label, session)
	if req.SessionID == "" {
		req.SessionID = req.RunID // an ask of its own: no session grant covers it
	}
	input, _ := json.Marshal(map[string]string{"command": command})
	fmt.Fprintf(env.stderr, "bot ask: asking a human about: %s\n", clipLine(command, 200))
	start := time.Now()
	client := &gateway.Client{BaseURL: ep.URL, Token: ep.Token, Created: func(a pending.Ask) {
		fmt.Fprintf(env.stderr, "bot ask: waiting for a decision in the console at %s until %s (%s)\n",
			ep.URL, a.Deadline.Local().Format("15:04:05"), time.Until(a.Deadline).Round(time.Second))
	}}
	final := client.Settle(ctx, gateway.Call{
		SessionID: req.SessionID, Agent: req.Label, Tool: "Bash", Input: input,
		Cwd: req.Cwd, Reason: req.Reason, Timeout: timeout, By: req.StartedBy,
	})
	fmt.Fprintf(env.stderr, "bot ask: %s after %s\n", final.Status, time.Since(start).Round(100*time.Millisecond))
	if final.Summary == "" {
		final.Summary = command
	}
	if output == "json" {
		return printAskJSON(env, final, "", exitCode(final))
	}
	return reportAsk(env, final)
}

// askRequest describes the command as the bash tool would, so policies,
// scopes and rendering treat it the same.
func askRequest(env *environment, command, reason, label, session string) pending.Request {
	args, _ := json.Marshal(map[string]string{"command": command})
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	who := env.getenv("USER")
	if who == "" {
		who = "unknown user"
	}
	if host != "" {
		who += "@" + host
	}
	if label == "" {
		label = "bot ask on " + host
	}
	if reason == "" {
		reason = "a script asked before running this command (bot ask)"
	}
	return pending.Request{
		RunID:     "ask-" + randomID(),
		SessionID: session,
		Workspace: cwd,
		Label:     label,
		StartedBy: who,
		Tool:      "bash",
		Args:      string(args),
		Call:      pending.Call{Kind: pending.CallCommand, Command: command},
		Summary:   command,
		Reason:    reason,
		Cwd:       cwd,
	}
}

// grantFor asks the policy, once, whether a grant covers command: one of
// req's session's, or a standing grant (the only kind an ask without
// -session can have). The engine's own precedence decides, as for the
// agent: deny rules, built-in dangers and an unparsable command come before
// grants, so a grant never spares the human a command the policy denies or
// finds dangerous (a "git push" grant is not a force push to main). Only a
// grant skips the human here: rules that allow, or mode full, do not (the
// mode is fixed to ask), since a script asked because it wants a human.
// Any doubt (a store error) means no: the human is asked.
func (a *app) grantFor(ctx context.Context, req pending.Request, command string) (grants.Grant, bool) {
	seen := &grantSeen{store: a.grants}
	engine, err := policy.New(policy.Config{Rules: a.cfg.Policy.Rules, Grants: seen, Logger: a.log.With("component", "policy")})
	if err != nil {
		a.log.Warn("could not build the policy; asking", "err", err)
		return grants.Grant{}, false
	}
	v := engine.Evaluate(ctx, policy.Call{
		Tool: req.Tool, Safety: policy.SideEffect, Command: command,
		Cwd: req.Cwd, Workspace: req.Workspace, SessionID: req.SessionID, Mode: policy.ModeAsk,
	})
	if v.Decision != policy.Allow || v.Grant == "" || !seen.found {
		a.log.Info("no grant covers the command; asking", "decision", v.Decision, "rule", v.Rule, "reason", v.Reason)
		return grants.Grant{}, false
	}
	return seen.grant, true
}

// grantSeen is the policy's grant checker for one bot ask: the grant store,
// keeping the grant it matched so the answer can say whose it is.
type grantSeen struct {
	store grants.Store
	grant grants.Grant
	found bool
}

func (s *grantSeen) GrantFor(ctx context.Context, sessionID string, c policy.Call) (string, bool, error) {
	g, ok, err := s.store.Match(ctx, sessionID, c)
	if err != nil || !ok {
		return "", false, err
	}
	s.grant, s.found = g, true
	return g.ID, true, nil
}

// reportAsk prints the outcome and who decided, and maps it to the exit code.
func reportAsk(env *environment, a pending.Ask) int {
	outcome, ok := a.Outcome()
	if !ok {
		outcome = pending.Unavailable
	}
	line := string(outcome)
	switch outcome {
	case pending.ApprovedSession:
		line = "approved for session"
	}
	if a.DecidedBy != "" {
		line += " by " + a.DecidedBy
	}
	if a.DecisionReason != "" {
		line += ": " + a.DecisionReason
	}
	fmt.Fprintln(env.stdout, line)
	return exitCode(a)
}

// exitCode is bot ask's exit status for a final Ask: 0 approved, 2
// unavailable, 1 any other outcome.
func exitCode(a pending.Ask) int {
	outcome, ok := a.Outcome()
	switch {
	case ok && outcome.Approves():
		return exitOK
	case !ok || outcome == pending.Unavailable:
		return exitUsage
	default:
		return exitFailed
	}
}

// shellJoin quotes argv the way a POSIX shell would read it back, so the
// approver sees exactly what will run.
func shellJoin(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%^", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
