package slackui

import (
	"context"
	"time"
)

// HomeViewerStore keeps who has the Home open where every replica sees it
// (sessions.HomeViewers; both stores satisfy it). The app_home_opened event
// reaches one replica; with the viewers only in its memory, its death left
// their Homes stale until reopened. With the store, every replica polls
// for every viewer, and a claim on the Home's digest keeps N replicas from
// publishing one change N times.
type HomeViewerStore interface {
	AddHomeViewer(ctx context.Context, user string, until time.Time) error
	HomeViewers(ctx context.Context) ([]string, error)
	ClaimHomeView(ctx context.Context, user, digest string) (bool, error)
	ReleaseHomeView(ctx context.Context, user, digest string) error
}

// storeTimeout bounds each viewer-store call of the Home.
const storeTimeout = 2 * time.Second

// rememberViewer records user in the store (Opened), so every replica
// keeps their Home current; failing that, this replica still does.
func (h *Home) rememberViewer(user string) {
	if h.cfg.Viewers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := h.cfg.Viewers.AddHomeViewer(ctx, user, h.cfg.Now().Add(h.cfg.ViewerTTL)); err != nil {
		h.log.Warn("home: could not record the viewer for the other replicas", "user", user, "err", err)
	}
}

// syncViewers makes this replica's viewers those the store lists (plus
// any showing a click's notice); on a store error it keeps its own.
func (h *Home) syncViewers(ctx context.Context) {
	if h.cfg.Viewers == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	users, err := h.cfg.Viewers.HomeViewers(sctx)
	cancel()
	if err != nil {
		h.log.Warn("home: could not list the viewers; keeping this replica's", "err", err)
		return
	}
	now := h.cfg.Now()
	listed := make(map[string]bool, len(users))
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range users {
		listed[u] = true
		if h.viewers[u] == nil && isSlackUserID(u) {
			h.viewers[u] = &homeViewer{openedAt: now, dirty: true}
		}
	}
	for u, v := range h.viewers {
		if !listed[u] && v.notice == "" {
			delete(h.viewers, u)
		}
	}
}

// claimView reports whether this replica should publish digest to user:
// not when another replica already did. A store error publishes (a
// duplicate publish is harmless; a missing one is a stale Home).
func (h *Home) claimView(ctx context.Context, user, digest string) bool {
	if h.cfg.Viewers == nil {
		return true
	}
	ok, err := h.cfg.Viewers.ClaimHomeView(ctx, user, digest)
	if err != nil {
		h.log.Warn("home: could not claim the view; publishing", "user", user, "err", err)
		return true
	}
	return ok
}

// releaseView lets the next refresh of any replica publish digest again
// after this one's publish failed.
func (h *Home) releaseView(ctx context.Context, user, digest string) {
	if h.cfg.Viewers == nil {
		return
	}
	if err := h.cfg.Viewers.ReleaseHomeView(ctx, user, digest); err != nil {
		h.log.Warn("home: could not release the view", "user", user, "err", err)
	}
}
