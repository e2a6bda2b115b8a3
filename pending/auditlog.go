package pending

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// head and reports the first break (AuditReport.Break). Anchors are
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
	return Event{
		Kind: EventKind(v("kind")), AskID: v("ask_id"), RunID: v("run_id"), Tool: v("tool"),
		Outcome: Outcome(v("outcome")), By: v("by"), Reason: v("reason"), Detail: v("detail"), At: parseMicros(v("at")),
		ID: m.ID, Seq: seq, Prev: v("prev"),
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

// eachAuditPage calls fn with the events up to and including the stream id
// until ("+" for all), oldest first, a page at a time.
func (s *RedisStore) eachAuditPage(ctx context.Context, until string, fn func([]Event) error) error {
	start := "-"
	for {
		msgs, err := s.client.XRangeN(ctx, s.keys.audit, start, until, auditPage).Result()
		if err != nil {
			return unavailable("audit", err)
		}
		events := make([]Event, len(msgs))
		for i, m := range msgs {
			events[i] = streamEvent(m)
		}
		if err := fn(events); err != nil {
			return err
		}
		if len(msgs) < auditPage {
			return nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// VerifyAudit implements AuditLog. The head is read first and the stream
// up to it, so events appended while the check runs are left for the next
// one instead of looking like a break. Each event whose Ask record is
// still retained is compared with it too (see chainCheck.record).
func (s *RedisStore) VerifyAudit(ctx context.Context, anchors ...AuditHead) (AuditReport, error) {
	head, err := s.auditHead(ctx)
	if err != nil {
		return AuditReport{}, err
	}
	until := "+"
	if head != nil && head.ID != "" {
		until = head.ID
	}
	c := chainCheck{anchors: anchorMap(anchors)}
	err = s.eachAuditPage(ctx, until, func(events []Event) error {
		records, err := s.auditRecords(ctx, events)
		if err != nil {
			return err
		}
		for i, e := range events {
			if !c.add(e, records[i]) {
				return errStop
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return AuditReport{}, err
	}
	return c.end(head), nil
}

// errStop ends a page walk early.
var errStop = errors.New("stop")

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
	err := s.eachAuditPage(ctx, "+", func(events []Event) error {
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
	c := chainCheck{anchors: anchorMap(anchors)}
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
		if !c.add(e, rec) {
			break
		}
	}
	var head *AuditHead
	if s.chain.head.Seq > 0 {
		h := s.chain.head
		head = &h
	}
	return c.end(head), nil
}

// AuditSince implements AuditLog.
func (s *MemoryStore) AuditSince(ctx context.Context, since time.Time) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return eventsSince(s.audit, since), nil
}
