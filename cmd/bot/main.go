// Command bot is the askops Slack app: it runs AI agents and turns every tool
// call its policy marks "ask" into an Approve / Approve for session / Deny
// message in Slack.
//
// Subcommands: serve (the Slack app), run (one agent run from a terminal),
// ask (ask a human from any script), grants (an admin's standing grants),
// audit (verify or export the tamper-evident audit trail),
// check-config, version. main only wires
// the process to run, which tests call whole with their own arguments,
// environment and output.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/askops/askops/config"
	"github.com/askops/askops/internal/buildinfo"
	"github.com/askops/askops/internal/redisconn"
)

// version, commit and date may be set at build time with -ldflags "-X
// main.version=… -X main.commit=… -X main.date=…" (the Dockerfile does);
// otherwise build reads them from the build info Go stamps.
var version, commit, date = "dev", "", ""

// build is what `bot version` prints.
func build() buildinfo.Build {
	return buildinfo.Read(buildinfo.Stamped{Version: version, Commit: commit, Date: date})
}

// buildVersion is the version `bot version`, askops_build_info and the
// logs report.
func buildVersion() string { return build().Version }

// Exit codes. ask documents them as its contract: 0 approved, 1 not
// approved, 2 unavailable or bad usage.
const (
	exitOK     = 0
	exitFailed = 1 // denied / expired / cancelled, a failed run, a failed check
	exitUsage  = 2 // bad usage, bad config, or the Ask could not be carried
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	redisconn.QuietLog()
	stopProfile := profileOnSignals(os.Getenv) // a no-op unless built with askops_pprof
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	os.Exit(code)
}

// run is the whole program; tests call it with their own args and environment.
// It returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "version", "-version", "--version":
		build().Print(stdout)
		return exitOK
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "bot: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	env := &environment{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	return cmd(ctx, env, rest)
}

// commands maps each subcommand to its entry point, which parses its own
// flags (printing its own help) and returns the exit code. version and help
// are answered by run itself.
var commands = map[string]func(ctx context.Context, env *environment, args []string) int{
	"check-config": cmdCheckConfigMain,
	"serve":        cmdServeMain,
	"run":          cmdRunMain,
	"ask":          cmdAskMain,
	"grants":       cmdGrantsMain,
	"audit":        cmdAuditMain,
	"hook":         cmdHookMain,
	"mcp":          cmdMCPMain,
	"sandbox":      cmdSandboxMain,
}

// environment is what the process gets from outside: variables and streams.
type environment struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `askops %s: supervise AI agents from Slack

usage:
  bot serve [-config FILE] [-rotate-local-token]
                                  run the Slack app; with no config (or no slack
                                  section) the local approvals console alone
  bot run -config FILE "TASK"     run one agent task; its Asks go to Slack, or with
                                  no slack section to the local serve's console
  bot ask [-config FILE] [-timeout 10m] [-reason TEXT] [-session ID] [-o json] -- COMMAND ARGS...
                                  ask a human whether COMMAND may run
                                  (exit 0 approved, 1 denied/expired/cancelled,
                                  2 unavailable or bad usage)
  bot grants -config FILE list [-session ID]
  bot grants -config FILE add -tool bash (-command CMD | -prefix WORDS) -cwd DIR [-by NAME]
  bot grants -config FILE add -tool read_file|write_file|edit_file|list_files (-path P | -dir D) [-by NAME]
  bot grants -config FILE revoke [-session ID] GRANT_ID
                                  standing grants (needs redis.url): exit 0 ok,
                                  1 not found or store down, 2 bad usage or refused scope
  bot audit -config FILE verify [-o json] [-anchor SEQ:HASH]
                                  check the audit trail's hash chain (needs redis.url):
                                  exit 0 intact, 1 broken (every gap is named)
  bot audit -config FILE export [-since 24h|RFC3339]
                                  one JSON line per Ask: who asked, what, why, every
                                  event (votes, reminders, escalations), the decision
  bot hook claude|codex [-url URL -token-env NAME | -config FILE] [-timeout D] [-print-settings]
                                  answer one Claude Code / Codex permission hook
                                  event (stdin) with askops' decision (stdout)
  bot mcp [-url URL -token-env NAME | -config FILE] [-session ID] [-timeout D]
                                  MCP server on stdio: the approval_prompt tool
  bot sandbox -workspace DIR [-config FILE] -- COMMAND ARGS...
                                  run COMMAND inside the OS bound the agent's allowed
                                  commands run in; exit with its status (126: no bound)
  bot check-config -config FILE   validate the config and reach Redis, Slack, the model
  bot version

Flags take one or two dashes (-config or --config). Secrets may come from
SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET, REDIS_URL,
OPENAI_BASE_URL and OPENAI_API_KEY instead of the file.
`, buildVersion())
}

// badUsage reports a mistake in a subcommand's arguments: the problem on
// stderr, then the subcommand's help (fs.Usage, which writes there too). It
// returns exitUsage, for the caller to return.
func badUsage(env *environment, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(env.stderr, format+"\n", args...)
	fs.Usage()
	return exitUsage
}

// loadConfig loads and validates the config for cmd, printing every problem
// (prefixed by its key) to stderr. ok is false when the command must exit 2.
func loadConfig(env *environment, path string, cmd config.Command) (config.Config, bool) {
	cfg, ps := config.Load(path, env.getenv, cmd)
	for _, p := range ps {
		fmt.Fprintf(env.stderr, "config: %s\n", p)
	}
	return cfg, len(ps) == 0
}
