package gateway

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

func TestMain(m *testing.M) {
	// go-redis logs its redials with the standard logger; the store-down
	// cases would fill the output with them.
	redis.SetLogger(quietRedis{})
	goleak.VerifyTestMain(m)
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

const (
	approvalChannel = "CAPPROVALS"
	approverID      = "UAPPROVER1"
)

// stack is the whole gateway on real parts: the policy engine, a pending
// store (memory or a real Redis), grants, the approval core, and slackui's
// notifier talking to a fake Slack.
type stack struct {
	slack *fakeslack.Server
	asks  interface {
		pending.Store
		Asks
	}
	grants grants.Store
	svc    *Service
}

type stackOptions struct {
	redis   redis.UniversalClient // nil: memory stores
	timeout time.Duration         // approvals.timeout; default 1m
	rules   []policy.Rule
	// grantDurations are approvals.grant_durations.
	grantDurations []time.Duration
	// leaseTTL is the stores' (pending.Options.LeaseTTL); 0: the default.
	leaseTTL time.Duration
	// unheld: hooks and long polls wait on their handlers' goroutines, as
	// without a running heldhttp.Held; otherwise their connections are held.
	unheld bool
}

func newStack(t *testing.T, o stackOptions) *stack {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = time.Minute
	}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("GATEWAY_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s := &stack{slack: fakeslack.New(t, fakeslack.Options{})}
	var threads Sessions
	if o.redis == nil {
		s.asks = pending.NewMemoryStore(pending.Options{Logger: log, LeaseTTL: o.leaseTTL})
		s.grants = grants.NewMemoryStore(grants.Options{})
		threads = sessions.NewMemoryStore(sessions.Options{})
	} else {
		rs, err := pending.NewRedisStore(t.Context(), o.redis, pending.Options{Logger: log, ReplicaAcks: -1, LeaseTTL: o.leaseTTL})
		if err != nil {
			t.Fatal(err)
		}
		s.asks = rs
		s.grants = grants.NewRedisStore(o.redis, grants.Options{})
		threads = sessions.NewRedisStore(o.redis, sessions.Options{})
	}
	t.Cleanup(func() { s.asks.Close(); s.grants.Close() })
	api := slack.New(s.slack.BotToken(), slack.OptionAPIURL(s.slack.APIURL()))
	notifier := slackui.NewNotifier(api, slackui.NotifierConfig{
		ApprovalChannel: approvalChannel, ScopeText: approval.ScopeText(nil),
		PerChannelInterval: time.Millisecond, MaxAttempts: 1, Logger: log,
	})
	core, err := approval.New(approval.Config{
		Asks: s.asks, Grants: s.grants, Notifiers: []approval.Notifier{notifier},
		Timeout: o.timeout, SessionTTL: time.Hour, GrantDurations: o.grantDurations, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := policy.New(policy.Config{Rules: o.rules, Grants: s.grants})
	if err != nil {
		t.Fatal(err)
	}
	var held *heldhttp.Held
	if !o.unheld {
		held = runHeld(t)
	}
	// The Decider the wiring builds: the API's decisions bring the Slack
	// message in step.
	decider := approval.NewDecider(approval.DeciderConfig{
		Asks: s.asks, GrantDurations: o.grantDurations, Messages: []approval.MessageUpdater{notifier}, Logger: log,
	})
	t.Cleanup(decider.Close)
	s.svc, err = New(Config{
		Asks: s.asks, Approver: core, Policy: engine, Decider: decider, Held: held,
		Opener: notifier, Sessions: threads,
		MaxTimeout: o.timeout, Logger: log,
		TeamURL: func(ctx context.Context) (string, error) {
			r, err := api.AuthTestContext(ctx)
			if err != nil {
				return "", err
			}
			return r.URL, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.svc.Close)
	return s
}

// runHeld is a heldhttp.Held running until the test's cleanup, looking
// for gone clients every 20ms (the serve's second would slow the tests
// that leave).
func runHeld(t *testing.T) *heldhttp.Held {
	h := heldhttp.New(20 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testwait.For(t, "the held requests' loop to start", h.Running)
	return h
}

// posted waits until an Ask is pending with its Slack message recorded
// (so after its post) and returns the newest such Ask.
func (s *stack) posted(t *testing.T, ctx context.Context) pending.Ask {
	t.Helper()
	var found pending.Ask
	testwait.For(t, "an open Ask with its message recorded", func() bool {
		asks, err := s.asks.ListPending(ctx, pending.Filter{})
		if err != nil || len(asks) == 0 || asks[len(asks)-1].MessageTS == "" {
			return false
		}
		found = asks[len(asks)-1]
		return true
	})
	return found
}
