package pending

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Announcements on the decided channel.
//
// Without replicas to wait for, the decide script announces an Ask's end
// twice, record first:
//
//	<id> "\n" "s1:" <signature> "\n" (<len> ":" <bytes>)…   its record as the script left it (HGETALL's field, value, …), signed
//	<id>                                                    the id alone, as every earlier version did
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
// With replicas to wait for (durable.go) the script announces nothing:
// once WAIT confirms, the decider publishes the same two announcements
// itself (announce: the record it got back, signed in Go, then the id
// alone), so a decision a failover could take back never wakes anybody. A
// waiter ends on that record without confirming it again: its own
// confirmation would run on whatever master its connections reach, and in
// a failover that can be the old master, left without its replicas, for
// the seconds until its client hears of the new one (such waiters woke
// 1.3-2.3 s after their decision was confirmed). The id alone still makes
// a waiter read and confirm (the record's announcement may not reach it).
//
// Trust: the record comes from the channel, not the key, so it is signed.
// Whoever may PUBLISH on askops' channel could otherwise end a local wait
// with a record nobody wrote. The script signs the record announcement
// with HMAC-SHA1 (the hash Redis' Lua offers) under a key every replica
// derives from the config (Options.AnnounceKey), passed with the channel
// in the script's arguments and never stored; the waiter ends on it only
// when the signature holds, and re-reads the record for anything else. A
// record is announced only once it is as durable as a decision must be
// (by the script when no replica is waited for, else once WAIT confirms):
// a signed record is durable.
// The id alone never ends a wait by itself: it only makes the waiter read
// the key. Without a key no record is announced.
//
// The signature is the hex HMAC-SHA1 of <id> "\n" <record> under the key.
// Replicas from before the signature read "s1:…" as a field length, fail,
// and take the id alone that follows, as they always did.

// announceLua defines announce(channel, id, record), the end of every
// script that ends an Ask (decideScript, voteScript): the record first, then
// the id alone. channel "" announces nothing (the announcement waits for
// replicas: see decide).
//
// channel is "<channel>\0<pads>" (announceOn): pads are the HMAC's inner
// and outer padded keys, 64 bytes each, worked out once in Go. Built in Lua
// on each decide (128 string.char and bxor calls, two concatenations) they
// were most of the 50 µs that signing added to a decision's wake-up
// (BenchmarkWakeLatency p50 200 -> 260 µs). Without pads only the id is
// announced.
const announceLua = `
local function announce_hexbin(h)
  return (string.gsub(h, '..', function(c) return string.char(tonumber(c, 16)) end))
end
local function announce(channel, id, record)
  if channel == '' then return end
  local pads = ''
  local cut = string.find(channel, '\0', 1, true)
  if cut then
    pads = string.sub(channel, cut + 1)
    channel = string.sub(channel, 1, cut - 1)
  end
  if #pads == 128 then
    local parts = {}
    for i = 1, #record do parts[#parts + 1] = #record[i] .. ':' .. record[i] end
    local body = table.concat(parts)
    local inner = redis.sha1hex(string.sub(pads, 1, 64) .. id .. '\n' .. body)
    local sig = redis.sha1hex(string.sub(pads, 65) .. announce_hexbin(inner))
    redis.call('PUBLISH', channel, id .. '\n' .. 's1:' .. sig .. '\n' .. body)
  end
  redis.call('PUBLISH', channel, id)
end
`

// AnnounceKeyFrom derives the announcement key from a secret every askops
// process of one deployment shares (the Slack bot token); empty in, nil
// out. 32 bytes, used by the script as their hex text (64 bytes, one
// HMAC-SHA1 block).
func AnnounceKeyFrom(secret string) []byte {
	if secret == "" {
		return nil
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte("askops pending: sign decision announcements, v1"))
	return h.Sum(nil)
}

// announceOn is the channel argument of the scripts that end an Ask: the
// decided channel and, when there is a key, the padded keys they sign with
// (announcePads). Worked out once, when the store opens.
func announceOn(channel string, key []byte) string {
	if len(key) == 0 {
		return channel
	}
	return channel + "\x00" + announcePads(key)
}

// announcePads is HMAC-SHA1 (RFC 2104) under key's hex text, as far as
// it depends on the key alone: the key XOR ipad, then the key XOR opad,
// 64 bytes each (AnnounceKeyFrom's key is one block exactly).
func announcePads(key []byte) string {
	k := []byte(hex.EncodeToString(key))
	if len(k) > 64 {
		sum := sha1.Sum(k)
		k = sum[:]
	}
	pads := make([]byte, 128)
	for i := range 64 {
		var b byte
		if i < len(k) {
			b = k[i]
		}
		pads[i], pads[64+i] = b^0x36, b^0x5c
	}
	return string(pads)
}

// signedRecord returns the record of a record announcement whose
// signature holds under the store's key.
func (s *RedisStore) signedRecord(id, rest string) (string, bool) {
	if s.announceHexKey == nil {
		return "", false
	}
	sig, body, ok := strings.Cut(strings.TrimPrefix(rest, "s1:"), "\n")
	if !ok || !strings.HasPrefix(rest, "s1:") {
		return "", false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return "", false
	}
	if !hmac.Equal(got, s.signature(id, body)) {
		return "", false
	}
	return body, true
}

// signature is the record announcement's HMAC-SHA1 of <id> "\n" <body>
// under the store's key (what announceLua computes with the pads).
func (s *RedisStore) signature(id, body string) []byte {
	m := hmac.New(sha1.New, s.announceHexKey)
	m.Write([]byte(id + "\n" + body))
	return m.Sum(nil)
}

// recordAnnouncement is the signed record announcement of id's record h,
// as announceLua publishes it; "" without a key.
func (s *RedisStore) recordAnnouncement(id string, h map[string]string) string {
	if s.announceHexKey == nil || len(h) == 0 {
		return ""
	}
	var body strings.Builder
	for k, v := range h {
		body.WriteString(strconv.Itoa(len(k)) + ":" + k + strconv.Itoa(len(v)) + ":" + v)
	}
	return id + "\n" + "s1:" + hex.EncodeToString(s.signature(id, body.String())) + "\n" + body.String()
}

// settleLua defines the opening both scripts that may end an Ask share
// (decideScript, voteScript): server_now, the server's clock when the
// caller gave none (it judges every deadline: see createScript), and
// already_over, the reply for an Ask that is unknown ({missing}) or has
// ended ({lost, record}), nil while it is pending. Either way an id that is
// not pending leaves the deadline index.
const settleLua = openLua + `
local function server_now(now)
  if now ~= '' then return now end
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
local function already_over(key, deadlines, id)
  local status = redis.call('HGET', key, 'status')
  if is_open(status) then return nil end
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
	body, signed := s.signedRecord(id, rec)
	if !signed {
		return // unsigned or forged: nothing ends on it (the id alone makes a read)
	}
	h, ok := parseAnnouncedRecord(body)
	if !ok {
		return // the id alone follows
	}
	a, err := s.requests.decodeAsk("wait", id, h)
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
