package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/slacklink"
	"github.com/askops/askops/pending"
)

// teamURL remembers the workspace's URL once Config.TeamURL answered it; a
// failure is tried again a minute later, so a Slack outage costs the API
// one slow answer a minute, not one per request.
type teamURL struct {
	mu       sync.Mutex
	url      string
	failedAt time.Time
}

// teamRetry is how long a failed look-up of the workspace's URL stands.
const teamRetry = time.Minute

func (s *Service) teamURL(ctx context.Context) string {
	if s.cfg.TeamURL == nil {
		return ""
	}
	s.team.mu.Lock()
	defer s.team.mu.Unlock()
	if s.team.url != "" || (!s.team.failedAt.IsZero() && time.Since(s.team.failedAt) < teamRetry) {
		return s.team.url
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u, err := s.cfg.TeamURL(ctx)
	if err != nil || u == "" {
		s.log.Warn("could not learn the workspace's URL; asks show no message_url for now", "err", err)
		s.team.failedAt = time.Now()
		return ""
	}
	s.team.url = u
	return u
}

// MessageLink is the permalink of a's Slack message (in its session's
// thread when it was posted there), or "" while it has none or the
// workspace's URL is unknown. `bot ask` prints links of the same shape
// (cmd/bot's askProgress.Link): both come from slacklink.Message.
func (s *Service) MessageLink(ctx context.Context, a pending.Ask) string {
	if a.Channel == "" || a.MessageTS == "" {
		return ""
	}
	thread := ""
	if a.ReplyChannel == a.Channel {
		thread = a.ReplyThreadTS
	}
	return slacklink.Message(s.teamURL(ctx), a.Channel, a.MessageTS, thread)
}

// show is a as the API answers it, with its message's permalink.
func (api *API) show(ctx context.Context, a pending.Ask) hook.Ask {
	j := NewAskJSON(a)
	j.MessageURL = api.svc.MessageLink(ctx, a)
	return j
}
