package fakeslack

import (
	"net/http"
	"time"
)

// RateLimits makes the fake hold an app to Slack's published Web API rate
// limits (https://docs.slack.dev/apis/web-api/rate-limits): each method's
// tier, per minute with bursts, and chat.postMessage's own limit of about
// one message a second per channel, with short bursts. A call over a limit
// is answered 429 with Retry-After (whole seconds, as Slack does) and has
// no effect; it is recorded with Status 429 like any call.
//
// It is an option (Options.RateLimits) because most tests post faster than
// a second a message and are not about pacing; the benchmarks and the
// pacing tests turn it on.
type RateLimits struct {
	// PerChannelInterval and PerChannelBurst are chat.postMessage's limit
	// per channel: one post per interval, burst of them at once; default
	// 1s and 4 (Slack allows "short bursts" and does not say how short).
	PerChannelInterval time.Duration
	PerChannelBurst    int
	// PerMinute overrides or adds methods' limits: calls a minute, with up
	// to a minute's worth at once. Methods in neither it nor SlackTier
	// are not limited.
	PerMinute map[string]int
}

// SlackTier is a method's per-minute limit as Slack publishes it (Tier 1
// is 1+ a minute, Tier 2 20+, Tier 3 50+, Tier 4 100+), for the methods
// the fake serves; chat.postMessage's per-channel limit is RateLimits' own.
func SlackTier(method string) (perMinute int, ok bool) {
	switch method {
	case "apps.connections.open":
		return 1, true // Tier 1
	case "usergroups.users.list", "usergroups.list":
		return 20, true // Tier 2
	case "chat.update", "chat.delete", "conversations.open":
		return 50, true // Tier 3
	case "chat.postEphemeral", "views.open", "views.push", "views.update", "views.publish", "users.info",
		"chat.getPermalink", "auth.test": // the last two are "special", Tier 4 in practice
		return 100, true // Tier 4
	}
	return 0, false
}

// limiter is GCRA per key: a key's theoretical arrival time moves one
// interval ahead per call allowed.
type limiter struct {
	tat map[string]time.Time
}

// allow takes a call for key now if interval/burst allow it, else says how
// long until they would.
func (l *limiter) allow(key string, now time.Time, interval time.Duration, burst int) (time.Duration, bool) {
	tat := l.tat[key]
	if tat.Before(now) {
		tat = now
	}
	if at := tat.Add(-time.Duration(burst-1) * interval); at.After(now) {
		return at.Sub(now), false
	}
	l.tat[key] = tat.Add(interval)
	return 0, true
}

// rateLimitedLocked answers a call over its limit, or reports ok.
func (s *Server) rateLimitedLocked(req *apiRequest, channel string, now time.Time) (answer, bool) {
	rl := s.opts.RateLimits
	if rl == nil {
		return answer{}, false
	}
	if s.limits.tat == nil {
		s.limits.tat = map[string]time.Time{}
	}
	var wait time.Duration
	allowed := true
	if req.method == "chat.postMessage" && channel != "" {
		interval, burst := rl.PerChannelInterval, rl.PerChannelBurst
		if interval <= 0 {
			interval = time.Second
		}
		if burst <= 0 {
			burst = 4
		}
		wait, allowed = s.limits.allow("post "+channel, now, interval, burst)
	} else {
		n, ok := rl.PerMinute[req.method]
		if !ok {
			n, ok = SlackTier(req.method)
		}
		if ok && n > 0 {
			wait, allowed = s.limits.allow("method "+req.method, now, time.Minute/time.Duration(n), n)
		}
	}
	if allowed {
		return answer{}, false
	}
	s.rateLimited++
	return faultAnswer(FailMode{Status: http.StatusTooManyRequests, RetryAfter: wait}), true
}

// RateLimited is how many calls the fake answered 429 because of
// Options.RateLimits.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rateLimited
}
