package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
)

// checkTimeout bounds each reachability check, so check-config answers
// promptly even when a host black-holes packets.
const checkTimeout = 5 * time.Second

// cmdCheckConfigMain validates the file, then reaches Redis, Slack and the
// model endpoint. Exit 0 all ok, 1 something unreachable, 2 invalid config.
func cmdCheckConfigMain(ctx context.Context, env *environment, args []string) int {
	path, code, ok := parseConfigFlag(env, cmdCheckConfig, args)
	if !ok {
		return code
	}
	cfg, ok := loadConfig(env, path, cmdCheckConfig)
	if !ok {
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "ok config %s\n", path)
	failed := false
	for _, r := range reachabilityChecks(ctx, cfg, http.DefaultTransport) {
		if r.err != nil {
			failed = true
			fmt.Fprintf(env.stdout, "FAIL %s: %v\n", r.key, r.err)
			continue
		}
		fmt.Fprintf(env.stdout, "ok %s %s\n", r.name, r.detail)
		for _, w := range r.warnings {
			fmt.Fprintf(env.stdout, "WARN %s: %s\n", r.key, w)
		}
	}
	if failed {
		return exitFailed
	}
	return exitOK
}

// checkResult is one reachability check's answer. key names the config key
// most likely at fault when it failed.
type checkResult struct {
	name   string
	key    string
	detail string
	err    error
	// warnings are risks that do not fail the check.
	warnings []string
}

// reachabilityChecks runs the checks concurrently (each bounded by
// checkTimeout) and returns them in a stable order.
func reachabilityChecks(ctx context.Context, cfg Config, rt http.RoundTripper) []checkResult {
	checks := []func(context.Context) checkResult{
		func(ctx context.Context) checkResult { return checkRedis(ctx, cfg.Redis) },
		func(ctx context.Context) checkResult { return checkSlack(ctx, cfg.Slack, &http.Client{Transport: rt}) },
		func(ctx context.Context) checkResult { return checkModel(ctx, cfg.OpenAI, &http.Client{Transport: rt}) },
	}
	if cfg.noSlack {
		checks = append(checks[:1], localChecks(cfg)...) // console.go
	}
	results := make([]checkResult, len(checks))
	done := make(chan struct{}, len(checks))
	for i, c := range checks {
		go func() {
			ctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			results[i] = c(ctx)
			done <- struct{}{}
		}()
	}
	for range checks {
		<-done
	}
	return results
}

func checkRedis(ctx context.Context, c RedisConfig) checkResult {
	r := checkResult{name: "redis", key: "redis.url"}
	if c.URL == "" {
		r.detail = "not configured: in-memory store (one process; Asks do not survive a restart)"
		return r
	}
	client, err := openRedis(c)
	if err != nil {
		r.err = err
		return r
	}
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		r.err = fmt.Errorf("PING %s: %w", redisAddr(c.URL), err)
		return r
	}
	check, err := pending.CheckServer(ctx, client)
	switch {
	case err != nil:
		r.err = fmt.Errorf("CONFIG GET on %s: %w", redisAddr(c.URL), err)
	case check.Refused != nil:
		r.err = fmt.Errorf("%s: %w", redisAddr(c.URL), check.Refused)
	}
	r.detail = redisAddr(c.URL) + " PING; " + check.Summary()
	r.warnings = check.Warnings
	return r
}

// checkRedisServer is serve's start-up check of the Redis server's
// settings (see pending.CheckServer): a configuration that can evict askops
// keys stops the start; risks are logged as warnings.
func checkRedisServer(ctx context.Context, a *app) error {
	if a.redis == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	check, err := pending.CheckServer(ctx, a.redis)
	if err != nil {
		return fmt.Errorf("redis.url: CONFIG GET on %s: %w", redisAddr(a.cfg.Redis.URL), err)
	}
	if check.Refused != nil {
		return fmt.Errorf("redis.url: %s: %w", redisAddr(a.cfg.Redis.URL), check.Refused)
	}
	for _, w := range check.Warnings {
		a.log.Warn("redis: "+w, "redis", redisAddr(a.cfg.Redis.URL))
	}
	a.log.Info("redis server settings", "redis", redisAddr(a.cfg.Redis.URL), "settings", check.Summary())
	return nil
}

// openRedis opens a client for the configured URL (redis://, rediss://,
// sentinel or cluster forms; see pending.OpenRedis). Its clients honour
// context deadlines, so a stuck Redis cannot hold a caller past its context.
func openRedis(c RedisConfig) (redis.UniversalClient, error) {
	return pending.OpenRedisTuned(c.URL.Reveal(), c.tuning()) // its errors redact the password
}

// redisAddr is the redis URL's host:port/db without credentials, for output.
func redisAddr(u Secret) string {
	pu, err := url.Parse(u.Reveal())
	if err != nil {
		return "redis"
	}
	pu.User = nil
	pu.RawQuery = ""
	return pu.String()
}

// slackAPIURL is slack.api_url as slack-go wants it (with a trailing
// slash), or "" for Slack's own.
func slackAPIURL(s string) string {
	if s == "" {
		return ""
	}
	return strings.TrimRight(s, "/") + "/"
}

func newSlackClient(c SlackConfig, hc *http.Client) *slack.Client {
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if u := slackAPIURL(c.APIURL); u != "" {
		opts = append(opts, slack.OptionAPIURL(u))
	}
	if c.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(c.AppToken.Reveal()))
	}
	return slack.New(c.BotToken.Reveal(), opts...)
}

// tokenAtFault reports whether an auth.test error means the token is wrong.
func tokenAtFault(slackErr string) bool {
	switch slackErr {
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "not_allowed_token_type":
		return true
	}
	return false
}

func checkSlack(ctx context.Context, c SlackConfig, hc *http.Client) checkResult {
	r := checkResult{name: "slack", key: "slack.bot_token"}
	resp, err := newSlackClient(c, hc).AuthTestContext(ctx)
	if err != nil {
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || !tokenAtFault(se.Err) {
			if c.APIURL != "" {
				r.key = "slack.api_url"
			} else {
				r.key = "slack"
			}
		}
		r.err = fmt.Errorf("auth.test: %w", err)
		return r
	}
	r.detail = fmt.Sprintf("auth.test team=%s bot=%s (%s)", resp.TeamID, resp.User, resp.UserID)
	return r
}

func checkModel(ctx context.Context, c OpenAIConfig, hc *http.Client) checkResult {
	r := checkResult{name: "model", key: "openai.base_url"}
	u := strings.TrimRight(c.BaseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.err = err
		return r
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey.Reveal())
	}
	resp, err := hc.Do(req)
	if err != nil {
		r.err = fmt.Errorf("GET %s: %w", u, err)
		return r
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		r.key = "openai.api_key"
		r.err = fmt.Errorf("GET %s: %s", u, resp.Status)
		return r
	case resp.StatusCode != http.StatusOK:
		r.err = fmt.Errorf("GET %s: %s", u, resp.Status)
		return r
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	// Some compatible servers list nothing useful; only a list that is
	// readable and non-empty is held against openai.model.
	if json.Unmarshal(body, &list) == nil && len(list.Data) > 0 {
		ids := make([]string, len(list.Data))
		for i, m := range list.Data {
			ids[i] = m.ID
		}
		if !slices.Contains(ids, c.Model) {
			r.key = "openai.model"
			r.err = fmt.Errorf("model %q is not offered by %s (it lists %d models)", c.Model, c.BaseURL, len(ids))
			return r
		}
	}
	r.detail = fmt.Sprintf("GET %s: %s offered", u, c.Model)
	return r
}
