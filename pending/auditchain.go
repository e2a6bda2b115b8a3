package pending

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The audit trail is a hash chain: every event carries its sequence number
// (Seq, 1, 2, 3… over the store's whole life) and the digest of the event
// before it (Prev), and a head (in Redis askops:{askops}:audit:head, a hash
// of seq, hash and the stream id) holds the digest of the newest event.
// Editing an event changes its digest, which no longer matches the Prev its
// successor (or the head) recorded; deleting one leaves a gap in Seq; an
// event added by hand (a plain XADD) has no Seq, or comes after the event
// the head names.
//
// The stream is capped (XADD MAXLEN ~), so its oldest events go, and every
// event records the cap it was appended under (Cap, inside its digest).
// MAXLEN ~ never trims the stream below its cap, so verify can tell a trim
// from a deletion: a missing start is a trim only if some retained event
// was appended when the events from the oldest retained one up to it were
// at least its cap (chainCheck.endPrefix). Someone who deletes the oldest
// events (XTRIM MINID, XDEL) of a stream shorter than its cap is named;
// one who deletes those the next trim would take anyway is not.
//
// The chain is extended where the event is appended, inside the same Lua
// script as the change it records (auditAppendLua), so two replicas
// appending at once cannot fork it: Redis runs one script at a time, and
// each reads the head the previous one wrote.
//
// Why SHA-1 (redis.sha1hex) and no key. It is the only digest Redis' Lua
// offers, and computing the chain anywhere but in the script would let two
// replicas fork it. Its known weakness is collisions (two documents made
// together to share a digest); forging a link needs a second preimage for
// a digest already in the chain, which is still out of reach. A keyed MAC
// (HMAC) would need its key in every script call's arguments, where
// MONITOR, SLOWLOG and the replication stream show it to exactly the
// people it should guard against, and `bot audit verify` would need it
// too. So the chain is unkeyed, and what it proves is bounded: anyone who
// can write to Redis can rewrite the trail from some event onwards and
// recompute every digest and the head. It catches edits and deletions by
// whoever does not (a hand-edited record, an XDEL, a restored old copy);
// to catch a full rewrite, keep the head that `bot audit verify` prints
// somewhere outside Redis and compare it later (a rewrite changes the
// digest recorded at that Seq).

// Event kinds beyond asked/decided are added by the features that need them
// (votes, reminders, escalations, refusals); they all go through the same
// chained append (RedisStore.AppendEvent, or auditAppendLua in a script).

// auditCanonVersion opens every canonical encoding of an event that
// records no cap (written by a release before the cap was recorded), so a
// future change of the encoding cannot be confused with this one.
// auditCanonVersionCap opens the encoding of an event that records the cap
// it was appended under; it is the first encoding plus the cap, last.
// auditAppendLua spells both out too.
const (
	auditCanonVersion    = "askops-audit/1\n"
	auditCanonVersionCap = "askops-audit/2\n"
)

// canonicalEvent is the byte string an event's digest is taken over. The
// fields come in a fixed order, each written as its length in bytes, a
// colon, the bytes and a newline (no value can run into the next), with the
// time as UTC RFC 3339 with nanoseconds (trailing zeros dropped, as Go's
// time.RFC3339Nano writes it), and the cap last when the event records one
// (version 2). auditAppendLua builds the same string.
//
// The cap is inside the digest because verify trusts it to explain a
// missing start of the trail (chainCheck.endPrefix): outside it, anyone
// could rebuild the stream with the same ids, digests and head and a cap
// of 1 in every event, and every deletion of the oldest events would pass
// as a trim.
func canonicalEvent(e Event) string {
	var b strings.Builder
	version := auditCanonVersion
	if e.Cap > 0 {
		version = auditCanonVersionCap
	}
	b.WriteString(version)
	for _, v := range []string{
		strconv.FormatInt(e.Seq, 10), e.Prev, string(e.Kind), e.AskID, e.RunID, e.Tool,
		string(e.Outcome), e.By, e.Reason, e.Detail, e.At.UTC().Format(time.RFC3339Nano),
	} {
		writeCanonField(&b, v)
	}
	if e.Cap > 0 {
		writeCanonField(&b, strconv.FormatInt(e.Cap, 10))
	}
	return b.String()
}

func writeCanonField(b *strings.Builder, v string) {
	b.WriteString(strconv.Itoa(len(v)))
	b.WriteByte(':')
	b.WriteString(v)
	b.WriteByte('\n')
}

// EventDigest is the hex SHA-1 of e's canonical encoding: what the next
// event records as its Prev.
func EventDigest(e Event) string {
	sum := sha1.Sum([]byte(canonicalEvent(e)))
	return hex.EncodeToString(sum[:])
}

// auditAppendLua defines audit_append, the one chained append every script
// that writes the audit stream uses (prepend it to the script). It reads the
// head, stamps the event with the next Seq and the head's digest as Prev,
// XADDs it (trimming with MAXLEN ~) with the cap it was trimmed under in
// its field cap (verify needs it to tell a trim from a deletion), and moves
// the head to it. at is µs since the epoch as a string. Returns the stream
// id.
//
// audit_rfc3339 writes µs as Go's time.RFC3339Nano does in UTC; the civil
// date is Howard Hinnant's days-to-civil algorithm. Lua numbers are doubles,
// exact for µs since the epoch (< 2^53).
const auditAppendLua = `
local function audit_rfc3339(us)
  local n = tonumber(us) or 0
  local secs = math.floor(n / 1000000)
  local frac = n - secs * 1000000
  local days = math.floor(secs / 86400)
  local sod = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  local s = string.format('%04d-%02d-%02dT%02d:%02d:%02d', y, m, d,
    math.floor(sod / 3600), math.floor((sod % 3600) / 60), sod % 60)
  if frac > 0 then
    s = s .. (string.gsub('.' .. string.format('%06d', frac), '0+$', ''))
  end
  return s .. 'Z'
end
local function audit_field(v)
  return #v .. ':' .. v .. '\n'
end
local function audit_append(audit, head, maxlen, at, kind, ask_id, run_id, tool, outcome, by, reason, detail)
  local h = redis.call('HMGET', head, 'seq', 'hash')
  local seq = string.format('%.0f', (tonumber(h[1]) or 0) + 1)
  local prev = h[2] or ''
  local cap = string.format('%.0f', tonumber(maxlen))
  local canon = 'askops-audit/2\n' .. audit_field(seq) .. audit_field(prev) ..
    audit_field(kind) .. audit_field(ask_id) .. audit_field(run_id) .. audit_field(tool) ..
    audit_field(outcome) .. audit_field(by) .. audit_field(reason) .. audit_field(detail) ..
    audit_field(audit_rfc3339(at)) .. audit_field(cap)
  local id = redis.call('XADD', audit, 'MAXLEN', '~', cap, '*',
    'seq', seq, 'prev', prev, 'kind', kind, 'ask_id', ask_id, 'run_id', run_id, 'tool', tool,
    'outcome', outcome, 'by', by, 'reason', reason, 'detail', detail, 'at', at, 'cap', cap)
  redis.call('HSET', head, 'seq', seq, 'hash', redis.sha1hex(canon), 'id', id)
  return id
end
`

// maxDetail bounds an event's Detail (for an asked event, the call's
// summary): the trail says what was asked without holding every command
// twice (the record keeps the whole of it for its retention). 64 bytes
// because the chain's own fields already cost ~115 bytes an Ask, and a
// pending Ask with a 1 KB command must stay within 2 KB of Redis memory
// (TestRedisBytesPerPendingAsk, random command: 1994 bytes at 80 before
// the record had the starter's own field, which costs a hash entry; with
// it 2045 at 80, about 2020 at 64; the cap each event records since adds
// about 2 bytes an event, 2019 unchanged).
const maxDetail = 64

// maxEventDetail bounds the Detail of an event appended with AppendEvent
// (a reminder's mentions, an escalation's targets): these are few per Ask.
const maxEventDetail = 256

// cutDetail cuts s to max bytes on a rune boundary, marking the cut.
func cutDetail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// AuditHead is the newest event of the chain as the head records it.
type AuditHead struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	ID   string `json:"id,omitempty"` // the stream id of the newest event (Redis)
}

// chainer extends the chain in Go, for the memory store (the Redis store
// does it in Lua). The caller serialises calls.
type chainer struct {
	head AuditHead
}

// link stamps e as the next event of the chain, appended under the cap
// maxLen, and moves the head to it.
func (c *chainer) link(e Event, maxLen int64) Event {
	e.Seq = c.head.Seq + 1
	e.Prev = c.head.Hash
	e.Cap = maxLen
	if e.ID == "" {
		e.ID = strconv.FormatInt(e.Seq, 10)
	}
	c.head = AuditHead{Seq: e.Seq, Hash: EventDigest(e), ID: e.ID}
	return e
}
