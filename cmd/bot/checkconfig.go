package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/config"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/internal/preflight"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/slackui"
)

// checkTimeout bounds each reachability check, so check-config answers
// promptly even when a host black-holes packets.
const checkTimeout = 5 * time.Second

// cmdCheckConfigMain validates the file, then reaches Redis, Slack and the
// model endpoint. Exit 0 all ok, 1 something unreachable, 2 invalid config.
func cmdCheckConfigMain(ctx context.Context, env *environment, args []string) int {
	path, code, ok := cliflag.ParseConfigOnly(string(config.CheckConfig), env.stderr, args)
	if !ok {
		return code
	}
	cfg, ok := loadConfig(env, path, config.CheckConfig)
	if !ok {
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "ok config %s\n", path)
	b, err := newBound(ctx, cfg)
	if err != nil {
		fmt.Fprintf(env.stdout, "FAIL bound: %v\n", err)
		return exitUsage
	}
	// What holds the commands the agent runs without a person.
	fmt.Fprintf(env.stdout, "bound: %s\n", b.Describe())
	hc := &http.Client{Transport: http.DefaultTransport}
	checks := []func(context.Context) preflight.Result{
		func(ctx context.Context) preflight.Result {
			return preflight.Redis(ctx, cfg.Redis.URL != "", cfg.Redis.Addr(), func() (redisconn.Client, error) { return openRedis(cfg.Redis) })
		},
		func(ctx context.Context) preflight.Result {
			return preflight.Slack(ctx, newSlackClient(cfg.Slack, hc), cfg.Slack.APIURL != "")
		},
		func(ctx context.Context) preflight.Result {
			return preflight.Model(ctx, cfg.OpenAI.BaseURL, cfg.OpenAI.APIKey.Reveal(), cfg.OpenAI.Model, hc)
		},
	}
	if why := cfg.OpenAI.RunsOffReason(); why != "" {
		checks[2] = func(context.Context) preflight.Result {
			return preflight.Result{Name: "model", Key: "openai.model", Detail: "not configured: runs are off; " + why}
		}
	}
	if cfg.NoSlack() {
		checks = append(checks[:1], preflight.LocalOnly(cfg.Console.Listen)...)
	}
	if !preflight.Report(env.stdout, preflight.All(ctx, checkTimeout, checks...)) {
		return exitFailed
	}
	return exitOK
}

// checkRedisServer is every serve's check of the Redis server's settings
// (see redisconn.CheckServer), the console-only one's too: a configuration
// that can evict askops keys stops the start; risks are logged as
// warnings. The watch it returns (nil with the in-memory stores) judges
// the server again on every /readyz and every redisconn.ServerWatchEvery
// (startServerWatch), so a policy changed at run time (CONFIG SET
// maxmemory-policy allkeys-lru) or persistence turned off turns readiness
// red instead of going unnoticed.
func checkRedisServer(ctx context.Context, client redisconn.Client, addr string, log *slog.Logger) (*redisconn.ServerWatch, error) {
	if client == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := preflight.RedisSettings(ctx, client, addr, log); err != nil {
		return nil, err
	}
	w := redisconn.NewServerWatch(client, log)
	if err := w.Check(ctx); err != nil { // the baseline later checks compare with
		return nil, fmt.Errorf("redis.url: %s: %w", addr, err)
	}
	return w, nil
}

// startServerWatch runs w among l's loops (nothing with the in-memory
// stores, where w is nil); l's stop drains it.
func startServerWatch(l *loops, w *redisconn.ServerWatch) {
	if w != nil {
		l.start("redis-settings", w.Run)
	}
}

// storeReady is readiness' store check: the store answers (ping), and its
// Redis server's settings, judged again now, put no askops key at risk.
func storeReady(ping func(context.Context) error, w *redisconn.ServerWatch) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := ping(ctx); err != nil {
			return err
		}
		if w == nil {
			return nil
		}
		if err := w.Check(ctx); err != nil {
			return fmt.Errorf("redis settings: %w", err)
		}
		return nil
	}
}

func newSlackClient(c config.SlackConfig, hc *http.Client) *slack.Client {
	return slackui.NewClient(c.BotToken.Reveal(), c.AppToken.Reveal(), c.APIURL, hc)
}
