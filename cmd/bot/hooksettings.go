package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/askops/askops/gateway/hook"
)

// hookSlack is how long past askops' own deadline the agent's hook timeout
// is set: the hook answers at the latest hook.Grace after it,
// and the rest is room for a slow start.
const hookSlack = 60 * time.Second

// printHookSettings is `bot hook claude|codex -print-settings`: the
// settings block that runs this binary as the agent's hook, with its
// timeout above askops' own and, for Claude Code, onFailure: block. name
// is the CLI's word for the agent (claude, codex). With no
// -url it names the serve on this machine (the hook finds it through the
// endpoint file, so the line holds no URL or token); with -url it names
// that serve and the token variable.
func printHookSettings(env *environment, name, agent string, g gatewayCLI) int {
	bot, err := os.Executable()
	if err != nil {
		bot = "bot"
	}
	command := bot + " hook " + name
	askTimeout := *g.timeout
	switch {
	case *g.url != "":
		command += " -url " + *g.url + " -token-env " + *g.tokenEnv
	case *g.config != "":
		command += " -config " + *g.config
	default:
		ep, err := hook.ReadLocalEndpoint(env.getenv)
		if err != nil {
			fmt.Fprintf(env.stderr, "bot hook %s -print-settings: %v; or give -url\n", name, err)
			return exitUsage
		}
		if t := time.Duration(ep.TimeoutSeconds) * time.Second; t > 0 && (askTimeout <= 0 || askTimeout > t) {
			askTimeout = t
		}
	}
	if askTimeout <= 0 {
		askTimeout = 10 * time.Minute // approvals.timeout's default
	}
	// The hook answers at the latest its Ask's life plus the client's
	// grace. With -url or -config this process cannot know the serve's
	// approvals.timeout, which may be longer than the default assumed
	// above: the line then carries -timeout, so no Ask outlives the hook
	// timeout printed below.
	if *g.timeout > 0 || *g.url != "" || *g.config != "" {
		command += " -timeout " + askTimeout.String()
	}
	entryHook := map[string]any{"type": "command", "command": command, "timeout": int((askTimeout + hookSlack) / time.Second)}
	event := "PermissionRequest" // Codex asks only this one
	where := "$CODEX_HOME/hooks.json (~/.codex/hooks.json); trust it once with /hooks"
	entry := map[string]any{"hooks": []any{entryHook}}
	if agent == hook.AgentClaude {
		entryHook["onFailure"] = "block" // Claude Code 2.1.295+: a failed hook blocks instead of letting the call through
		event, where = "PreToolUse", ".claude/settings.json (or ~/.claude/settings.json)"
		entry["matcher"] = "*"
	}
	b, _ := json.MarshalIndent(map[string]any{"hooks": map[string]any{event: []any{entry}}}, "", "  ")
	fmt.Fprintf(env.stderr, "# for %s\n", where)
	fmt.Fprintln(env.stdout, string(b))
	return exitOK
}
