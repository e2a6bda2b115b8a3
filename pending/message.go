package pending

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// A poster learns where an Ask's message is only once the message exists,
// and by then a person may already have clicked it: a fast click on another
// replica, a console or API decision. Such a decider read a record without
// the message, so it could neither update that message nor show where it
// is. SaveMessage tells the poster so, in the same step that saves the
// address: the poster then brings the message in step itself. Whether the
// Ask had ended is read with the save (one script, one lock), so no
// decision can fall between the two and be missed by both sides.

// SaveMessage saves where the Ask's message was posted, like SetMessage,
// and reports whether the Ask had already ended when it was saved: then its
// decider may not have known of the message, and whoever saved it should
// update it. The record keeps the address either way (a decided Ask still
// shows where it was asked).
func (s *RedisStore) SaveMessage(ctx context.Context, id, channel, ts string) (ended bool, err error) {
	if err := checkID("set_message", id); err != nil {
		return false, err
	}
	n, err := saveMessageScript.Run(ctx, s.client, []string{s.keys.ask(id)}, channel, ts, string(StatusPending), statusGated).Int()
	if err != nil {
		return false, unavailable("set_message", err)
	}
	if n == 0 {
		return false, notFound("set_message", id)
	}
	return n == 2, nil
}

// saveMessageScript saves the message's location only on an existing
// record (a late save must not resurrect a garbage-collected Ask) and
// answers 1 if the Ask was pending, 2 if it had ended.
var saveMessageScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'channel', ARGV[1], 'message_ts', ARGV[2])
local status = redis.call('HGET', KEYS[1], 'status')
if status == ARGV[3] or status == ARGV[4] then return 1 end
return 2
`)

// SaveMessage implements RedisStore.SaveMessage's contract.
func (s *MemoryStore) SaveMessage(ctx context.Context, id, channel, ts string) (ended bool, err error) {
	if err := checkID("set_message", id); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	if !ok {
		return false, notFound("set_message", id)
	}
	m.ask.Channel, m.ask.MessageTS = channel, ts
	return m.ask.Status != StatusPending, nil
}
