package pending

import (
	"strconv"
	"strings"
)

// Announcements on the decided channel.
//
// Without replicas to wait for, the decide script announces an Ask's end
// twice, record first:
//
//	<id> "\n" (<len> ":" <bytes>)…   its record as the script left it (HGETALL's field, value, …)
//	<id>                             the id alone, as every earlier version did
//
// A waiter of this process ends on the first at once. Otherwise the
// listener's wake-up would queue a read of the record for the reader, one
// more round trip to Redis and two goroutine hand-offs, measured at p50
// 0.35 ms of the path from a click to the agent's next model request
// (BenchmarkClickToResume, replica A's execution trace). The record is the
// one the winning script wrote in the same atomic step, so it is what that
// read would return. The id alone is what older replicas understand (a
// record announcement names no id they wait on, so they ignore it) and
// this one's fallback: a record it cannot read is skipped, and the id's
// read follows.
//
// With replicas to wait for (durable.go) the script announces nothing: the
// id alone is published once WAIT confirms, and the reader's read confirms
// again, so a decision a failover could take back never wakes anybody.
//
// Trust: the record comes from the channel, not the key. Whoever may
// PUBLISH on askops' channel could so end a local wait without writing the
// record; askops gives its one Redis user both rights (keys and channel
// share the namespace), so this moves no boundary, but an ACL that grants
// the channel to anything else must not.

// announceLua defines announce(channel, id, record), the end of every
// script that ends an Ask (decideScript, voteScript): the record first, then
// the id alone. channel "" announces nothing (the announcement waits for
// replicas: see decide).
const announceLua = `
local function announce(channel, id, record)
  if channel == '' then return end
  local parts = {id, '\n'}
  for i = 1, #record do parts[#parts + 1] = #record[i] .. ':' .. record[i] end
  redis.call('PUBLISH', channel, table.concat(parts))
  redis.call('PUBLISH', channel, id)
end
`

// settleLua defines the opening both scripts that may end an Ask share
// (decideScript, voteScript): server_now, the server's clock when the
// caller gave none (it judges every deadline: see createScript), and
// already_over, the reply for an Ask that is unknown ({missing}) or has
// ended ({lost, record}), nil while it is pending. Either way an id that is
// not pending leaves the deadline index.
const settleLua = `
local function server_now(now)
  if now ~= '' then return now end
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
local function already_over(key, deadlines, id)
  local status = redis.call('HGET', key, 'status')
  if status == 'pending' then return nil end
  redis.call('ZREM', deadlines, id)
  if not status then return {'missing'} end
  return {'lost', redis.call('HGETALL', key)}
end
`

// announced handles one announcement.
func (s *RedisStore) announced(payload string) {
	id, rec, withRecord := strings.Cut(payload, "\n")
	if !withRecord {
		s.waiters.reread(id)
		return
	}
	if !s.waiters.has(id) {
		return // not waited on here
	}
	h, ok := parseAnnouncedRecord(rec)
	if !ok {
		return // the id alone follows
	}
	a, err := decodeAsk("wait", id, h)
	if err != nil || a.Status == StatusPending {
		return
	}
	s.waiters.deliver(id, &readResult{end: &waitEnd{ask: a}})
}

// parseAnnouncedRecord reads the "<len>:<bytes>" fields and values of a
// record announcement into the map HGETALL would have returned.
func parseAnnouncedRecord(rec string) (map[string]string, bool) {
	var items []string
	for rec != "" {
		n, rest, ok := strings.Cut(rec, ":")
		size, err := strconv.Atoi(n)
		if !ok || err != nil || size < 0 || size > len(rest) {
			return nil, false
		}
		items = append(items, rest[:size])
		rec = rest[size:]
	}
	if len(items) == 0 || len(items)%2 != 0 {
		return nil, false
	}
	h := make(map[string]string, len(items)/2)
	for i := 0; i < len(items); i += 2 {
		h[items[i]] = items[i+1]
	}
	return h, true
}
