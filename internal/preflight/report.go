package preflight

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/askops/askops/internal/redisconn"
)

// Report writes the results as check-config prints them (ok NAME DETAIL,
// FAIL KEY: ERR, WARN KEY: WARNING) and reports whether every check
// passed.
func Report(w io.Writer, results []Result) (ok bool) {
	ok = true
	for _, r := range results {
		if r.Err != nil {
			ok = false
			fmt.Fprintf(w, "FAIL %s: %v\n", r.Key, r.Err)
			continue
		}
		fmt.Fprintf(w, "ok %s %s\n", r.Name, r.Detail)
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "WARN %s: %s\n", r.Key, warn)
		}
	}
	return ok
}

// LocalOnly replaces the Slack and model checks when there is no slack
// section: serve then runs the console alone on listen, and needs neither.
func LocalOnly(listen string) []func(context.Context) Result {
	return []func(context.Context) Result{
		func(context.Context) Result {
			return Result{Name: "slack", Key: "slack", Detail: "not configured: serve runs the local console alone on " + listen}
		},
		func(context.Context) Result {
			return Result{Name: "model", Key: "openai.model", Detail: "not checked: without Slack serve starts no runs (bot run needs openai.model)"}
		},
	}
}

// RedisSettings is serve's start-up check of the Redis server at addr
// (redisconn.CheckServer): a configuration that can evict askops keys is an
// error naming redis.url, and stops the start; risks are logged as
// warnings.
func RedisSettings(ctx context.Context, client redisconn.Client, addr string, log *slog.Logger) error {
	check, err := redisconn.CheckServer(ctx, client)
	if err != nil {
		return fmt.Errorf("redis.url: CONFIG GET on %s: %w", addr, err)
	}
	if check.Refused != nil {
		return fmt.Errorf("redis.url: %s: %w", addr, check.Refused)
	}
	for _, w := range check.Warnings {
		log.Warn("redis: "+w, "redis", addr)
	}
	log.Info("redis server settings", "redis", addr, "settings", check.Summary())
	return nil
}
