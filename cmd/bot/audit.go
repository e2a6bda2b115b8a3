package main

import (
	"context"
	"fmt"
	"time"

	"github.com/askops/askops/config"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/pending"
)

// auditCommand is bot audit's shape; -config may come before or after
// the verb.
var auditCommand = cliflag.Verb{Name: "audit", Verbs: []string{"verify", "export"}, Synopsis: `-config FILE VERB ...
  verify [-o text|json] [-anchor SEQ:HASH]...
  export [-since 24h|2026-01-02T15:04:05Z]`}

// auditTimeout bounds the whole store conversation (a verify reads up to
// the whole capped stream, 100,000 events by default).
const auditTimeout = 2 * time.Minute

// cmdAuditMain is `bot audit verify|export`: checks the audit trail's hash
// chain, or writes it as JSON lines. Exit 0 intact / exported, 1 any gap in
// the chain (pending.AuditReport.Gaps) or store unreachable, 2 bad usage or
// config.
func cmdAuditMain(ctx context.Context, env *environment, args []string) int {
	verb, path, rest, code, ok := auditCommand.Parse(env.stderr, args)
	if !ok {
		return code
	}
	fs, configPath := auditCommand.Flags(env.stderr, verb, verb, path)
	var output, since *string
	var anchors []pending.AuditHead
	switch verb {
	case "verify":
		output = fs.String("o", "text", "text (a summary; every gap named, with the event ids around it) or json (the report)")
		fs.Func("anchor", "a head printed by an earlier verify (SEQ:HASH), kept outside Redis: the event at SEQ must still hash to it (repeatable)", func(v string) error {
			a, err := pending.ParseAnchor(v)
			anchors = append(anchors, a)
			return err
		})
	case "export":
		since = fs.String("since", "24h", "Asks with an event in this last duration (Go syntax: 24h, 90m) or since this time (RFC 3339)")
	}
	positional, code, ok := cliflag.ParseInterleaved(fs, rest)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return badUsage(env, fs, "bot audit %s: unexpected argument %q", verb, positional[0])
	}
	// Every flag is checked before the store is opened.
	var run func(context.Context, pending.AuditLog) (ok bool, err error)
	if verb == "verify" {
		if *output != "text" && *output != "json" {
			fmt.Fprintf(env.stderr, "bot audit verify: -o must be text or json, got %q\n", *output)
			return exitUsage
		}
		run = func(ctx context.Context, log pending.AuditLog) (bool, error) {
			return writeVerify(ctx, log, env.stdout, *output == "json", anchors...)
		}
	} else {
		from, err := parseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintf(env.stderr, "bot audit export: -since: %v\n", err)
			return exitUsage
		}
		run = func(ctx context.Context, log pending.AuditLog) (bool, error) {
			err := exportSince(ctx, log, env.stdout, from)
			return err == nil, err
		}
	}
	// Like grants, audit talks only to the store: no model, no Slack secrets.
	cfg, ok := loadConfig(env, *configPath, config.Grants)
	if !ok {
		return exitUsage
	}
	if cfg.Redis.URL == "" {
		fmt.Fprintln(env.stderr, "bot audit: the audit trail needs redis.url; the in-memory store lives in the serving process and ends with it, so there is nothing here to check (set redis.url or REDIS_URL to the store the bot uses)")
		return exitUsage
	}
	client, err := openRedis(cfg.Redis)
	if err != nil {
		fmt.Fprintf(env.stderr, "config: redis.url: %v\n", err)
		return exitUsage
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	// A reader decides nothing, so it waits for no replica (ReplicaAcks < 0).
	store, err := pending.NewRedisStore(ctx, client, pending.Options{ReplicaAcks: -1, Logger: cfg.Log.NewLogger(env.stderr).With("component", "pending")})
	if err != nil {
		fmt.Fprintf(env.stderr, "bot audit %s: %v\n", verb, err)
		return exitFailed
	}
	defer store.Close()
	ok, err = run(ctx, store)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot audit %s: %v\n", verb, err)
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}
