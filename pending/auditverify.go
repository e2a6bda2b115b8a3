package pending

import (
	"fmt"
	"strconv"
	"strings"
)

// AuditReport is what VerifyAudit found.
type AuditReport struct {
	Events int `json:"events"` // chained events checked

	// First and Last are the oldest and newest chained events retained.
	First *Event `json:"first,omitempty"`
	Last  *Event `json:"last,omitempty"`
	// Trimmed: the oldest retained event is not the chain's first (Seq >
	// 1). The stream is capped (MAXLEN), so its start is cut as it grows;
	// the check starts at the first retained event, whose Prev cannot be
	// checked. (Deleting the oldest events by hand looks the same.)
	Trimmed bool `json:"trimmed"`
	// Unchained counts events at the start of the trail written before
	// the chain existed (no Seq); they are skipped.
	Unchained int `json:"unchained,omitempty"`
	// Records counts the Ask records (still retained) whose decision or
	// tool matched their events.
	Records int `json:"records_checked"`

	Head *AuditHead `json:"head,omitempty"`

	// Anchors counts the anchors (heads kept outside Redis from earlier
	// checks) that matched; AnchorsTrimmed those older than the oldest
	// retained event, which cannot be checked any more.
	Anchors        int `json:"anchors_matched,omitempty"`
	AnchorsTrimmed int `json:"anchors_trimmed,omitempty"`

	// Break is the first place the chain does not hold; nil when intact.
	Break *AuditBreak `json:"break,omitempty"`
}

// Intact reports whether the check found no break.
func (r AuditReport) Intact() bool { return r.Break == nil }

// AuditBreak names the first event at which the trail was found altered.
type AuditBreak struct {
	Event   Event  `json:"event"`   // the event named (as stored now)
	Problem string `json:"problem"` // what differs, in words
}

// String says what was checked and what was found, in a few lines.
func (r AuditReport) String() string {
	var b strings.Builder
	switch {
	case r.Events == 0 && r.Break == nil:
		b.WriteString("audit chain: no chained events")
	case r.First != nil && r.Last != nil:
		fmt.Fprintf(&b, "audit chain: %d events checked, seq %d (%s) to seq %d (%s)", r.Events, r.First.Seq, r.First.ID, r.Last.Seq, r.Last.ID)
	default:
		fmt.Fprintf(&b, "audit chain: %d events checked", r.Events)
	}
	if r.Trimmed && r.First != nil {
		fmt.Fprintf(&b, "\n  starts at seq %d, the oldest retained event: the %d before it were trimmed (MAXLEN), so its prev %.12s… cannot be checked",
			r.First.Seq, r.First.Seq-1, r.First.Prev)
	}
	if r.Unchained > 0 {
		fmt.Fprintf(&b, "\n  %d older events carry no chain fields (written before the chain existed) and were skipped", r.Unchained)
	}
	if r.Records > 0 {
		fmt.Fprintf(&b, "\n  %d retained ask records agree with their events", r.Records)
	}
	if r.Anchors > 0 {
		fmt.Fprintf(&b, "\n  %d kept heads (anchors) match the events at their seq", r.Anchors)
	}
	if r.AnchorsTrimmed > 0 {
		fmt.Fprintf(&b, "\n  %d kept heads are older than the oldest retained event and were not checked", r.AnchorsTrimmed)
	}
	if r.Head != nil {
		fmt.Fprintf(&b, "\n  head: %d:%s (keep it outside Redis; verify -anchor %d:%s later detects a rewrite)", r.Head.Seq, r.Head.Hash, r.Head.Seq, r.Head.Hash)
	}
	if r.Break != nil {
		e := r.Break.Event
		fmt.Fprintf(&b, "\nBROKEN at seq %d (id %s, %s of ask %s): %s", e.Seq, e.ID, e.Kind, e.AskID, r.Break.Problem)
	} else {
		b.WriteString("\nintact")
	}
	return b.String()
}

// chainCheck walks a trail oldest first and stops at the first break.
type chainCheck struct {
	r          AuditReport
	anchors    map[int64]string // seq → the digest kept outside Redis
	last       *Event
	lastDigest string
	lastRecord map[string]string // last's Ask record, checked once last's content is confirmed
}

// add checks e against the event before it; false once broken. rec is e's
// Ask record if it is still retained (nil otherwise): it is compared with
// e once the next link (or the head) has confirmed e's content, so an
// edited event is named as edited, not its record.
func (c *chainCheck) add(e Event, rec map[string]string) bool {
	if c.r.Break != nil {
		return false
	}
	if e.Seq == 0 {
		if c.last == nil {
			c.r.Unchained++
			return true
		}
		return c.broken(e, "the event carries no seq or prev: it was added by hand, or by an askops replica older than the chain (during a rolling upgrade)")
	}
	if c.last == nil {
		first := e
		c.r.First = &first
		c.r.Trimmed = e.Seq > 1
		if e.Seq == 1 && e.Prev != "" {
			return c.broken(e, fmt.Sprintf("the chain's first event (seq 1) records a prev %q; it should have none", e.Prev))
		}
	} else {
		switch want := c.last.Seq + 1; {
		case e.Seq > want:
			return c.broken(e, fmt.Sprintf("%s missing before it (after seq %d, id %s): deleted", seqRange(want, e.Seq-1), c.last.Seq, c.last.ID))
		case e.Seq < want:
			return c.broken(e, fmt.Sprintf("seq %d follows seq %d: the trail was reordered or an event inserted", e.Seq, c.last.Seq))
		case e.Prev != c.lastDigest:
			return c.broken(*c.last, fmt.Sprintf("its content was changed after it was written: it hashes to %s, but the next event (seq %d, id %s) recorded %s",
				c.lastDigest, e.Seq, e.ID, e.Prev))
		}
	}
	if c.last != nil && !c.record(*c.last, c.lastRecord) {
		return false
	}
	if want, ok := c.anchors[e.Seq]; ok {
		if got := EventDigest(e); got != want {
			return c.broken(e, fmt.Sprintf("it hashes to %s, but the head you kept for seq %d says %s: the trail was rewritten from this event or before it", got, e.Seq, want))
		}
		c.r.Anchors++
		delete(c.anchors, e.Seq)
	}
	c.r.Events++
	last := e
	c.last, c.lastDigest, c.lastRecord = &last, EventDigest(e), rec
	return true
}

// end checks the newest event against the head.
func (c *chainCheck) end(head *AuditHead) AuditReport {
	c.r.Head = head
	c.r.Last = c.last
	if c.r.Break != nil {
		return c.r
	}
	switch {
	case head == nil && c.last == nil:
	case head == nil:
		c.broken(*c.last, "the chain's head record is missing (deleted), so the newest events cannot be checked")
	case c.last == nil:
		c.r.Break = &AuditBreak{Event: Event{Seq: head.Seq, ID: head.ID},
			Problem: fmt.Sprintf("the head records seq %d but no chained event is left: the trail was deleted", head.Seq)}
	case head.Seq > c.last.Seq:
		c.broken(*c.last, fmt.Sprintf("%s missing after it (the head records seq %d, id %s): the newest events were deleted",
			seqRange(c.last.Seq+1, head.Seq), head.Seq, head.ID))
	case head.Seq < c.last.Seq:
		c.broken(*c.last, fmt.Sprintf("the head records seq %d, older than this event: events were added without moving the head", head.Seq))
	case head.Hash != c.lastDigest:
		c.broken(*c.last, fmt.Sprintf("its content was changed after it was written: it hashes to %s, but the head recorded %s", c.lastDigest, head.Hash))
	default:
		c.record(*c.last, c.lastRecord)
	}
	for seq, hash := range c.anchors {
		switch {
		case c.r.Break != nil:
		case c.r.First != nil && seq < c.r.First.Seq:
			c.r.AnchorsTrimmed++
		case c.last == nil || seq > c.last.Seq:
			last := int64(0)
			if c.last != nil {
				last = c.last.Seq
			}
			c.r.Break = &AuditBreak{Event: Event{Seq: seq},
				Problem: fmt.Sprintf("the head you kept says seq %d (hash %s) existed, but the trail ends at seq %d: events were removed and the chain rewritten", seq, hash, last)}
		}
	}
	return c.r
}

// ParseAnchor reads a head kept from an earlier check, as SEQ:HASH.
func ParseAnchor(s string) (AuditHead, error) {
	seq, hash, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 1 || len(hash) != 40 || strings.Trim(hash, "0123456789abcdef") != "" {
		return AuditHead{}, fmt.Errorf("%q is not SEQ:HASH (a seq and the 40 hex digits verify printed as the head)", s)
	}
	return AuditHead{Seq: n, Hash: hash}, nil
}

func anchorMap(anchors []AuditHead) map[int64]string {
	m := make(map[int64]string, len(anchors))
	for _, a := range anchors {
		m[a.Seq] = a.Hash
	}
	return m
}

// record cross-checks what the event says against the Ask's record, while
// the record is retained: a decision edited in the record (HSET) no longer
// matches its decided event. r is nil when the record is gone.
func (c *chainCheck) record(e Event, r map[string]string) bool {
	if c.r.Break != nil || len(r) == 0 {
		return c.r.Break == nil
	}
	type pair struct{ field, record, event, eventField string }
	pairs := []pair{
		{fieldRunID, r[fieldRunID], e.RunID, "run_id"},
		{fieldTool, r[fieldTool], e.Tool, "tool"},
	}
	if e.Kind == EventDecided {
		if r[fieldStatus] == string(StatusPending) {
			return c.broken(e, "its ask's record is still pending although this event says it was decided")
		}
		pairs = append(pairs,
			pair{fieldStatus, r[fieldStatus], string(e.Outcome), "outcome"},
			pair{fieldDecidedBy, r[fieldDecidedBy], e.By, "by"},
			pair{fieldDecidedAt, r[fieldDecidedAt], micros(e.At), "at"},
			pair{fieldDecisionReason, r[fieldDecisionReason], e.Reason, "reason"},
		)
	}
	for _, p := range pairs {
		if p.record != p.event {
			return c.broken(e, fmt.Sprintf("ask %s's record says %s=%q, but this event (its chain link holds) says %s=%q: the record was edited",
				e.AskID, p.field, p.record, p.eventField, p.event))
		}
	}
	c.r.Records++
	return true
}

func (c *chainCheck) broken(e Event, problem string) bool {
	c.r.Break = &AuditBreak{Event: e, Problem: problem}
	return false
}

func seqRange(from, to int64) string {
	if from == to {
		return "seq " + strconv.FormatInt(from, 10) + " is"
	}
	return fmt.Sprintf("seq %d to %d (%d events) are", from, to, to-from+1)
}
