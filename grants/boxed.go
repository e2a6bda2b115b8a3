package grants

import (
	"iter"
	"time"
)

// Time-boxed grants ("Approve for 15 min"): a session grant with its own
// end (Grant.Until) before the session's. The session's expiry is shared
// by all its grants and pushed by every Record and Touch, so a short grant
// cannot be expressed by it without cutting its neighbours short; instead
// the grant carries its end, and every read (Match, List) drops it once
// that end has passed, as if revoked. The stored record then lingers,
// unused, until its session expires or it is revoked.

// boxIn gives a new session grant its own end, life after its creation,
// when that comes before the session's.
func (g *Grant) boxIn(op string, life time.Duration) error {
	switch {
	case life < 0:
		return invalid(op, "a grant's life must be positive, got %s", life)
	case life == 0:
		return nil
	}
	until := g.CreatedAt.Add(life.Truncate(time.Millisecond))
	if until.Before(g.ExpiresAt) {
		g.Until, g.ExpiresAt = until, until
	}
	return nil
}

// clamp makes g's ExpiresAt (its session's) the earlier of that and its
// own end, and reports whether g is still live at now.
func (g *Grant) clamp(now time.Time) bool {
	if g.Until.IsZero() {
		return true
	}
	if g.Until.Before(g.ExpiresAt) {
		g.ExpiresAt = g.Until
	}
	return now.Before(g.Until)
}

// liveAt is a live session's grants (the session expires at expires) as
// they stand at now: time-boxed grants past their end left out.
func liveAt(gs iter.Seq[Grant], expires, now time.Time) iter.Seq[Grant] {
	return func(yield func(Grant) bool) {
		for g := range gs {
			g.ExpiresAt = expires
			if g.clamp(now) && !yield(g) {
				return
			}
		}
	}
}
