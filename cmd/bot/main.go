// Command bot is the askops Slack app: it runs AI agents and turns every tool
// call its policy marks "ask" into an Approve / Approve for session / Deny
// message in Slack.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; tests call it with their own args and environment.
// It returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	_, _, _ = ctx, getenv, stdin
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	switch args[0] {
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "askops %s\n", version)
		return 0
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "bot: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `askops %s: supervise AI agents from Slack

usage:
  bot serve -config FILE          run the Slack app
  bot run -config FILE "TASK"     run one agent task; its Asks go to Slack
  bot ask -config FILE -- CMD...  ask a human whether CMD may run (exit 0 approved)
  bot check-config -config FILE   validate the config and reach Redis, Slack, the model
  bot version
`, version)
}
