package pending

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AuditReport is what VerifyAudit found.
type AuditReport struct {
	Events int `json:"events"` // chained events checked

	// First and Last are the oldest and newest chained events retained.
	First *Event `json:"first,omitempty"`
	Last  *Event `json:"last,omitempty"`
	// Trimmed: the oldest retained event is not the chain's first (Seq >
	// 1), and the stream's cap explains it. XADD MAXLEN ~ never trims the
	// stream below its cap, so a trim is the explanation only if some
	// retained event was appended when the events from the oldest retained
	// one up to it were at least the cap it was appended under (TrimCap).
	// The check starts at the first retained event, whose Prev cannot be
	// checked. A missing start that no cap explains is a gap instead
	// (GapPrefix), not a trim.
	Trimmed bool `json:"trimmed"`
	// TrimCap is the cap that explains the trim; TrimCapAssumed says the
	// events that explain it record none (written by a release before the
	// cap was recorded) and the store's configured cap stood in for it.
	TrimCap        int64 `json:"trim_cap,omitempty"`
	TrimCapAssumed bool  `json:"trim_cap_assumed,omitempty"`
	// TrimCapBy is the seq of the event whose cap explains the trim, and
	// Cap the cap the store verifying is configured with: a trim that only
	// a cap other than the store's explains is worth a look (a cap is as
	// trustworthy as the chain: an event appended by hand with its digest
	// recomputed and the head moved could claim any).
	TrimCapBy int64 `json:"trim_cap_by,omitempty"`
	Cap       int64 `json:"cap,omitempty"`
	// Unchained counts events at the start of the trail, before the
	// chain's first event (seq 1), written before the chain existed (no
	// Seq); they are skipped. An event without a link anywhere else is a
	// gap.
	Unchained int `json:"unchained,omitempty"`
	// Records counts the Ask records (still retained) whose decision or
	// tool matched their events.
	Records int `json:"records_checked"`
	// Unrecorded counts the retained records that say their Ask was
	// decided but have no decided event in the trail (GapUnrecorded).
	Unrecorded int `json:"records_without_events,omitempty"`

	Head *AuditHead `json:"head,omitempty"`

	// Anchors counts the anchors (heads kept outside Redis from earlier
	// checks) that matched; AnchorsTrimmed those older than the oldest
	// retained event, which can no longer be checked: each is also a gap.
	Anchors        int `json:"anchors_matched,omitempty"`
	AnchorsTrimmed int `json:"anchors_trimmed,omitempty"`

	// Break is the first gap (Gaps[0]); nil when intact. Readers of the
	// first release's report know only this one.
	Break *AuditBreak `json:"break,omitempty"`
	// Gaps are all the places the trail does not hold, a missing start
	// first, then in the order of the trail, then the anchors: at most
	// maxGaps of them, GapsOmitted counts the rest.
	Gaps        []AuditBreak `json:"gaps,omitempty"`
	GapsOmitted int          `json:"gaps_omitted,omitempty"`
}

// maxGaps bounds the gaps a report lists (a stream stuffed with a million
// hand-added events must not make a million-line report).
const maxGaps = 100

// Intact reports whether the check found no gap.
func (r AuditReport) Intact() bool { return r.Break == nil }

// GapKind says what kind of gap an AuditBreak is.
type GapKind string

const (
	// GapUnchained: events without a chain link (no seq), between links,
	// after the newest, or making up the whole stream.
	GapUnchained GapKind = "unchained"
	// GapDeleted: seqs missing between two retained events, or after the
	// newest one the head records.
	GapDeleted GapKind = "deleted"
	// GapPrefix: the oldest events are missing and no cap explains it.
	GapPrefix GapKind = "prefix"
	// GapEdited: an event's content no longer hashes to what its successor
	// (or the head) recorded.
	GapEdited GapKind = "edited"
	// GapReordered: a seq at or below the one before it.
	GapReordered GapKind = "reordered"
	// GapTail: events after the head's event, which askops's chained
	// append would have moved the head to.
	GapTail GapKind = "tail"
	// GapHead: the head record is missing or names another event.
	GapHead GapKind = "head"
	// GapRecord: an Ask's retained record disagrees with its event.
	GapRecord GapKind = "record"
	// GapAnchor: a kept head that does not match, or cannot be checked.
	GapAnchor GapKind = "anchor"
	// GapUnrecorded: an Ask's retained record says it was decided, but the
	// trail holds no decided event for it and no trim by the cap explains
	// it: its event was deleted (with the whole stream and its head, when
	// none is left).
	GapUnrecorded GapKind = "unrecorded"
)

// AuditBreak names one gap: a place at which the trail was found altered,
// or cannot be proven.
type AuditBreak struct {
	Kind  GapKind `json:"kind,omitempty"`
	Event Event   `json:"event"` // the event named (as stored now)
	// After and Before are the stream ids of the retained events just
	// before and just after the gap ("" at the trail's start or end).
	After   string `json:"after_id,omitempty"`
	Before  string `json:"before_id,omitempty"`
	Problem string `json:"problem"` // what differs, in words, with the ids around it
}

// String is the gap on one line.
func (g AuditBreak) String() string {
	e := g.Event
	switch {
	case g.Kind == GapUnrecorded:
		return fmt.Sprintf("BROKEN at ask %s (decided, no event): %s", e.AskID, g.Problem)
	case e.Seq == 0 && e.ID != "":
		return fmt.Sprintf("BROKEN at id %s (%s of ask %s, no chain link): %s", e.ID, e.Kind, e.AskID, g.Problem)
	case e.ID == "":
		return fmt.Sprintf("BROKEN at seq %d: %s", e.Seq, g.Problem)
	}
	return fmt.Sprintf("BROKEN at seq %d (id %s, %s of ask %s): %s", e.Seq, e.ID, e.Kind, e.AskID, g.Problem)
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
		assumed := ""
		if r.TrimCapAssumed {
			assumed = ", the configured cap: the events that show it record none, being written before the cap was recorded"
		}
		if r.Cap > 0 && r.TrimCap != r.Cap {
			assumed = fmt.Sprintf(", recorded by seq %d; the store's cap is now %d", r.TrimCapBy, r.Cap)
		}
		fmt.Fprintf(&b, "\n  starts at seq %d (id %s), the oldest retained event: the %d before it were trimmed (MAXLEN) by the stream's cap of %d%s, so its prev %.12s… cannot be checked",
			r.First.Seq, r.First.ID, r.First.Seq-1, r.TrimCap, assumed, r.First.Prev)
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
	if r.Head != nil {
		fmt.Fprintf(&b, "\n  head: %d:%s (keep it outside Redis; verify -anchor %d:%s later detects a rewrite)", r.Head.Seq, r.Head.Hash, r.Head.Seq, r.Head.Hash)
	}
	for _, g := range r.Gaps {
		b.WriteString("\n" + g.String())
	}
	switch n := len(r.Gaps) + r.GapsOmitted; {
	case n == 0:
		b.WriteString("\nintact")
	case n == 1:
		b.WriteString("\nBROKEN: 1 gap")
	case r.GapsOmitted > 0:
		fmt.Fprintf(&b, "\nBROKEN: %d gaps (the %d after the first %d not listed)", n, r.GapsOmitted, len(r.Gaps))
	default:
		fmt.Fprintf(&b, "\nBROKEN: %d gaps", n)
	}
	return b.String()
}

// chainCheck walks a trail oldest first and names every gap. It walks past
// a gap (the next event starts the chain anew), so one deletion does not
// hide the next.
//
// The head is read before the walk (head) and again after it (end's). The
// events after the first head's event wait in beyond: if the head did not
// move they are the tail no chained append made (GapTail), and if it did
// (appends while the walk ran) they are checked against the head read
// after, whose event then ends the chain instead.
type chainCheck struct {
	r       AuditReport
	maxLen  int64            // the store's cap, assumed for events that record none
	anchors map[int64]string // seq → the digest kept outside Redis
	head    *AuditHead
	atHead  bool // the walk has passed the head's event
	beyond  []heldEvent

	last       *Event
	lastDigest string
	lastRecord map[string]string // last's Ask record, checked once last's content is confirmed

	// run is the events without a link since last, reported as one gap
	// when the next link (or the end) closes it.
	runFirst, runLast Event
	runN              int
	preChainFirst     Event  // the oldest event before the chain's first
	preChainID        string // the newest event before the chain's first

	// reach is the highest oldest-retained seq a MAXLEN trim could have
	// left (seq - cap + 1 of reachBy, the best of the events seen).
	reach        int64
	reachBy      *Event
	reachCap     int64
	reachAssumed bool
	deleted      [][2]int64 // seq ranges missing between retained events

	// decidedIn are the Asks with a decided event in the trail (chained or
	// not), oldestAt the time of the oldest retained event, and decided
	// the retained records that say their Ask was decided (see
	// endRecords).
	decidedIn map[string]bool
	oldestAt  time.Time
	decided   []decidedRecord
}

// decidedRecord is what a retained Ask record says of its decision.
type decidedRecord struct {
	AskID, Outcome, By string
	At                 time.Time
}

type heldEvent struct {
	e   Event
	rec map[string]string
}

// newChainCheck starts a check against anchors, with the head as read
// before the walk (nil when there is none) and the store's cap.
func newChainCheck(anchors []AuditHead, head *AuditHead, maxLen int64) *chainCheck {
	m := make(map[int64]string, len(anchors))
	for _, a := range anchors {
		m[a.Seq] = a.Hash
	}
	return &chainCheck{anchors: m, head: head, maxLen: maxLen, r: AuditReport{Cap: maxLen}, decidedIn: map[string]bool{}}
}

// records takes the retained records that say their Ask was decided, read
// before the walk: a decision writes its record and appends its event in
// one step, so each one's event is in the walk unless it was removed.
func (c *chainCheck) records(recs []decidedRecord) { c.decided = recs }

// add takes the next event of the trail. rec is e's Ask record if it is
// still retained (nil otherwise): it is compared with e once the next link
// (or the head) has confirmed e's content, so an edited event is named as
// edited, not its record.
func (c *chainCheck) add(e Event, rec map[string]string) {
	if c.oldestAt.IsZero() {
		c.oldestAt = e.At
	}
	if e.Kind == EventDecided {
		c.decidedIn[e.AskID] = true
	}
	if c.atHead {
		c.beyond = append(c.beyond, heldEvent{e, rec})
		return
	}
	c.link(e, rec)
	if c.head != nil && c.head.ID != "" && e.ID == c.head.ID {
		c.atHead = true
	}
}

// link checks e against the event before it.
func (c *chainCheck) link(e Event, rec map[string]string) {
	if e.Seq == 0 {
		switch {
		case c.last == nil:
			if c.r.Unchained == 0 {
				c.preChainFirst = e
			}
			c.r.Unchained++
			c.preChainID = e.ID
		case c.runN == 0:
			c.runFirst, c.runLast, c.runN = e, e, 1
		default:
			c.runLast, c.runN = e, c.runN+1
		}
		return
	}
	if c.runN > 0 {
		c.gap(GapUnchained, c.runFirst, c.last.ID, e.ID, fmt.Sprintf("%s between seq %d (id %s) and seq %d (id %s)%s",
			c.runText(), c.last.Seq, c.last.ID, e.Seq, e.ID, unchainedWhy))
		c.runN = 0
	}
	digest := EventDigest(e)
	if c.last == nil {
		first := e
		c.r.First = &first
		switch {
		case e.Seq == 1 && e.Prev != "":
			c.gap(GapEdited, e, "", "", fmt.Sprintf("the chain's first event (seq 1) records a prev %q; it should have none", e.Prev))
		case e.Seq > 1 && c.r.Unchained > 0:
			c.gap(GapPrefix, e, c.preChainID, e.ID, fmt.Sprintf("%s missing between id %s, the newest of %d older events without chain fields, and seq %d (id %s): a trim removes the oldest events first, so these were deleted",
				seqRange(1, e.Seq-1), c.preChainID, c.r.Unchained, e.Seq, e.ID))
		}
	} else {
		switch want := c.last.Seq + 1; {
		case e.Seq > want:
			c.deleted = append(c.deleted, [2]int64{want, e.Seq - 1})
			c.gap(GapDeleted, e, c.last.ID, e.ID, fmt.Sprintf("%s missing between seq %d (id %s) and this event (id %s): deleted", seqRange(want, e.Seq-1), c.last.Seq, c.last.ID, e.ID))
		case e.Seq < want:
			c.gap(GapReordered, e, c.last.ID, e.ID, fmt.Sprintf("seq %d follows seq %d (id %s): the trail was reordered or an event inserted", e.Seq, c.last.Seq, c.last.ID))
		case e.Prev != c.lastDigest:
			c.gap(GapEdited, *c.last, c.last.ID, e.ID, fmt.Sprintf("its content was changed after it was written: it hashes to %s, but the next event (seq %d, id %s) recorded %s",
				c.lastDigest, e.Seq, e.ID, e.Prev))
		default:
			c.record(*c.last, c.lastRecord)
		}
	}
	if want, ok := c.anchors[e.Seq]; ok {
		delete(c.anchors, e.Seq)
		if digest != want {
			c.gap(GapAnchor, e, "", "", fmt.Sprintf("it hashes to %s, but the head you kept for seq %d says %s: the trail was rewritten from this event or before it", digest, e.Seq, want))
		} else {
			c.r.Anchors++
		}
	}
	maxLen, assumed := e.Cap, false
	if maxLen <= 0 {
		maxLen, assumed = c.maxLen, true
	}
	if reach := e.Seq - maxLen + 1; c.reachBy == nil || reach > c.reach || reach == c.reach && c.reachAssumed && !assumed {
		by := e
		c.reach, c.reachBy, c.reachCap, c.reachAssumed = reach, &by, maxLen, assumed
	}
	c.r.Events++
	last := e
	c.last, c.lastDigest, c.lastRecord = &last, digest, rec
}

const unchainedWhy = ": added to the stream by hand (XADD), not by askops's chained append (or by an askops replica older than the chain, during a rolling upgrade)"

// runText says which events the open run holds.
func (c *chainCheck) runText() string {
	if c.runN == 1 {
		return fmt.Sprintf("the event carries no chain link (no seq or prev), id %s,", c.runFirst.ID)
	}
	return fmt.Sprintf("%d events carry no chain link (no seq or prev), ids %s to %s,", c.runN, c.runFirst.ID, c.runLast.ID)
}

// end takes the head as read after the walk, checks the newest events
// against it and the start against the cap, and returns the report.
func (c *chainCheck) end(head *AuditHead) AuditReport {
	if c.atHead && !sameHead(head, c.head) {
		held := c.beyond
		c.beyond, c.atHead, c.head = nil, false, head
		for _, h := range held {
			c.add(h.e, h.rec)
		}
	}
	c.r.Head = head
	c.r.Last = c.last
	c.endHead(head)
	if c.runN > 0 && c.last != nil {
		c.gap(GapUnchained, c.runFirst, c.last.ID, "", fmt.Sprintf("%s after seq %d (id %s), the newest chained event%s", c.runText(), c.last.Seq, c.last.ID, unchainedWhy))
	}
	if n := len(c.beyond); n > 0 && head != nil {
		first, last := c.beyond[0].e, c.beyond[n-1].e
		what, verb, it := "the event (id "+first.ID+") comes", "was", "it"
		if n > 1 {
			what, verb, it = fmt.Sprintf("%d events (ids %s to %s) come", n, first.ID, last.ID), "were", "they"
		}
		c.gap(GapTail, first, head.ID, "", fmt.Sprintf("%s after the head's event (seq %d, id %s): askops's chained append moves the head to every event it adds, so %s %s added by hand (XADD)",
			what, head.Seq, head.ID, it, verb))
	}
	c.endPrefix()
	c.endAnchors()
	c.endRecords()
	if len(c.r.Gaps) > 0 {
		first := c.r.Gaps[0]
		c.r.Break = &first
	}
	return c.r
}

// endHead checks the newest chained event against the head.
func (c *chainCheck) endHead(head *AuditHead) {
	switch {
	case head == nil && c.last == nil:
		if c.r.Unchained > 0 {
			c.gap(GapUnchained, c.preChainFirst, "", "", fmt.Sprintf("none of the %d events (ids %s to %s) carries a chain link and there is no head: written by an askops release older than the chain, or by hand; nothing in them can be proven",
				c.r.Unchained, c.preChainFirst.ID, c.preChainID))
		}
	case head == nil:
		c.gap(GapHead, *c.last, c.last.ID, "", "the chain's head record is missing (deleted), so the newest events cannot be checked")
	case c.last == nil:
		c.gap(GapDeleted, Event{Seq: head.Seq, ID: head.ID}, "", "",
			fmt.Sprintf("the head records seq %d but no chained event is left: the trail was deleted", head.Seq))
	case head.Seq > c.last.Seq:
		c.deleted = append(c.deleted, [2]int64{c.last.Seq + 1, head.Seq})
		c.gap(GapDeleted, *c.last, c.last.ID, "", fmt.Sprintf("%s missing after it (the head records seq %d, id %s): the newest events were deleted",
			seqRange(c.last.Seq+1, head.Seq), head.Seq, head.ID))
	case head.Seq < c.last.Seq:
		c.gap(GapTail, *c.last, head.ID, "", fmt.Sprintf("the head records seq %d (id %s), older than this event: %s, added without moving the head, by hand (askops's chained append moves it)",
			head.Seq, head.ID, seqSpan(head.Seq+1, c.last.Seq)))
	case head.Hash != c.lastDigest:
		c.gap(GapEdited, *c.last, c.last.ID, "", fmt.Sprintf("its content was changed after it was written: it hashes to %s, but the head recorded %s", c.lastDigest, head.Hash))
	case head.ID != "" && head.ID != c.last.ID:
		c.gap(GapHead, *c.last, c.last.ID, "", fmt.Sprintf("the head records seq %d at id %s, but it is at id %s: the stream was rebuilt", head.Seq, head.ID, c.last.ID))
	default:
		c.record(*c.last, c.lastRecord)
	}
}

// endPrefix decides whether a missing start is a trim: XADD MAXLEN ~ cap
// only ever leaves the newest cap events or more, so after a trim at the
// append of seq k the trail from the oldest retained seq F up to k holds
// at least k's cap: F <= k - cap + 1 for some retained k. A missing start
// that no retained event explains was removed by hand (XTRIM MINID, XDEL).
// (Someone can still delete the oldest events a trim would have taken
// next; they cannot delete more.)
func (c *chainCheck) endPrefix() {
	f := c.r.First
	if f == nil || f.Seq <= 1 || c.r.Unchained > 0 {
		return
	}
	if f.Seq <= c.reach {
		c.r.Trimmed, c.r.TrimCap, c.r.TrimCapAssumed, c.r.TrimCapBy = true, c.reachCap, c.reachAssumed, c.reachBy.Seq
		return
	}
	k := c.reachBy
	capText := strconv.FormatInt(c.reachCap, 10)
	if c.reachAssumed {
		capText += ", the configured cap, as it records none"
	}
	g := AuditBreak{Kind: GapPrefix, Event: *f, Before: f.ID, Problem: fmt.Sprintf(
		"%s missing before seq %d (id %s), the oldest retained event, and no cap explains it: XADD MAXLEN ~ never trims the stream below its cap, but from seq %d to seq %d (id %s) there are only %d events, under the cap %s it was appended with: the oldest events were removed by hand (XTRIM MINID, XDEL)",
		seqRange(1, f.Seq-1), f.Seq, f.ID, f.Seq, k.Seq, k.ID, k.Seq-f.Seq+1, capText)}
	c.r.Gaps = slices.Insert(c.r.Gaps, 0, g)
	if len(c.r.Gaps) > maxGaps {
		c.r.Gaps = c.r.Gaps[:maxGaps]
		c.r.GapsOmitted++
	}
}

// endAnchors reports the anchors no retained event matched.
func (c *chainCheck) endAnchors() {
	seqs := make([]int64, 0, len(c.anchors))
	for seq := range c.anchors {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		hash := c.anchors[seq]
		switch {
		case c.last == nil:
			c.gap(GapAnchor, Event{Seq: seq}, "", "", fmt.Sprintf("the head you kept says seq %d (hash %s) existed, but no chained event is retained", seq, hash))
		case seq < c.r.First.Seq:
			c.r.AnchorsTrimmed++
			why := "are missing"
			if c.r.Trimmed {
				why = "were trimmed by the cap"
			}
			c.gap(GapAnchor, Event{Seq: seq}, "", c.r.First.ID, fmt.Sprintf("the head you kept for seq %d is older than the oldest retained event (seq %d, id %s): the events up to it %s, so it can no longer be checked and proves nothing; keep the head this check prints instead",
				seq, c.r.First.Seq, c.r.First.ID, why))
		case seq > c.last.Seq:
			c.gap(GapAnchor, Event{Seq: seq}, c.last.ID, "", fmt.Sprintf("the head you kept says seq %d (hash %s) existed, but the trail ends at seq %d (id %s): events were removed and the chain rewritten", seq, hash, c.last.Seq, c.last.ID))
		default:
			c.gap(GapAnchor, Event{Seq: seq}, "", "", fmt.Sprintf("the head you kept for seq %d names an event that is not in the trail (deleted, or inside a reordered stretch)", seq))
		}
	}
}

// endRecords names every retained record that says its Ask was decided
// while the trail holds no decided event for it: deleting the stream and
// its head leaves no chain to break, but the records still say what was
// decided. A record decided before the oldest retained event of a trail
// whose start is missing had its event there: the cap trimmed it, which is
// no gap, or the missing start is one (GapPrefix) already.
func (c *chainCheck) endRecords() {
	startMissing := c.r.First != nil && c.r.First.Seq > 1
	recs := slices.Clone(c.decided)
	slices.SortFunc(recs, func(a, b decidedRecord) int {
		if n := a.At.Compare(b.At); n != 0 {
			return n
		}
		return strings.Compare(a.AskID, b.AskID)
	})
	for _, r := range recs {
		if c.decidedIn[r.AskID] || startMissing && !r.At.After(c.oldestAt) {
			continue
		}
		where := "the trail holds no events at all"
		if c.last != nil || c.r.Unchained > 0 {
			where = "the trail holds no decided event for it"
		}
		c.r.Unrecorded++
		c.gap(GapUnrecorded, Event{Kind: EventDecided, AskID: r.AskID, Outcome: Outcome(r.Outcome), By: r.By, At: r.At}, "", "",
			fmt.Sprintf("ask %s's record says it was %s by %q at %s, but %s: its events were deleted (a decision records both in one step)",
				r.AskID, r.Outcome, r.By, r.At.UTC().Format(time.RFC3339Nano), where))
	}
}

func sameHead(a, b *AuditHead) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
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

// record cross-checks what the event says against the Ask's record, while
// the record is retained: a decision edited in the record (HSET) no longer
// matches its decided event. r is nil when the record is gone.
func (c *chainCheck) record(e Event, r map[string]string) {
	if len(r) == 0 {
		return
	}
	type pair struct{ field, record, event, eventField string }
	pairs := []pair{
		{fieldRunID, r[fieldRunID], e.RunID, "run_id"},
		{fieldTool, r[fieldTool], e.Tool, "tool"},
	}
	if e.Kind == EventDecided {
		if r[fieldStatus] == string(StatusPending) || r[fieldStatus] == statusGated {
			c.gap(GapRecord, e, "", "", "its ask's record is still pending although this event says it was decided")
			return
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
			c.gap(GapRecord, e, "", "", fmt.Sprintf("ask %s's record says %s=%q, but this event (its chain link holds) says %s=%q: the record was edited",
				e.AskID, p.field, p.record, p.eventField, p.event))
			return
		}
	}
	c.r.Records++
}

// gap records one gap, after and before being the ids around it.
func (c *chainCheck) gap(kind GapKind, e Event, after, before, problem string) {
	if len(c.r.Gaps) >= maxGaps {
		c.r.GapsOmitted++
		return
	}
	c.r.Gaps = append(c.r.Gaps, AuditBreak{Kind: kind, Event: e, After: after, Before: before, Problem: problem})
}

// seqRange names the seqs from..to as the subject of "is" or "are".
func seqRange(from, to int64) string {
	if from == to {
		return seqSpan(from, to) + " is"
	}
	return seqSpan(from, to) + " are"
}

func seqSpan(from, to int64) string {
	if from == to {
		return "seq " + strconv.FormatInt(from, 10)
	}
	return fmt.Sprintf("seq %d to %d (%d events)", from, to, to-from+1)
}
