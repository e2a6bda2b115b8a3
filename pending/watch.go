package pending

import "context"

// Watch blocks until the Ask with id ends or ctx ends, and returns the Ask
// as it then stands (still pending if ctx ended first). Unlike Wait it
// records nothing: a watcher is an onlooker (an HTTP long poll), not the
// Ask's waiter, so its giving up must not cancel the Ask, and the deadline
// is the waiter's (or the sweep's) to record. It is woken the way Wait is
// (the decision's announcement, never a polling loop). An unknown id gives
// CodeNotFound.
func (s *RedisStore) Watch(ctx context.Context, id string) (Ask, error) {
	if err := checkID("watch", id); err != nil {
		return Ask{}, err
	}
	w := s.waiters.add(id)
	defer s.waiters.remove(w)
	var last *Ask
	for {
		select {
		case r := <-w.reads:
			switch {
			case r.end != nil:
				return r.end.ask, r.end.err
			case r.ask != nil:
				last = r.ask
			case r.unconfirmed != nil:
				// Decided but not yet durable: watch on (the
				// announcement follows once it is), showing nothing of it.
			default:
				return Ask{}, r.err
			}
		case <-ctx.Done():
			if last != nil {
				return *last, nil
			}
			return s.getAfter(ctx, id)
		case <-s.closed:
			return Ask{}, &Error{Store: "pending", Code: CodeUnavailable, Op: "watch", Msg: "store closed"}
		}
	}
}

// getAfter reads the record once more after ctx ended, within FinishTimeout.
func (s *RedisStore) getAfter(ctx context.Context, id string) (Ask, error) {
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.FinishTimeout)
	defer cancel()
	return s.Get(gctx, id)
}

// Watch implements RedisStore.Watch's contract for the in-memory store.
func (s *MemoryStore) Watch(ctx context.Context, id string) (Ask, error) {
	if err := checkID("watch", id); err != nil {
		return Ask{}, err
	}
	s.mu.Lock()
	m, ok := s.asks[id]
	s.mu.Unlock()
	if !ok {
		return Ask{}, notFound("watch", id)
	}
	select {
	case <-m.done:
	case <-ctx.Done():
	case <-s.closed:
	}
	return s.Get(context.WithoutCancel(ctx), id)
}
