package pending

import (
	"context"
)

// AuditLatest returns the newest events of kind ("" for every kind),
// newest first, at most n (n <= 0 returns none). It reads the stream from
// its end (XREVRANGE, a page at a time) and stops as soon as it has n, so
// a page that shows the last few decisions costs the same with a short
// trail and a long one. It only reads, with the same decoding as every
// other reader (streamEvent); checking the chain stays VerifyAudit's.
func (s *RedisStore) AuditLatest(ctx context.Context, kind EventKind, n int) ([]Event, error) {
	if n <= 0 {
		return nil, nil
	}
	page := int64(min(max(4*n, 64), auditPage)) // decided events are about half the trail
	var out []Event
	end := "+"
	for {
		msgs, err := s.client.XRevRangeN(ctx, s.keys.audit, end, "-", page).Result()
		if err != nil {
			return nil, unavailable("audit", err)
		}
		for _, m := range msgs {
			if e := streamEvent(m); kind == "" || e.Kind == kind {
				out = append(out, e)
				if len(out) == n {
					return out, nil
				}
			}
		}
		if int64(len(msgs)) < page {
			return out, nil
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
}

// AuditLatest implements RedisStore.AuditLatest's contract.
func (s *MemoryStore) AuditLatest(ctx context.Context, kind EventKind, n int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for i := len(s.audit) - 1; i >= 0 && len(out) < n; i-- {
		if e := s.audit[i]; kind == "" || e.Kind == kind {
			out = append(out, e)
		}
	}
	return out, nil
}
