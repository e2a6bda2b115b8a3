package slackui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// ErrNoApprovers refuses a configuration where nobody could ever approve.
var ErrNoApprovers = errors.New("no approvers configured; set approvals.approvers or approvals.anyone_in_channel: true")

// UserGroupAPI lists a Slack user group's members; *slack.Client satisfies it.
type UserGroupAPI interface {
	GetUserGroupMembersContext(ctx context.Context, userGroup string, options ...slack.GetUserGroupMembersOption) ([]string, error)
}

// ApproversConfig says who may decide Asks.
type ApproversConfig struct {
	Users  []string // Slack user ids (U…/W…)
	Groups []string // Slack user group ids (S…), resolved through API
	// AnyoneInChannel lets anybody who can see the message decide. It must be
	// said explicitly; an empty approver list is refused otherwise.
	AnyoneInChannel bool
	API             UserGroupAPI
	// RefreshEvery bounds how stale a group's member list may be; default 5m.
	RefreshEvery time.Duration
	// KeepStaleFor is how long a member list is still trusted after refreshes
	// start failing; default 30m. Past it, group members are refused.
	KeepStaleFor time.Duration
	// LookupTimeout bounds one usergroups.users.list call, which runs while a
	// click waits for its acknowledgement; default 1.5s.
	LookupTimeout time.Duration
	Logger        *slog.Logger
	Now           func() time.Time
}

// Approvers answers whether a Slack user may decide Asks.
type Approvers struct {
	cfg   ApproversConfig
	users map[string]bool

	groups map[string]*groupMembers
}

// groupMembers caches one user group's members. Its mutex is held across a
// refresh so concurrent clicks make one Slack call, not one each.
type groupMembers struct {
	mu          sync.Mutex
	members     map[string]bool
	fetchedAt   time.Time // last successful refresh
	failedAt    time.Time // last failed refresh, to avoid hammering Slack
	lastFailure error
}

// NewApprovers checks cfg and returns the approver set.
func NewApprovers(cfg ApproversConfig) (*Approvers, error) {
	if len(cfg.Users) == 0 && len(cfg.Groups) == 0 && !cfg.AnyoneInChannel {
		return nil, ErrNoApprovers
	}
	if len(cfg.Groups) > 0 && cfg.API == nil {
		return nil, errors.New("slackui: approver user groups configured without a Slack client")
	}
	if cfg.RefreshEvery <= 0 {
		cfg.RefreshEvery = 5 * time.Minute
	}
	if cfg.KeepStaleFor <= 0 {
		cfg.KeepStaleFor = 30 * time.Minute
	}
	if cfg.LookupTimeout <= 0 {
		cfg.LookupTimeout = 1500 * time.Millisecond
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Approvers{cfg: cfg, users: map[string]bool{}, groups: map[string]*groupMembers{}}
	for _, u := range cfg.Users {
		if u != "" {
			a.users[u] = true
		}
	}
	for _, g := range cfg.Groups {
		if g != "" {
			a.groups[g] = &groupMembers{}
		}
	}
	return a, nil
}

// MayDecide reports whether userID may decide Asks. Any doubt is a no: a
// group whose members cannot be learnt (and are not known from a recent
// enough refresh) does not admit anybody, and the error says why.
func (a *Approvers) MayDecide(ctx context.Context, userID string) (bool, error) {
	if userID == "" {
		return false, nil
	}
	if a.cfg.AnyoneInChannel || a.users[userID] {
		return true, nil
	}
	var errs []error
	for _, g := range slices.Sorted(maps.Keys(a.groups)) {
		ok, err := a.inGroup(ctx, g, a.groups[g], userID)
		if ok {
			return true, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return false, errors.Join(errs...)
}

func (a *Approvers) inGroup(ctx context.Context, id string, g *groupMembers, userID string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := a.cfg.Now()
	fresh := !g.fetchedAt.IsZero() && now.Sub(g.fetchedAt) < a.cfg.RefreshEvery
	// After a failure, wait a little before asking Slack again; meanwhile the
	// last known list (if still trusted) answers.
	recentlyFailed := !g.failedAt.IsZero() && now.Sub(g.failedAt) < min(a.cfg.RefreshEvery, 10*time.Second)
	if !fresh && !recentlyFailed {
		lctx, cancel := context.WithTimeout(ctx, a.cfg.LookupTimeout)
		members, err := a.cfg.API.GetUserGroupMembersContext(lctx, id)
		cancel()
		if err != nil {
			g.failedAt, g.lastFailure = now, err
			a.cfg.Logger.Warn("could not refresh approver user group", "group", id, "err", err)
		} else {
			g.members = make(map[string]bool, len(members))
			for _, m := range members {
				g.members[m] = true
			}
			g.fetchedAt, g.failedAt, g.lastFailure = now, time.Time{}, nil
		}
	}
	trusted := !g.fetchedAt.IsZero() && now.Sub(g.fetchedAt) < a.cfg.RefreshEvery+a.cfg.KeepStaleFor
	if !trusted {
		return false, fmt.Errorf("slackui: members of user group %s unknown: %w", id, cmpErr(g.lastFailure))
	}
	return g.members[userID], nil
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("never fetched")
	}
	return err
}
