// Package preflight checks that the services askops depends on answer, as
// bot check-config reports them: Redis (and whether its settings keep
// askops' keys), Slack's auth.test, and the model endpoint's model list.
// Each result names the config key most likely at fault.
package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/redisconn"
)

// Result is one reachability check's answer. Key names the config key
// most likely at fault when it failed.
type Result struct {
	Name   string
	Key    string
	Detail string
	Err    error
	// Warnings are risks that do not fail the check.
	Warnings []string
}

// All runs the checks concurrently, each bounded by timeout, and returns
// their results in the checks' order.
func All(ctx context.Context, timeout time.Duration, checks ...func(context.Context) Result) []Result {
	results := make([]Result, len(checks))
	done := make(chan struct{}, len(checks))
	for i, c := range checks {
		go func() {
			ctx, cancel := context.WithTimeout(ctx, timeout)
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

// Redis reaches the server at addr (credentials left out) through open,
// and judges its settings (redisconn.CheckServer). With configured false the
// store is in memory and there is nothing to reach.
func Redis(ctx context.Context, configured bool, addr string, open func() (redisconn.Client, error)) Result {
	r := Result{Name: "redis", Key: "redis.url"}
	if !configured {
		r.Detail = "not configured: in-memory store (one process; Asks do not survive a restart)"
		return r
	}
	client, err := open()
	if err != nil {
		r.Err = err
		return r
	}
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		r.Err = fmt.Errorf("PING %s: %w", addr, err)
		return r
	}
	check, err := redisconn.CheckServer(ctx, client)
	switch {
	case err != nil:
		r.Err = fmt.Errorf("CONFIG GET on %s: %w", addr, err)
	case check.Refused != nil:
		r.Err = fmt.Errorf("%s: %w", addr, check.Refused)
	}
	r.Detail = addr + " PING; " + check.Summary()
	r.Warnings = check.Warnings
	return r
}

// Slack calls auth.test with api; customURL says slack.api_url is set, so
// a failure that is not the token's is blamed on it.
func Slack(ctx context.Context, api *slack.Client, customURL bool) Result {
	r := Result{Name: "slack", Key: "slack.bot_token"}
	resp, err := api.AuthTestContext(ctx)
	if err != nil {
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || !tokenAtFault(se.Err) {
			if customURL {
				r.Key = "slack.api_url"
			} else {
				r.Key = "slack"
			}
		}
		r.Err = fmt.Errorf("auth.test: %w", err)
		return r
	}
	r.Detail = fmt.Sprintf("auth.test team=%s bot=%s (%s)", resp.TeamID, resp.User, resp.UserID)
	return r
}

// tokenAtFault reports whether an auth.test error means the token is wrong.
func tokenAtFault(slackErr string) bool {
	switch slackErr {
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "not_allowed_token_type":
		return true
	}
	return false
}

// Model lists the OpenAI-compatible endpoint's models and looks for model.
func Model(ctx context.Context, baseURL, apiKey, model string, hc *http.Client) Result {
	r := Result{Name: "model", Key: "openai.base_url"}
	u := strings.TrimRight(baseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		r.Err = err
		return r
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		r.Err = fmt.Errorf("GET %s: %w", u, err)
		return r
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		r.Key = "openai.api_key"
		r.Err = fmt.Errorf("GET %s: %s", u, resp.Status)
		return r
	case resp.StatusCode != http.StatusOK:
		r.Err = fmt.Errorf("GET %s: %s", u, resp.Status)
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
		if !slices.Contains(ids, model) {
			r.Key = "openai.model"
			r.Err = fmt.Errorf("model %q is not offered by %s (it lists %d models)", model, baseURL, len(ids))
			return r
		}
	}
	r.Detail = fmt.Sprintf("GET %s: %s offered", u, model)
	return r
}
