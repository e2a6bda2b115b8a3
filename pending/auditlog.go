package pending

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	hide "github.com/askops/askops/redact"
)

// AuditLog is the chained audit trail both stores keep: appending events of
// any kind, checking the chain, and exporting it.
type AuditLog interface {
	// AppendEvent appends e as the next link of the chain and returns it as
	// stored (ID, Seq, Prev set; At set to the store's clock when zero).
	// It is for events that are not part of another change; a script that
	// changes an Ask and records it uses auditAppendLua instead, in the
	// same script.
	AppendEvent(ctx context.Context, e Event) (Event, error)
	// VerifyAudit checks the chain from the oldest retained event to the
	// newest, against the head, and names every gap (AuditReport.Gaps; the
	// first is AuditReport.Break): an event without a link, a deletion,
	// an edit, a missing start no cap explains, events after the head, an
	// anchor it cannot check. Anchors are
	// heads kept outside the store from earlier checks: the event at each
	// one's Seq must still hash to it, which catches a rewrite of the
	// whole chain that the chain alone cannot (see auditchain.go).
	VerifyAudit(ctx context.Context, anchors ...AuditHead) (AuditReport, error)
	// AuditSince returns the retained events, oldest first, of every Ask
	// that has an event at or after since (all its retained events, so an
	// Ask asked before since and decided after it is whole).
	AuditSince(ctx context.Context, since time.Time) ([]Event, error)
}

var (
	_ AuditLog = (*RedisStore)(nil)
	_ AuditLog = (*MemoryStore)(nil)
)

// appendEventScript is AppendEvent's script: the chained append alone.
var appendEventScript = redis.NewScript(serverNowLua + auditAppendLua + `
local id = audit_append(KEYS[1], KEYS[2], ARGV[2], now, ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
return {id, now}
`)

// checkEvent refuses an event that could not be read back as written.
func checkEvent(e Event) error {
	if e.Kind == "" {
		return &Error{Code: CodeInvalid, Op: "append_event", Msg: "an audit event needs a kind"}
	}
	if e.Seq != 0 || e.Prev != "" || e.ID != "" {
		return &Error{Code: CodeInvalid, Op: "append_event", Msg: "the store sets an event's id, seq and prev"}
	}
	return nil
}

// AppendEvent implements AuditLog.
func (s *RedisStore) AppendEvent(ctx context.Context, e Event) (Event, error) {
	if err := checkEvent(e); err != nil {
		return Event{}, err
	}
	// redacted as atRest redacts an Ask's texts
	e.Reason, e.Detail = hide.Secrets(e.Reason), cutDetail(hide.Secrets(e.Detail), maxEventDetail)
	now := s.scriptNow()
	if !e.At.IsZero() {
		now = micros(e.At)
	}
	res, err := appendEventScript.Run(ctx, s.client, []string{s.keys.audit, s.keys.auditHead},
		now, s.opts.AuditMaxLen, string(e.Kind), e.AskID, e.RunID, e.Tool, string(e.Outcome), e.By, e.Reason, e.Detail,
	).StringSlice()
	if err != nil {
		return Event{}, unavailable("append_event", err)
	}
	if len(res) != 2 {
		return Event{}, &Error{Code: CodeInternal, Op: "append_event", Msg: fmt.Sprintf("append script returned %d values", len(res))}
	}
	// Read back what was stored, so the caller holds exactly the link.
	msgs, err := s.client.XRangeN(ctx, s.keys.audit, res[0], res[0], 1).Result()
	if err != nil || len(msgs) != 1 {
		return Event{}, unavailable("append_event", errors.Join(err, errors.New("appended event not found")))
	}
	return streamEvent(msgs[0]), nil
}

// streamEvent decodes one audit stream entry.
func streamEvent(m redis.XMessage) Event {
	v := func(k string) string { s, _ := m.Values[k].(string); return s }
	seq, _ := strconv.ParseInt(v("seq"), 10, 64)
	capped, _ := strconv.ParseInt(v("cap"), 10, 64)
	return Event{
		Kind: EventKind(v("kind")), AskID: v("ask_id"), RunID: v("run_id"), Tool: v("tool"),
		Outcome: Outcome(v("outcome")), By: v("by"), Reason: v("reason"), Detail: v("detail"), At: parseMicros(v("at")),
		ID: m.ID, Seq: seq, Prev: v("prev"), Cap: capped,
	}
}

// auditPage is how many events one XRANGE reads.
const auditPage = 1000

// auditHead reads the chain's head; nil when there is none.
func (s *RedisStore) auditHead(ctx context.Context) (*AuditHead, error) {
	h, err := s.client.HGetAll(ctx, s.keys.auditHead).Result()
	if err != nil {
		return nil, unavailable("audit", err)
	}
	if len(h) == 0 {
		return nil, nil
	}
	seq, _ := strconv.ParseInt(h["seq"], 10, 64)
	return &AuditHead{Seq: seq, Hash: h["hash"], ID: h["id"]}, nil
}

// eachAuditPage calls fn with the events from the stream id start ("-"
// for the oldest, "(id" for after id) up to and including until ("+" for
// all), oldest first, a page at a time. It returns the id of the last
// event read ("" for none).
func (s *RedisStore) eachAuditPage(ctx context.Context, start, until string, fn func([]Event) error) (string, error) {
	last := ""
	for {
		msgs, err := s.client.XRangeN(ctx, s.keys.audit, start, until, auditPage).Result()
		if err != nil {
			return last, unavailable("audit", err)
		}
		events := make([]Event, len(msgs))
		for i, m := range msgs {
			events[i] = streamEvent(m)
		}
		if len(msgs) > 0 {
			last = msgs[len(msgs)-1].ID
		}
		if err := fn(events); err != nil {
			return last, err
		}
		if len(msgs) < auditPage {
			return last, nil
		}
		start = "(" + last
	}
}

// VerifyAudit implements AuditLog. It reads the head, the whole stream,
// and the head again: the events after the head's are checked against the
// head as it is after the walk, so events appended while the check runs
// are links like any other, and events no chained append made (a plain
// XADD, after the head or between links) are gaps. Each event whose Ask
// record is still retained is compared with it too (see
// chainCheck.record).
func (s *RedisStore) VerifyAudit(ctx context.Context, anchors ...AuditHead) (AuditReport, error) {
	// The records first: one decided after this read has its event
	// appended after it too, so the walk below reads it.
	decided, err := s.decidedRecords(ctx)
	if err != nil {
		return AuditReport{}, err
	}
	head, err := s.auditHead(ctx)
	if err != nil {
		return AuditReport{}, err
	}
	c := newChainCheck(anchors, head, s.opts.AuditMaxLen)
	c.records(decided)
	walk := func(start, until string) (string, error) {
		return s.eachAuditPage(ctx, start, until, func(events []Event) error {
			records, err := s.auditRecords(ctx, events)
			if err != nil {
				return err
			}
			for i, e := range events {
				c.add(e, records[i])
			}
			return nil
		})
	}
	last, err := walk("-", "+")
	if err != nil {
		return AuditReport{}, err
	}
	after, err := s.auditHead(ctx)
	if err != nil {
		return AuditReport{}, err
	}
	// Appends between the walk's last page and the second read of the
	// head are read too, so the head's event is in the walk.
	if after != nil && after.ID != "" && (last == "" || streamIDBefore(last, after.ID)) {
		start := "-"
		if last != "" {
			start = "(" + last
		}
		if _, err := walk(start, after.ID); err != nil {
			return AuditReport{}, err
		}
	}
	return c.end(after), nil
}

// recordScan is how many keys one SCAN step asks for.
const recordScan = 1000

// decidedRecords reads every retained Ask record that says its Ask was
// decided, for VerifyAudit to find those whose event is gone. Every askops
// key carries one hash tag, so on a Cluster they all live on the master of
// that slot, which is the one node scanned.
func (s *RedisStore) decidedRecords(ctx context.Context) ([]decidedRecord, error) {
	var node redis.Cmdable = s.client
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		n, err := cc.MasterForKey(ctx, s.keys.audit)
		if err != nil {
			return nil, unavailable("audit", err)
		}
		node = n
	}
	prefix := s.keys.ask("")
	match := globEscape(prefix) + "*"
	fields := []string{fieldStatus, fieldDecidedBy, fieldDecidedAt}
	var out []decidedRecord
	var cursor uint64
	for {
		keys, next, err := node.ScanType(ctx, cursor, match, recordScan, "hash").Result()
		if err != nil {
			return nil, unavailable("audit", err)
		}
		cmds := make([]*redis.SliceCmd, len(keys))
		if len(keys) > 0 {
			_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, k := range keys {
					cmds[i] = p.HMGet(ctx, k, fields...)
				}
				return nil
			})
			if err != nil {
				return nil, unavailable("audit", err)
			}
		}
		for i, c := range cmds {
			v := c.Val()
			if len(v) != len(fields) {
				continue
			}
			status, _ := v[0].(string)
			if status == "" || status == string(StatusPending) || status == statusGated {
				continue // gone, or not decided
			}
			by, _ := v[1].(string)
			at, _ := v[2].(string)
			out = append(out, decidedRecord{AskID: strings.TrimPrefix(keys[i], prefix), Outcome: status, By: by, At: parseMicros(at)})
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// globEscape escapes the characters SCAN's MATCH reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// streamIDBefore reports whether the stream id a (ms-seq) comes before b.
// An id that does not parse is taken to come first, so the walk reads on.
func streamIDBefore(a, b string) bool {
	parse := func(id string) (ms, seq uint64, ok bool) {
		l, r, found := strings.Cut(id, "-")
		ms, err1 := strconv.ParseUint(l, 10, 64)
		seq, err2 := strconv.ParseUint(r, 10, 64)
		return ms, seq, found && err1 == nil && err2 == nil
	}
	ams, aseq, aok := parse(a)
	bms, bseq, bok := parse(b)
	if !aok || !bok {
		return true
	}
	return ams < bms || ams == bms && aseq < bseq
}

// auditRecords reads, in one round trip, the fields of each event's Ask
// record that its events state (nil where the record is gone).
func (s *RedisStore) auditRecords(ctx context.Context, events []Event) ([]map[string]string, error) {
	fields := []string{fieldStatus, fieldRunID, fieldTool, fieldDecidedBy, fieldDecidedAt, fieldDecisionReason}
	cmds := make([]*redis.SliceCmd, len(events))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, e := range events {
			if e.AskID != "" && (e.Kind == EventAsked || e.Kind == EventDecided) {
				cmds[i] = p.HMGet(ctx, s.keys.ask(e.AskID), fields...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, unavailable("audit", err)
	}
	out := make([]map[string]string, len(events))
	for i, c := range cmds {
		if c == nil {
			continue
		}
		vals := c.Val()
		if len(vals) != len(fields) || vals[0] == nil { // no status: the record is gone
			continue
		}
		m := make(map[string]string, len(fields))
		for j, f := range fields {
			m[f], _ = vals[j].(string)
		}
		out[i] = m
	}
	return out, nil
}

// AuditSince implements AuditLog.
func (s *RedisStore) AuditSince(ctx context.Context, since time.Time) ([]Event, error) {
	var all []Event
	_, err := s.eachAuditPage(ctx, "-", "+", func(events []Event) error {
		all = append(all, events...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return eventsSince(all, since), nil
}

// eventsSince keeps the events of every Ask that has one at or after since.
func eventsSince(all []Event, since time.Time) []Event {
	recent := map[string]bool{}
	for _, e := range all {
		if !e.At.Before(since) {
			recent[e.AskID] = true
		}
	}
	var out []Event
	for _, e := range all {
		if recent[e.AskID] {
			out = append(out, e)
		}
	}
	return out
}

// AppendEvent implements AuditLog.
func (s *MemoryStore) AppendEvent(ctx context.Context, e Event) (Event, error) {
	if err := checkEvent(e); err != nil {
		return Event{}, err
	}
	if e.At.IsZero() {
		e.At = s.opts.now()
	}
	e.At = e.At.UTC().Truncate(time.Microsecond) // as Redis keeps it
	// redacted as atRest redacts an Ask's texts
	e.Reason, e.Detail = hide.Secrets(e.Reason), cutDetail(hide.Secrets(e.Detail), maxEventDetail)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendAudit(e), nil
}

// VerifyAudit implements AuditLog. The memory store is its own witness,
// so this mostly proves the chain code; it also compares retained records.
func (s *MemoryStore) VerifyAudit(ctx context.Context, anchors ...AuditHead) (AuditReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var head *AuditHead
	if s.chain.head.Seq > 0 {
		h := s.chain.head
		head = &h
	}
	c := newChainCheck(anchors, head, s.opts.AuditMaxLen)
	var decided []decidedRecord
	for id, m := range s.asks {
		if a := m.ask; a.Status != StatusPending && a.Status != "" {
			decided = append(decided, decidedRecord{AskID: id, Outcome: string(a.Status), By: a.DecidedBy, At: a.DecidedAt})
		}
	}
	c.records(decided)
	for _, e := range s.audit {
		var rec map[string]string
		if m, ok := s.asks[e.AskID]; ok && (e.Kind == EventAsked || e.Kind == EventDecided) {
			a := m.ask
			rec = map[string]string{fieldStatus: string(a.Status), fieldRunID: a.RunID, fieldTool: a.Tool,
				fieldDecidedBy: a.DecidedBy, fieldDecisionReason: a.DecisionReason}
			if !a.DecidedAt.IsZero() {
				rec[fieldDecidedAt] = micros(a.DecidedAt)
			}
		}
		c.add(e, rec)
	}
	return c.end(head), nil
}

// AuditSince implements AuditLog.
func (s *MemoryStore) AuditSince(ctx context.Context, since time.Time) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return eventsSince(s.audit, since), nil
}
