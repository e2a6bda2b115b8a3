package pending

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The follow-up schedule follows the rule decisions follow (durable.go):
// with replicas to wait for, a step scheduled, a copy recorded or a step
// finished is confirmed only once WAIT says the replicas hold it. Else a
// failover right after Post could promote a replica that never saw the
// Ask's schedule (its reminder and escalations silently never happen), or
// one that never saw a DM copy (a click on that DM refused as not the
// Ask's) or a finished step (carried out again: the at-least-once side,
// which is the lesser harm). Claims are not waited for: a lost claim only
// makes the step due again, which the lease already allows.

// stepWrite runs one of the schedule's scripts, through durable when
// replicas must hold it.
func (s *RedisStore) stepWrite(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if !s.replicas.on() {
		return script.Run(ctx, s.client, keys, args...)
	}
	c, err := s.durableCmd(ctx, func(p redis.Scripter) *redis.Cmd { return script.Eval(ctx, p, keys, args...) })
	if err != nil {
		c = redis.NewCmd(ctx)
		c.SetErr(err)
	}
	return c
}
