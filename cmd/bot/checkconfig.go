package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/config"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/internal/preflight"
	"github.com/askops/askops/internal/stores"
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
	hc := &http.Client{Transport: http.DefaultTransport}
	checks := []func(context.Context) preflight.Result{
		func(ctx context.Context) preflight.Result {
			return preflight.Redis(ctx, cfg.Redis.URL != "", cfg.Redis.Addr(), func() (redis.UniversalClient, error) { return stores.OpenRedis(cfg.Redis) })
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

// checkRedisServer is serve's start-up check of the Redis server's
// settings (see pending.CheckServer): a configuration that can evict askops
// keys stops the start; risks are logged as warnings.
func checkRedisServer(ctx context.Context, a *app) error {
	if a.Redis == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return preflight.RedisSettings(ctx, a.Redis, a.cfg.Redis.Addr(), a.log)
}

func newSlackClient(c config.SlackConfig, hc *http.Client) *slack.Client {
	return slackui.NewClient(c.BotToken.Reveal(), c.AppToken.Reveal(), c.APIURL, hc)
}
