package pending

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	hide "github.com/askops/askops/redact"
)

// Quorum: an Ask whose Request.Approvals is N > 1 needs N distinct people
// to approve it. Each approval is a vote, counted once per person; the Nth
// distinct approval ends the Ask Approved (first-wins holds for it as for
// any decision), and one Deny ends it at once.
//
// Votes count as the fewest people they could be. A Slack click is its
// user's (Ballot.Person; Slack says who clicked). An API token or the
// console's user is a person only where the config names the Slack user
// who holds it (Options.People): then it is that person, and their Slack
// click after it is a repeat. A vote nobody can name could be anybody's:
// the holder of a token may be any Slack voter, and two tokens one holder.
// So the votes nobody can name count as one person together, and only
// while no named person has voted: a Slack approval and an unnamed token's
// never make two. "For session" is not
// offered on such an Ask: a grant would let one person's say cover the
// next identical call, which the rule says needs N.
//
// The count and the final transition are one script (voteScript) on the
// Ask's own hash, under the hash tag every key shares, so two replicas
// taking the last two clicks at once can neither both decide nor both
// count the same person.

// Votes lists who has approved an Ask that needs several approvals, in
// the order they did, one per line. A string rather than a slice keeps Ask
// comparable with ==; no decider's name holds a newline (Cast refuses one).
type Votes string

// List is who approved, in order.
func (v Votes) List() []string {
	if v == "" {
		return nil
	}
	return strings.Split(string(v), "\n")
}

// Count is how many approved.
func (v Votes) Count() int { return len(v.List()) }

// Has reports whether who has approved.
func (v Votes) Has(who string) bool { return slices.Contains(v.List(), who) }

// with is v after who's approval.
func (v Votes) with(who string) Votes {
	if v == "" {
		return Votes(who)
	}
	return v + "\n" + Votes(who)
}

// Ballot is one person's decision on an Ask.
type Ballot struct {
	Outcome Outcome // Approved, ApprovedSession or Denied
	By      string
	Reason  string // a deny's reason, if any
	// GrantTTL is, for ApprovedSession, the life the approver chose for
	// the grant (a time-boxed grant); 0 means the session's. The store
	// keeps it on the Ask (Ask.GrantTTL) so the waiting side, which
	// records the grant, reads it with the outcome.
	GrantTTL time.Duration
	// Person is who cast it as a person, where the front door knows: a
	// Slack click's user id. Other front doors leave it empty, and the
	// store names the person from Options.People, or nobody.
	Person string
}

// personOf is who b's voter is as a person, or "" for nobody known.
func (o Options) personOf(b Ballot) string {
	if b.Person != "" {
		return b.Person
	}
	return o.People[b.By]
}

// Counted is how many people the votes count as: each named person once,
// and the votes nobody can name as one person, only while no named person
// has voted (see Quorum above). A vote recorded before votes were counted
// as people names nobody; an Ask decided then shows the count it was
// decided with (one per identity). Remove in v0.2.0, with the records.
func (a Ask) Counted() int {
	if a.people == "" && a.Status != StatusPending {
		return a.Votes.Count()
	}
	_, n, unnamed := a.namedVoters()
	if n == 0 && unnamed {
		return 1
	}
	return n
}

// namedVoters are the people named among the votes, how many, and
// whether any vote names nobody.
func (a Ask) namedVoters() (map[string]bool, int, bool) {
	named := map[string]bool{}
	lines, unnamed := 0, false
	for line := range strings.SplitSeq(a.people, "\n") {
		if line == "" {
			continue
		}
		lines++
		p := line[strings.LastIndexByte(line, '\t')+1:]
		switch {
		case !strings.Contains(line, "\t") || p == "":
			unnamed = true
		case !named[p]:
			named[p] = true
		}
	}
	if a.Votes.Count() > lines {
		unnamed = true // votes from before people were recorded
	}
	return named, len(named), unnamed
}

// withPerson is a.people after by's vote as person.
func (a Ask) withPerson(by, person string) string {
	line := by + "\t" + person
	if a.people == "" {
		return line
	}
	return a.people + "\n" + line
}

// Needed is how many distinct approvals the Ask needs (at least 1).
func (a Ask) Needed() int { return max(1, a.Approvals) }

// Tally says where a quorum stands in plain words, e.g. "1 of 2
// approvals (U0ANA)"; "" for an Ask that needs one approval.
func (a Ask) Tally() string {
	if a.Needed() < 2 {
		return ""
	}
	s := fmt.Sprintf("%d of %d approvals", a.Counted(), a.Needed())
	if a.Votes != "" {
		s += " (" + strings.Join(a.Votes.List(), ", ") + ")"
	}
	if a.Counted() < a.Votes.Count() {
		s += "; " + UncountedNote
	}
	return s
}

// UncountedNote says why a tally counts fewer people than it lists.
const UncountedNote = "API tokens and console users the config does not link to a Slack user may be any of these people, so they count as one person at most, and not beside a Slack approver"

// RepeatVote reports whether err refused a second approval by the same
// person, with the Ask (still pending) as it stands.
func RepeatVote(err error) (Ask, bool) {
	a, ok := ConflictAsk(err)
	return a, ok && a.Status == StatusPending
}

func repeatVote(op string, a Ask, by string) error {
	return &Error{Store: "pending", Code: CodeConflict, Op: op, Record: &a,
		Msg: fmt.Sprintf("%s has already approved; one person counts once (%s)", by, a.Tally())}
}

func sessionOnQuorum(op string, a Ask) error {
	return &Error{Store: "pending", Code: CodeInvalid, Op: op,
		Msg: fmt.Sprintf("approval for the session is not offered on an ask that needs %d approvals", a.Needed())}
}

// checkBallot refuses a malformed ballot before any store is touched.
func checkBallot(op, id string, b Ballot) (Ballot, error) {
	if err := checkID(op, id); err != nil {
		return b, err
	}
	if !humanDecision(b.Outcome) {
		return b, &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("a ballot is approved, approved_session or denied, not %.40q", string(b.Outcome))}
	}
	if b.By == "" || strings.ContainsAny(b.By, "\r\n") {
		return b, &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: "a ballot names who cast it, on one line"}
	}
	if b.GrantTTL < 0 || (b.GrantTTL > 0 && b.Outcome != ApprovedSession) {
		return b, &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: "a grant duration goes only with approved_session, and is positive"}
	}
	b.GrantTTL = b.GrantTTL.Truncate(time.Microsecond)
	// A deny reason typed by a person rests in the store too (see atRest).
	b.Reason = hide.Secrets(b.Reason)
	return b, nil
}

// voteReason is the audit text of a vote: where the count stands after it.
func voteReason(o Outcome, votes, need int) string { // votes: people counted
	if o == Denied {
		return fmt.Sprintf("denied with %d of %d approvals", votes, need)
	}
	return fmt.Sprintf("%d of %d approvals", votes, need)
}

// Hash fields of a quorum Ask and of a time-boxed grant (see the layout in
// redis.go).
const (
	fieldQuorum   = "quorum"    // Request.Approvals when > 1
	fieldVoters   = "voters"    // Ask.Votes
	fieldPeople   = "people"    // Ask.people
	fieldGrantTTL = "grant_ttl" // Ask.GrantTTL (µs)
)

// decodeVotes fills a's quorum fields from its hash.
func decodeVotes(a *Ask, h map[string]string) {
	if n, err := strconv.Atoi(h[fieldQuorum]); err == nil && n > 1 {
		a.Approvals = n
	}
	if n, err := strconv.ParseInt(h[fieldGrantTTL], 10, 64); err == nil && n > 0 {
		a.GrantTTL = time.Duration(n) * time.Microsecond
	}
	a.Votes = Votes(h[fieldVoters])
	a.people = h[fieldPeople]
}

// voteScript is decideScript for a person's ballot, with the quorum: on an
// Ask without a quorum field it decides exactly as decideScript does. On a
// quorum Ask an approval by someone not yet counted is recorded (a line
// of voters) with a "voted" audit event, and only the one that
// reaches the quorum decides; a repeat is refused ("repeat"), "for
// session" is refused ("session"), and a deny decides at once (audited as
// a vote too, so the trail shows the count it ended).
//
// ARGV[13] is the ballot's person ("" for nobody known): an approval by a
// person already counted is a repeat, and the count is count_people's,
// Ask.Counted's twin.
//
// With a binding (ARGV[10] on, the message channel; see CastOn) it first
// checks that the record's own message is on/ts and, with not_by set, that
// the record has the starter's field (u; "" for nobody) and it is not
// not_by; else it returns {unbound} having changed nothing.
// Returns {result, HGETALL}: result is won | voted | repeat | session |
// late | lost, or {missing} or {unbound}.
var voteScript = redis.NewScript(auditAppendLua + announceLua + settleLua + `
local key, deadlines, audit, head = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, outcome, by, reason, now, channel, maxlen, late, grant =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local on, ts, not_by = ARGV[10] or '', ARGV[11] or '', ARGV[12] or ''
local person = ARGV[13] or ''
local function count_people(voters, people)
  local named, n, lines, unnamed = {}, 0, 0, false
  for line in string.gmatch(people, '[^\n]+') do
    lines = lines + 1
    local p = string.match(line, '\t([^\t]*)$')
    if not p or p == '' then
      unnamed = true
    elseif not named[p] then
      named[p] = true
      n = n + 1
    end
  end
  local votes = 0
  if voters ~= '' then votes = select(2, string.gsub(voters, '\n', '')) + 1 end
  if votes > lines then unnamed = true end
  if n == 0 and unnamed then return 1, named end
  return n, named
end
if on ~= '' then
  local m = redis.call('HMGET', key, 'channel', 'message_ts', 'u')
  if m[1] ~= on or m[2] ~= ts or (not_by ~= '' and (not m[3] or m[3] == not_by)) then
    return {'unbound'}
  end
end
now = server_now(now)
local over = already_over(key, deadlines, id)
if over then return over end
local rec = redis.call('HMGET', key, 'run_id', 'tool', 'deadline', 'quorum', 'voters', 'people')
local result = 'won'
if tonumber(now) >= tonumber(rec[3]) then
  outcome, by, reason, grant, result = 'expired', '', late, '', 'late'
else
  local need = tonumber(rec[4] or '1') or 1
  if need > 1 then
    if outcome == 'approved_session' then return {'session', redis.call('HGETALL', key)} end
    local voters, people = rec[5] or '', rec[6] or ''
    local votes, named = 0, {}
    if voters ~= '' then votes, named = count_people(voters, people) end
    if outcome == 'approved' then
      if string.find('\n' .. voters .. '\n', '\n' .. by .. '\n', 1, true) or (person ~= '' and named[person]) then
        return {'repeat', redis.call('HGETALL', key)}
      end
      if voters ~= '' then voters = voters .. '\n' end
      if people ~= '' then people = people .. '\n' end
      voters, people = voters .. by, people .. by .. '\t' .. person
      redis.call('HSET', key, 'voters', voters, 'people', people)
      votes = count_people(voters, people)
    end
    local tally = votes .. ' of ' .. need .. ' approvals'
    if outcome == 'denied' then tally = 'denied with ' .. tally end
    audit_append(audit, head, maxlen, now, 'voted', id, rec[1] or '', rec[2] or '', outcome, by, tally, '')
    if outcome == 'approved' and votes < need then
      return {'voted', redis.call('HGETALL', key)}
    end
  end
end
redis.call('HSET', key, 'status', outcome, 'decided_by', by, 'decided_at', now, 'decision_reason', reason)
if grant ~= '' then redis.call('HSET', key, 'grant_ttl', grant) end
redis.call('ZREM', deadlines, id)
audit_append(audit, head, maxlen, now, 'decided', id, rec[1] or '', rec[2] or '', outcome, by, reason, '')
local record = redis.call('HGETALL', key)
announce(channel, id, record)
return {result, record}
`)

// Binding is what a click asserts about the Ask it votes on when its
// caller has not read the record (CastOn): the Ask's own message is at
// Channel/MessageTS (a recorded copy does not count), and, if NotStartedBy
// is set, that user did not start its run (the self-approval rule; a Redis
// record written before the starter had its own field never binds then;
// Remove in v0.2.0).
type Binding struct {
	Channel, MessageTS string
	NotStartedBy       string
}

// BoundCaster casts a ballot only where a Binding holds, in one step with
// the vote: Slack clicks on an Ask's own message take this path, one round
// trip to the store instead of a read and then a vote (on Redis each is a
// wake-up of an idle process or two on the way from a click to the agent).
// Bound false means nothing was written: the caller reads the record and
// judges the click in full.
type BoundCaster interface {
	CastOn(ctx context.Context, id string, b Ballot, on Binding) (a Ask, bound bool, err error)
}

func (on Binding) binds(a Ask) bool {
	return a.Channel == on.Channel && a.MessageTS == on.MessageTS &&
		(on.NotStartedBy == "" || a.StartedBy != on.NotStartedBy)
}

// Cast implements Store.
func (s *RedisStore) Cast(ctx context.Context, id string, b Ballot) (Ask, error) {
	a, _, err := s.cast(ctx, "cast", id, b, Binding{})
	return a, err
}

// CastOn implements BoundCaster: the binding is checked in the vote script
// itself, so a click costs one round trip instead of a read and a vote.
func (s *RedisStore) CastOn(ctx context.Context, id string, b Ballot, on Binding) (Ask, bool, error) {
	if on.Channel == "" || on.MessageTS == "" {
		return Ask{}, false, nil
	}
	return s.cast(ctx, "cast", id, b, on)
}

func (s *RedisStore) cast(ctx context.Context, op, id string, b Ballot, on Binding) (Ask, bool, error) {
	b, err := checkBallot(op, id, b)
	if err != nil {
		return Ask{}, true, err
	}
	grant := ""
	if b.GrantTTL > 0 {
		grant = strconv.FormatInt(b.GrantTTL.Microseconds(), 10)
	}
	a, result, err := s.settle(ctx, op, id, voteScript, func(channel string) []any {
		return []any{id, string(b.Outcome), b.By, b.Reason, s.scriptNow(), channel, s.opts.AuditMaxLen, reasonLate, grant,
			on.Channel, on.MessageTS, on.NotStartedBy, s.opts.personOf(b)}
	})
	if result == "unbound" {
		return Ask{}, false, nil
	}
	a, err = castResult(op, a, result, err, b)
	return a, true, err
}

// castResult turns the vote script's result into Cast's.
func castResult(op string, a Ask, result string, err error, b Ballot) (Ask, error) {
	if err != nil {
		return Ask{}, err
	}
	switch result {
	case "won", "voted":
		return a, nil
	case "repeat":
		return Ask{}, repeatVote(op, a, b.By)
	case "session":
		return Ask{}, sessionOnQuorum(op, a)
	default: // lost, late
		return Ask{}, conflict(op, a)
	}
}

// Cast implements Store.
func (s *MemoryStore) Cast(ctx context.Context, id string, b Ballot) (Ask, error) {
	a, _, err := s.cast("cast", id, b, Binding{})
	return a, err
}

// CastOn implements BoundCaster.
func (s *MemoryStore) CastOn(ctx context.Context, id string, b Ballot, on Binding) (Ask, bool, error) {
	if on.Channel == "" || on.MessageTS == "" {
		return Ask{}, false, nil
	}
	return s.cast("cast", id, b, on)
}

func (s *MemoryStore) cast(op, id string, b Ballot, on Binding) (Ask, bool, error) {
	b, err := checkBallot(op, id, b)
	if err != nil {
		return Ask{}, true, err
	}
	now := s.opts.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	if on.Channel != "" && (!ok || !on.binds(m.ask)) {
		return Ask{}, false, nil
	}
	a, err := s.castLocked(op, id, m, b, now)
	return a, true, err
}

// castLocked casts b on m (nil: id is unknown); s.mu is held.
func (s *MemoryStore) castLocked(op, id string, m *memoryAsk, b Ballot, now time.Time) (Ask, error) {
	switch {
	case m == nil:
		return Ask{}, notFound(op, id)
	case m.ask.Status != StatusPending:
		return Ask{}, conflict(op, m.ask)
	case !now.Before(m.ask.Deadline):
		s.end(m, Expired, "", reasonLate, now)
		return Ask{}, conflict(op, m.ask)
	}
	if need := m.ask.Needed(); need > 1 {
		person := s.opts.personOf(b)
		named, _, _ := m.ask.namedVoters()
		switch {
		case b.Outcome == ApprovedSession:
			return Ask{}, sessionOnQuorum(op, m.ask)
		case b.Outcome == Approved && (m.ask.Votes.Has(b.By) || (person != "" && named[person])):
			return Ask{}, repeatVote(op, m.ask, b.By)
		case b.Outcome == Approved:
			m.ask.Votes, m.ask.people = m.ask.Votes.with(b.By), m.ask.withPerson(b.By, person)
		}
		a := m.ask
		s.appendAudit(Event{Kind: EventVoted, AskID: a.ID, RunID: a.RunID, Tool: a.Tool, Outcome: b.Outcome,
			By: b.By, Reason: voteReason(b.Outcome, a.Counted(), need), At: now})
		if b.Outcome == Approved && a.Counted() < need {
			return a, nil
		}
	}
	m.ask.GrantTTL = b.GrantTTL
	s.end(m, b.Outcome, b.By, b.Reason, now)
	return m.ask, nil
}

var (
	_ BoundCaster = (*RedisStore)(nil)
	_ BoundCaster = (*MemoryStore)(nil)
)
