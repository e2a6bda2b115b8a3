package main

import (
	"context"
	"fmt"
	"time"

	"github.com/askops/askops/config"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/internal/storeerr"
)

// grantsTimeout bounds the whole store conversation.
const grantsTimeout = 10 * time.Second

// cmdGrantsMain is `bot grants list|add|revoke`: the admin path to standing
// grants. An admin is whoever holds the config and the store's credentials;
// Slack users may grant "for session" and revoke, but never create a
// standing grant, and this command is why that needs no Slack path. Exit 0
// ok, 1 failed (no such grant, store unreachable), 2 bad usage or config.
func cmdGrantsMain(ctx context.Context, env *environment, args []string) int {
	verb, path, rest, code, ok := grantsCommand.Parse(env.stderr, args)
	if !ok {
		return code
	}
	switch verb {
	case "list":
		return grantsList(ctx, env, path, rest)
	case "add":
		return grantsAdd(ctx, env, path, rest)
	}
	return grantsRevoke(ctx, env, path, rest)
}

// grantsCommand is bot grants' shape; -config may come before or after
// the verb.
var grantsCommand = cliflag.Verb{Name: "grants", Verbs: []string{"list", "add", "revoke"}, Synopsis: `-config FILE VERB ...
  list [-session ID] [-o json]
  add -tool bash (-command "npm test" | -prefix "git status") -cwd DIR [-by NAME]
  add -tool read_file|write_file|edit_file|list_files (-path P | -dir D) [-by NAME]
  revoke [-session ID] GRANT_ID`}

func grantsList(ctx context.Context, env *environment, configPath string, args []string) int {
	fs, path := grantsCommand.Flags(env.stderr, "list", "[-session ID] [-o text|json]", configPath)
	session := fs.String("session", "", "list this session's grants instead of the standing ones")
	output := fs.String("o", "text", "text (a line per grant, tab-separated) or json (an array of grants)")
	positional, code, ok := cliflag.ParseInterleaved(fs, args)
	if !ok {
		return code
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(env.stderr, "bot grants list: -o must be text or json, got %q\n", *output)
		return exitUsage
	}
	if len(positional) > 0 {
		return badUsage(env, fs, "bot grants list: unexpected argument %q", positional[0])
	}
	return withGrantStore(ctx, env, *path, func(ctx context.Context, store grants.Store, _ config.Config) int {
		return grantsDone(env, "list", grantsAdmin{Store: store, Out: env.stdout, Err: env.stderr}.List(ctx, *session, *output == "json"))
	})
}

func grantsAdd(ctx context.Context, env *environment, configPath string, args []string) int {
	fs, path := grantsCommand.Flags(env.stderr, "add", "(-tool bash (-command C | -prefix P) -cwd DIR | -tool FILE_TOOL (-path P | -dir D)) [-by NAME]", configPath)
	tool := fs.String("tool", "", "bash, read_file, write_file, edit_file or list_files")
	command := fs.String("command", "", "bash: grant exactly this command line")
	prefix := fs.String("prefix", "", "bash: grant every single simple command starting with these words (never one that runs arbitrary code or code from the workspace: test and build runners, package scripts)")
	cwd := fs.String("cwd", "", "bash: the directory the command runs in, relative to agent.workspace or absolute inside it (\".\" for the workspace)")
	filePath := fs.String("path", "", "file tools: this one path, relative to agent.workspace or absolute inside it")
	dir := fs.String("dir", "", "file tools: this directory and everything under it (\".\" for the whole workspace)")
	by := fs.String("by", "", "who grants it, recorded as admin:NAME (default admin:$USER)")
	positional, code, ok := cliflag.ParseInterleaved(fs, args)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return badUsage(env, fs, "bot grants add: unexpected argument %q", positional[0])
	}
	want := adminScope{Tool: *tool, Command: *command, Prefix: *prefix, Cwd: *cwd, Path: *filePath, Dir: *dir}
	if err := want.Check(func(names ...string) []string { return cliflag.Given(fs, names...) }); err != nil {
		return badUsage(env, fs, "bot grants add: %v", err)
	}
	grantor, err := adminGrantor(*by, env.getenv("USER"))
	if err != nil {
		return badUsage(env, fs, "bot grants add: %v", err)
	}
	return withGrantStore(ctx, env, *path, func(ctx context.Context, store grants.Store, cfg config.Config) int {
		ws, err := openWorkspace(cfg.Agent.Workspace)
		if err != nil {
			fmt.Fprintf(env.stderr, "bot grants add: agent.workspace: %v\n", err)
			return exitUsage
		}
		scope, err := ws.Scope(want)
		if err != nil {
			fmt.Fprintf(env.stderr, "bot grants add: refused: %s\n", storeerr.Message(err))
			return exitUsage
		}
		return grantsDone(env, "add", grantsAdmin{Store: store, Out: env.stdout}.Add(ctx, scope, grantor))
	})
}

func grantsRevoke(ctx context.Context, env *environment, configPath string, args []string) int {
	fs, path := grantsCommand.Flags(env.stderr, "revoke", "[-session ID] GRANT_ID", configPath)
	session := fs.String("session", "", "the grant's session (default: a standing grant)")
	flags, ids := splitGrantIDs(args, func(name string) bool { return fs.Lookup(name) != nil })
	positional, code, ok := cliflag.ParseInterleaved(fs, flags)
	if !ok {
		return code
	}
	positional = append(positional, ids...)
	if len(positional) != 1 {
		return badUsage(env, fs, "bot grants revoke: want exactly one GRANT_ID (see bot grants list)")
	}
	return withGrantStore(ctx, env, *path, func(ctx context.Context, store grants.Store, _ config.Config) int {
		return grantsDone(env, "revoke", grantsAdmin{Store: store, Out: env.stdout}.Revoke(ctx, *session, positional[0]))
	})
}

// withGrantStore loads the config and runs fn on the shared grant store
// within grantsTimeout, so an unreachable Redis fails the command instead
// of hanging it; it returns fn's exit code. A standing grant only makes
// sense in a store other processes share: the in-memory one would take it
// to the grave when this command exits.
func withGrantStore(ctx context.Context, env *environment, path string, fn func(context.Context, grants.Store, config.Config) int) int {
	cfg, ok := loadConfig(env, path, config.Grants)
	if !ok {
		return exitUsage
	}
	if cfg.Redis.URL == "" {
		fmt.Fprintln(env.stderr, "bot grants: standing grants need redis.url; the in-memory store lives in one process, so a grant made here would end with this command (set redis.url or REDIS_URL to the store the bot uses)")
		return exitUsage
	}
	store, closeStore, err := openGrantStore(cfg.Redis, storeOptions{Logger: cfg.Log.NewLogger(env.stderr), SealKey: grants.SealKeyFrom(cfg.Slack.BotToken.Reveal())})
	if err != nil {
		fmt.Fprintf(env.stderr, "config: redis.url: %v\n", err)
		return exitUsage
	}
	defer closeStore()
	ctx, cancel := context.WithTimeout(ctx, grantsTimeout)
	defer cancel()
	return fn(ctx, store, cfg)
}

// grantsDone is a verb's exit code for the store's answer err: not found
// and an unreachable store are failures (exit 1), a refused input is bad
// usage (exit 2).
func grantsDone(env *environment, verb string, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(env.stderr, "bot grants %s: %s\n", verb, storeerr.Message(err))
	if grants.ErrorCode(err) == grants.CodeInvalid {
		return exitUsage
	}
	return exitFailed
}
